"""``robots_filter``: the rules of the application's own ``robots.txt``, kept between requests.

The adapters ask the application for ``/robots.txt`` when :meth:`RobotsRules.due` says so
and hand its answer to :meth:`RobotsRules.read`; a plan takes :attr:`RobotsRules.current`,
whose :attr:`Rules.digest` goes into the document's ETag and whose :meth:`Rules.allowed`
decides which locs its body lists (:mod:`..output.robots_gate`). What an answer means
(RFC 9309 2.3.1):

* ``2xx``: its rules, from its first :data:`MAX_BYTES`, matched for ``User-agent: *``;
* ``4xx``: no file: everything allowed;
* anything else (``5xx``, a redirect, no answer): the last rules read are kept (none read
  yet: nothing is left out), and the answer is logged.

Matching is protego's, imported when the first sitemap with the setting is built (a
missing one is a :class:`~sitemap_middleware.MissingExtra` naming the setting and the
extra): the core itself imports no third-party library.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..errors import MissingExtra

logger = logging.getLogger("sitemap_middleware")

PATH = "/robots.txt"
MAX_BYTES = 512 * 1024
"""Bytes of the file read (RFC 9309: at least 500 KiB); the rest is ignored."""
AGENT = "*"
"""The group whose rules decide: every crawler's."""

_RULE_LINE = re.compile(r"^[ \t]*(user-agent|allow|disallow)[ \t]*:[ \t]*([^#\r\n]*)", re.I | re.M)


class Matcher(Protocol):
    """Parsed rules: whether a crawler may fetch a URL."""

    def can_fetch(self, url: str, user_agent: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules one document is made with: its ETag carries ``digest``."""

    matcher: Matcher | None
    """None: everything allowed."""
    digest: str
    """What the rules are, for the validators: equal rules give equal digests."""

    def allowed(self, url: str) -> bool:
        return self.matcher is None or bool(self.matcher.can_fetch(url, AGENT))


ALLOW_ALL = Rules(None, "allow-all")


def digest_of(text: str) -> str:
    """A digest of the rule lines (``User-agent``, ``Allow``, ``Disallow``) in order:
    comments, blank lines, ``Sitemap`` and other lines change nothing listed, so they do not
    move the validators."""
    lines = "\n".join(
        f"{field.lower()}:{value.strip()}" for field, value in _RULE_LINE.findall(text)
    )
    return hashlib.blake2b(lines.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def protego_parser() -> Callable[[str], Matcher]:
    """protego's parser; a :class:`MissingExtra` naming the setting when it is not there."""
    try:
        from protego import Protego
    except ImportError as exc:
        raise MissingExtra.of(exc, "robots_filter", "robots") from None

    def parse(text: str) -> Matcher:
        return Protego.parse(text)

    return parse


class RobotsRules:
    """The rules of one sitemap's site, read again every ``ttl`` seconds (on ``clock``)."""

    def __init__(
        self,
        ttl: float,
        parse: Callable[[str], Matcher] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self._parse = parse or protego_parser()
        self.clock = clock
        """Seconds, monotonic: ``ttl`` is counted on it (a test drives its own)."""
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._reading = False
        self.current = ALLOW_ALL
        """The rules to plan with now."""
        self.taken = False
        """Whether an answer that decides (``2xx``, ``4xx``) was read."""
        self.status: int | None = None
        """The status of the last answer (None: no answer yet, or none at all)."""

    def due(self) -> bool:
        """Whether the caller should ask for the file now. Before the first answer every
        request asks (none may list what the rules disallow); after it, one caller per
        ``ttl`` does, while the others go on with the rules they have."""
        with self._lock:
            if self._read_at is None:
                return True
            if self._reading or self.clock() - self._read_at < self.ttl:
                return False
            self._reading = True
            return True

    def read(self, status: int | None, body: bytes = b"", failure: str = "") -> Rules:
        """Take the application's answer (``status`` None: it gave none, ``failure`` says
        why); returns the rules now current."""
        rules: Rules | None
        if status is not None and 200 <= status < 300:
            text = body[:MAX_BYTES].decode("utf-8", "replace")
            rules = Rules(self._parse(text), digest_of(text))
        elif status is not None and 400 <= status < 500:
            rules = ALLOW_ALL
        else:
            rules = None
        with self._lock:
            self._read_at = self.clock()
            self._reading = False
            self.status = status
            if rules is not None:
                self.current, self.taken = rules, True
            taken = self.taken
        if rules is None:
            what = f"answered {status}" if status is not None else f"failed ({failure})"
            logger.warning(
                "robots_filter: the application's %s %s; %s",
                PATH,
                what,
                "the last rules read are kept" if taken else "none read yet: no loc is left out",
            )
        return self.current
