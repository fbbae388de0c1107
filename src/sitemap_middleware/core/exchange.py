"""The core's request and response: what the adapters translate to and from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeAlias

from ..sources.base import AnySource, KeyRange
from ..state.robots_rules import Rules
from .hosts import SiteForHost
from .routing import DocumentTarget

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

    @property
    def host_sent(self) -> bool:
        """Whether the request has a ``Host`` field at all (an HTTP/1.0 one may have none)."""
        return "host" in self.headers


@dataclass(frozen=True, slots=True)
class Response:
    """A complete answer: status, header lines and body (a HEAD's is sent without it)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Head:
    """The status line and header fields of a 200 whose body is still to be made."""

    status: int
    headers: list[tuple[str, str]]

    def response(self, body: bytes = b"", extra: Sequence[tuple[str, str]] = ()) -> Response:
        """The answer with this status and these headers (and ``extra`` ones)."""
        return Response(self.status, [*self.headers, *extra], body)


@dataclass(frozen=True, slots=True)
class UrlsetPlan:
    """A ``urlset`` streamed: the rows of ``parts`` as the host's renderer writes them."""

    head: Head
    target: DocumentTarget
    parts: tuple[Part, ...]
    host_site: SiteForHost
    gzip: bool
    """Whether the body is compressed (a ``.gz`` file, or gzip content coding)."""
    news_cutoff: datetime | None
    """News older than this lose their ``news:news`` (None: the parts have no news)."""
    listed_until_values: tuple[datetime | None, ...]
    """Per part, ``listed_until`` its summary was read under: later lastmods are not served."""
    robots: Rules | None = None
    """With ``robots_filter``: the rules its ETag was made with, which its body follows."""


@dataclass(frozen=True, slots=True)
class TablePlan:
    """A urlset's HTML sibling streamed: the rows of ``parts`` as a table, headed by the
    links to the target's neighbours."""

    head: Head
    target: DocumentTarget
    parts: tuple[Part, ...]
    host_site: SiteForHost
    gzip: bool
    listed_until_values: tuple[datetime | None, ...]
    robots: Rules | None = None
    """As :attr:`UrlsetPlan.robots`."""


@dataclass(frozen=True, slots=True)
class IndexPlan:
    """A ``sitemapindex`` (with ``html``: its HTML sibling) built whole, from the pages of
    the sources of ``parts``."""

    head: Head
    parts: tuple[Part, ...]
    host_site: SiteForHost
    gzip: bool
    html: bool


StreamedPlan: TypeAlias = UrlsetPlan | TablePlan
"""A document streamed in chunks."""
DocumentPlan: TypeAlias = UrlsetPlan | TablePlan | IndexPlan
"""What a GET of a document makes after its head."""


@dataclass(frozen=True, slots=True)
class HeadPlan:
    """A HEAD: ``document``'s head alone, after the reads a GET makes before it (an index
    reads its pages, so that HEAD and GET get one status)."""

    document: DocumentPlan

    @property
    def head(self) -> Head:
        """The head a GET of the document sends."""
        return self.document.head


Plan: TypeAlias = UrlsetPlan | TablePlan | IndexPlan | HeadPlan
"""A 200 whose body is still to be made (or, for a HEAD, not to be sent)."""
