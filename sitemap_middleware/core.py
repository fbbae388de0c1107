"""The pure core: request description in, response plan out.

No I/O here. An adapter asks :meth:`Sitemap.document_for` whether a path is
ours, collects the sources' summaries, and lets :meth:`Sitemap.respond` decide:
405, 404, 304, a bodiless HEAD, or a 200 whose body the adapter streams
through a :class:`Body`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .entry import BadRowStats, Batch, EntryRules
from .http import evaluate_preconditions, format_http_date
from .render import Renderer
from .settings import ConfigurationError, Settings
from .sources.base import ALL, AnySource, KeyRange, Source
from .sources.iterable import as_source
from .validators import Summary, last_modified, make_etag
from .xml import UrlsetWriter

logger = logging.getLogger("sitemap_middleware")

ALLOWED_METHODS = ("GET", "HEAD")
Headers = Mapping[str, Sequence[str]]


@dataclass(frozen=True, slots=True)
class Request:
    """What the core needs of a request: the method and the header lines (lowercase names)."""

    method: str
    headers: Headers = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Response:
    """A planned response. ``stream`` means: status and headers are final once the body starts."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Document:
    """One served file: its path and the (source, key range) parts it lists, in order."""

    path: str
    parts: tuple[tuple[AnySource, KeyRange], ...]


def _text(status: int, message: str, extra: Sequence[tuple[str, str]] = ()) -> Response:
    body = (message + "\n").encode("ascii")
    headers = [
        ("content-type", "text/plain; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        *extra,
    ]
    return Response(status, headers, body)


class Sitemap:
    """A configured sitemap: its sources, its settings and every decision about it."""

    def __init__(self, sources: object, settings: Settings) -> None:
        self.settings = settings
        self.site = settings.site
        self.sources = build_sources(sources)
        self.rules = EntryRules(self.site, settings.naive_timezone, settings.strict)
        self.renderer = Renderer(self.rules)
        self.root = Document(settings.path, tuple((source, ALL) for source in self.sources))
        self._fingerprint = settings.fingerprint()

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source name, counted since the process started."""
        return self.rules.stats

    @property
    def url(self) -> str:
        """The public URL of the sitemap."""
        return self.site.url_for(self.settings.path)

    def document_for(self, path: str) -> Document | None:
        """The document a route path names, or None when the path is not ours."""
        return self.root if path == self.settings.path else None

    def method_not_allowed(self, request: Request) -> Response | None:
        if request.method in ALLOWED_METHODS:
            return None
        return _text(405, "Method Not Allowed", [("allow", ", ".join(ALLOWED_METHODS))])

    def unavailable(self) -> Response:
        """The data could not be read: try again later, and publish nothing."""
        return _text(
            503,
            "Sitemap temporarily unavailable",
            [("retry-after", str(self.settings.retry_after))],
        )

    def not_found(self) -> Response:
        return _text(404, "Not Found")

    def too_large(self, error: Exception) -> Response:
        logger.error(
            "sitemap %s cannot be served: %s; lower the data or raise the limit",
            self.settings.path,
            error,
        )
        return _text(500, "Sitemap exceeds the protocol limits")

    def validators(
        self, document: Document, summaries: Sequence[Summary], now: datetime
    ) -> tuple[str, datetime | None]:
        """ETag and Last-Modified of a document, from the data and the settings only."""
        parts = [self._fingerprint, document.path]
        for (source, keys), summary in zip(document.parts, summaries, strict=True):
            parts += (source.name, source.fingerprint(), repr(keys), summary.token)
        etag = make_etag(parts)
        return etag, last_modified((s.newest for s in summaries), now)

    def respond(
        self,
        request: Request,
        document: Document,
        summaries: Sequence[Summary],
        now: datetime,
    ) -> Response:
        """The answer to a GET or HEAD, given the document's summaries and the clock."""
        if all(summary.count == 0 for summary in summaries):
            # An empty urlset fails the XSD; there is nothing to list.
            return self.not_found()
        total = sum(summary.count or 0 for summary in summaries)
        if total > self.settings.max_urls:
            return self.too_large(
                ValueError(f"{total} rows, more than max_urls={self.settings.max_urls}")
            )
        etag, modified = self.validators(document, summaries, now)
        headers = [("etag", etag)]
        if modified is not None:
            headers.append(("last-modified", format_http_date(modified)))
        if self.settings.cache_control is not None:
            headers.append(("cache-control", self.settings.cache_control))
        if self.settings.x_robots_tag is not None:
            headers.append(("x-robots-tag", self.settings.x_robots_tag))
        status = evaluate_preconditions(request.method, dict(request.headers), etag, modified)
        if status == 304:
            return Response(304, headers)
        if status == 412:
            return Response(412, headers)
        headers.insert(0, ("content-type", self.settings.content_type))
        return Response(200, headers, stream=request.method == "GET")

    def body(self) -> Body:
        return Body(self)


class Body:
    """Turns batches of raw entries into the chunks of one ``urlset``, in order.

    Rendered bytes are gathered until ``chunk_bytes`` are ready, so a chunk is
    at most ``chunk_bytes`` plus one batch; the XML declaration and the opening
    tag travel in the first chunk, the closing tag in the last.
    """

    def __init__(self, sitemap: Sitemap) -> None:
        self.renderer = sitemap.renderer
        self.writer = UrlsetWriter(sitemap.settings.max_urls, sitemap.settings.max_bytes)
        self.chunk_bytes = sitemap.settings.chunk_bytes
        self._pending = [self.writer.open()]
        self._size = 0

    def feed(self, source: str, batch: Batch) -> bytes:
        """A chunk once enough is gathered, else ``b""``; bad rows follow the bad-row rule."""
        data = self.writer.write(self.renderer.elements(source, batch))
        if data:
            self._pending.append(data)
            self._size += len(data)
        if self._size < self.chunk_bytes:
            return b""
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk

    def close(self) -> bytes:
        """The last chunk: whatever is gathered and the closing tag."""
        self._pending.append(self.writer.close())
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk

    @property
    def urls(self) -> int:
        return self.writer.urls


def build_sources(value: object) -> list[AnySource]:
    """Sources from what a user passes: a source, a list of sources, a name -> source mapping,
    or one list of entries/URLs or (async) generator function (named ``urls``)."""
    if isinstance(value, Source):
        sources = [value]
    elif isinstance(value, Mapping):
        sources = []
        for name, item in value.items():
            source = as_source(item, name)
            if source.name != name:
                raise ConfigurationError(
                    f"sources: the source under {name!r} is named {source.name!r}; use one name"
                )
            sources.append(source)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, Source) for v in value):
        sources = list(value)
    else:
        try:
            sources = [as_source(value, "urls")]
        except TypeError as exc:
            raise ConfigurationError(f"sources: {exc}") from None
    if not sources:
        raise ConfigurationError("sources: give at least one source")
    names = [source.name for source in sources]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(f"sources: names must be unique; repeated: {duplicates}")
    return sources  # type: ignore[return-value]
