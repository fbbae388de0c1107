"""``/robots.txt`` announces the sitemap (sitemaps.org: "Sitemap: <sitemap_location>").

The application's own robots.txt is kept: the middleware asks the app for it,
appends ``Sitemap: <absolute root sitemap URL>`` unless the file already has
that line, and corrects ``Content-Length`` and the validators. When the app
has none (404/410) a minimal one is served that allows everything. Any other
answer (a redirect, a 5xx that tells crawlers to hold off, a compressed body)
passes through untouched.

Pure functions, and :class:`Held`, the rule for holding the app's answer as it comes,
without I/O: the adapters ask the app, hold its answer in their own form and send the
result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Generic, TypeVar

from .http import evaluate_preconditions, parse_http_date
from .validators import make_etag

PATH = "/robots.txt"
MAX_BYTES = 512 * 1024
"""A larger robots.txt passes through unchanged (Google reads its first 500 KiB only)."""

_SITEMAP_LINE = re.compile(rb"^[ \t]*sitemap[ \t]*:[ \t]*(\S+)", re.IGNORECASE | re.MULTILINE)
_REPLACED = frozenset({"content-length", "etag", "transfer-encoding", "content-type"})

Headers = list[tuple[str, str]]
T = TypeVar("T")


def lists(body: bytes, url: str) -> bool:
    """Whether a robots.txt already has a ``Sitemap:`` line for ``url``."""
    wanted = url.encode("ascii")
    return any(match.group(1) == wanted for match in _SITEMAP_LINE.finditer(body))


def with_sitemap(body: bytes, url: str) -> bytes:
    """``body`` with the sitemap line appended once (after a line break of its own style)."""
    if lists(body, url):
        return body
    newline = b"\r\n" if b"\r\n" in body else b"\n"
    if body and not body.endswith((b"\n", b"\r")):
        body += newline
    if body:
        body += newline  # a blank line: the Sitemap line belongs to no user-agent group
    return body + b"Sitemap: " + url.encode("ascii") + newline


def minimal(url: str) -> bytes:
    """A robots.txt for an app that has none: everything allowed, and the sitemap."""
    return b"User-agent: *\nDisallow:\n\nSitemap: " + url.encode("ascii") + b"\n"


def robots_response(
    method: str,
    request_headers: dict[str, Sequence[str]],
    url: str,
    status: int,
    headers: Headers,
    body: bytes,
    cache_control: str | None,
) -> tuple[int, Headers, bytes] | None:
    """The robots.txt to send for the app's (complete, uncompressed) answer, or None to pass
    the app's answer through as it is. Conditional requests are evaluated here, against the
    validators of what is actually sent."""
    names = {name.lower(): value for name, value in headers}
    if status in (404, 410):
        content = minimal(url)
        kept: Headers = []
        if cache_control is not None:
            kept.append(("cache-control", cache_control))
        content_type = "text/plain; charset=utf-8"
        last_modified = None
    elif status == 200:
        if names.get("content-encoding", "identity").strip().lower() != "identity":
            return None
        content = with_sitemap(body, url)
        kept = [(name, value) for name, value in headers if name.lower() not in _REPLACED]
        content_type = names.get("content-type", "text/plain; charset=utf-8")
        modified = names.get("last-modified")
        last_modified = parse_http_date(modified) if modified else None
        if last_modified is None:
            kept = [(name, value) for name, value in kept if name.lower() != "last-modified"]
    else:
        return None
    etag = make_etag(["robots.txt", content.decode("latin-1")])
    response_headers = [("content-type", content_type), ("etag", etag), *kept]
    outcome = evaluate_preconditions(method, request_headers, etag, last_modified)
    if outcome in (304, 412):
        return outcome, response_headers, b""
    response_headers.insert(1, ("content-length", str(len(content))))
    return 200, response_headers, b"" if method == "HEAD" else content


NOT_FORWARDED = frozenset(
    {
        "if-none-match",
        "if-modified-since",
        "if-match",
        "if-unmodified-since",
        "if-range",
        "range",
        "accept-encoding",
    }
)
"""Request fields kept from the app: the file sent is not the app's, so neither are its
validators, ranges or codings."""


def forwarded(name: str) -> bool:
    """Whether a request field goes to the app (any case)."""
    return name.lower() not in NOT_FORWARDED


def forwarded_environ(key: str) -> bool:
    """:func:`forwarded` for a WSGI environ key (``HTTP_IF_NONE_MATCH``; other keys go)."""
    return not key.startswith("HTTP_") or forwarded(key[5:].replace("_", "-"))


class Held(Generic[T]):
    """The app's answer to the robots.txt GET as it comes, in the adapter's own form ``T``
    (ASGI messages, body chunks): held until it is complete, then rewritten or passed on
    as it is; once its body grows past :data:`MAX_BYTES`, passed on as it is (what is held,
    then the rest as it comes). A HEAD's answer passes on without its body (the app was
    asked a GET)."""

    __slots__ = ("_body", "_items", "head", "passing", "size")

    def __init__(self, method: str) -> None:
        self.head = method == "HEAD"
        self._items: list[T] = []
        self._body: list[bytes] = []
        self.size = 0
        self.passing = False
        """Past the bound: everything passes on as it is."""

    def hold(self, item: T, body: bytes = b"") -> bool:
        """Hold what came (``body``: its body bytes); True when it makes the answer too
        large to rewrite: the adapter then passes on :meth:`release` and what follows."""
        self._items.append(item)
        if body:
            self._body.append(body)
            self.size += len(body)
        self.passing = self.size > MAX_BYTES
        return self.passing

    def release(self) -> list[T]:
        """What is held, in order, to pass on (held no more)."""
        items, self._items = self._items, []
        return items

    @property
    def items(self) -> list[T]:
        return self._items

    @property
    def body(self) -> bytes:
        """The body held."""
        return b"".join(self._body)

    def passed(self, body: bytes) -> bytes:
        """Body bytes as they pass on: none for a HEAD."""
        return b"" if self.head else body
