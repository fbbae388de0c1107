"""A site's ``robots.txt`` as RFC 9309 has crawlers read it, matched with protego.

The file is fetched once per origin (scheme, host, port), following up to five
redirects (RFC 9309 2.3.1.2). What it answers decides (2.3.1.3, 2.3.1.4):

* ``2xx``: its rules, from its first 512 KiB (RFC 9309: at least 500 KiB), matched by
  protego for each crawler (the most specific group: ``Googlebot``'s over ``*``);
* ``4xx`` (and more than five redirects): "unavailable": everything may be crawled;
* ``5xx`` or no answer: "unreachable": crawlers assume everything disallowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

from ..core.robots import MAX_BYTES
from .fetch import NetworkError, inflate_prefix
from .headers import content_codings
from .pace import Pace
from .page_signals import join

CRAWLERS = ("Googlebot", "Bingbot", "*")
"""The user agents a listed URL must be open to: the two largest crawlers, and every other."""
MAX_REDIRECTS = 5


@dataclass
class RobotsTxt:
    url: str
    status: int | None = None
    """The status of the last answer; None when there was none."""
    rules: Protego | None = None
    """The parsed rules (a 2xx); None when the status alone decides."""
    disallow_all: bool = False
    note: str = ""
    """What the answer means, for the report."""

    def disallowed(self, url: str) -> list[str]:
        """The crawlers of :data:`CRAWLERS` that may not crawl ``url``."""
        if self.disallow_all:
            return list(CRAWLERS)
        if self.rules is None:
            return []
        return [crawler for crawler in CRAWLERS if not self.rules.can_fetch(url, crawler)]


def robots_url(page: str) -> str:
    parts = urlsplit(page)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def read(url: str, status: int | None, body: bytes | None, failure: str | None = None) -> RobotsTxt:
    """What one final answer for ``robots.txt`` means (``status`` None: no answer)."""
    found = RobotsTxt(url, status)
    if status is None:
        found.disallow_all = True
        found.note = f"no answer ({failure}): crawlers assume everything disallowed"
    elif 200 <= status < 300:
        text = (body or b"")[:MAX_BYTES].decode("utf-8", "replace")
        found.rules = Protego.parse(text)
        found.note = f"{status}: rules read"
    elif 400 <= status < 500 or 300 <= status < 400:
        found.note = f"{status}: unavailable, so everything may be crawled"
    else:
        found.disallow_all = True
        found.note = f"{status}: unreachable, so crawlers assume everything disallowed"
    return found


async def fetch(pace: Pace, url: str) -> RobotsTxt:
    """Fetch ``url`` (a robots.txt) as a crawler does, through ``pace``."""
    target = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            exchange = await pace.send("GET", target, {"accept-encoding": "gzip"}, MAX_BYTES)
        except NetworkError as exc:
            return read(url, None, None, str(exc))
        location = exchange.headers.get("location")
        if 300 <= exchange.status < 400 and location:
            target = join(target, location)
            continue
        body = exchange.raw
        if "gzip" in content_codings(exchange.headers):
            body = inflate_prefix(body, MAX_BYTES)
        found = read(url, exchange.status, body)
        if target != url:
            found.note += f" (redirected to {target})"
        return found
    return RobotsTxt(
        url, note=f"more than {MAX_REDIRECTS} redirects: unavailable, so everything may be crawled"
    )
