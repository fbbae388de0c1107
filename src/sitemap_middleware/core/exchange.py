"""The core's request and response: what the adapters translate to and from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..sources.base import AnySource, KeyRange
from .hosts import SiteForHost
from .routing import Target

Headers = Mapping[str, Sequence[str]]
Part = tuple[AnySource, KeyRange]
"""One (source, key range) a document lists."""


@dataclass(frozen=True, slots=True)
class Request:
    """What the core needs of a request: the method and the header lines (lowercase names)."""

    method: str
    headers: Headers = field(default_factory=dict)
    http_version: str = "1.1"

    @property
    def host(self) -> str | None:
        """The ``Host`` field (HTTP/2's ``:authority`` arrives as ``host`` too), if sent once."""
        lines = self.headers.get("host")
        return lines[0] if lines and len(lines) == 1 else None


@dataclass(frozen=True, slots=True)
class Response:
    """A complete answer: status, header lines and body (a HEAD's is sent without it)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Plan:
    """A 200 whose body is still to be made: a ``urlset`` of ``parts`` streamed, or with
    ``sitemapindex`` a ``sitemapindex`` built whole; ``gzip`` says to compress it. For a HEAD
    (``stream`` false) only its status and headers are sent."""

    status: int
    headers: list[tuple[str, str]]
    stream: bool = False
    sitemapindex: bool = False
    parts: tuple[Part, ...] = ()
    gzip: bool = False
    host_site: SiteForHost | None = None
    html: bool = False
    target: Target | None = None
    news_cutoff: datetime | None = None
    listed_until_values: tuple[datetime | None, ...] = ()
    """Per part, ``listed_until`` its summary was read under: later lastmods are not served."""

    def response(self, body: bytes = b"", extra: Sequence[tuple[str, str]] = ()) -> Response:
        """The answer with this status and these headers (and ``extra`` ones)."""
        return Response(self.status, [*self.headers, *extra], body)
