"""The bytes of one streamed document: a ``urlset`` (or its HTML sibling) gathered into
chunks, gzip-coded on the way out when asked."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from ..settings import Settings
from .duplicates import SeenLocs
from .entry import Batch
from .extensions import NAMESPACES, Shape, urlset_open
from .fast_path import Renderer
from .gzip import GzipStream
from .robots_gate import RobotsGate
from .xml import UrlsetWriter


class Document(Protocol):
    """The bytes of one streamed document: its opening, its rows batch by batch, its end."""

    @property
    def urls(self) -> int: ...

    def open(self) -> bytes: ...

    def write(self, source: str, batch: Batch) -> bytes: ...

    def close(self) -> bytes: ...


class Urlset:
    """A ``urlset``: rendered ``<url>`` elements, within the protocol's limits.

    It declares the namespaces its sources' shapes can use; rows with extension
    data take the full rules (``news_cutoff``: news published before it are old).
    It lists no loc twice: it remembers the locs it listed (at most ``max_urls``).
    """

    def __init__(
        self,
        renderer: Renderer,
        settings: Settings,
        shapes: Mapping[str, Shape],
        news_cutoff: datetime | None = None,
        listed_until_values: Mapping[str, datetime | None] | None = None,
    ) -> None:
        self.renderer = renderer
        self.writer = UrlsetWriter(settings.limits.max_urls, settings.limits.max_bytes)
        self.shapes = shapes
        self.news_cutoff = news_cutoff
        self.seen = SeenLocs(renderer.rules.site)
        self.listed_until_values = listed_until_values or {}

    @property
    def urls(self) -> int:
        return self.writer.urls

    def open(self) -> bytes:
        prefixes = {prefix for shape in self.shapes.values() for prefix in shape.prefixes}
        ordered = [prefix for prefix in NAMESPACES if prefix in prefixes]
        return self.writer.open(urlset_open(ordered))

    def write(self, source: str, batch: Batch) -> bytes:
        extras = batch.extras
        listed_until = self.listed_until_values.get(source)
        if extras is not None and extras.count(None) != len(extras):
            elements = self.renderer.extended(
                source, batch, self.shapes[source], self.news_cutoff, listed_until, self.seen
            )
        else:
            elements = self.renderer.elements(source, batch, listed_until, self.seen)
        return self.writer.write(elements)

    def close(self) -> bytes:
        return self.writer.close()


class Body:
    """Turns batches of raw entries into the chunks of one document, in order.

    Rendered bytes are gathered until ``chunk_bytes`` are ready, so a chunk is
    at most ``chunk_bytes`` plus one batch; the document's opening travels in
    the first chunk, its end in the last. With ``gzip`` every chunk is
    compressed (and sync-flushed) on its way out, here or, once
    :meth:`defer_gzip` is called, by the caller.
    """

    def __init__(
        self,
        document: Document,
        settings: Settings,
        gzip: bool = False,
        gate: RobotsGate | None = None,
    ) -> None:
        """``gate``: leaves out the rows the site's ``robots.txt`` disallows
        (``robots_filter``)."""
        self.document = document
        self._gate = gate
        self.chunk_bytes = settings.limits.chunk_bytes
        self._gzip = GzipStream(settings.gzip_files.level) if gzip else None
        self._deferred = False
        self._pending = [document.open()]
        self._size = 0

    def defer_gzip(self) -> Callable[[bytes], bytes] | None:
        """Leave the compression of the chunks :meth:`feed` returns to the caller: they
        come uncompressed from now on, and the caller passes every one through the
        function returned, in order, before :meth:`close` (which compresses the rest
        itself). None for a body that is not gzip-coded.

        zlib lets other threads run while it compresses, so the caller can compress a
        chunk in a thread of its own while the next one is rendered.
        """
        if self._gzip is None:
            return None
        self._deferred = True
        return self._gzip.chunk

    def feed(self, source: str, batch: Batch) -> bytes:
        """A chunk once enough is gathered, else ``b""``; bad rows follow the bad-row rule."""
        if self._gate is not None:
            batch = self._gate.admit(source, batch)
        data = self.document.write(source, batch)
        if data:
            self._pending.append(data)
            self._size += len(data)
        if self._size < self.chunk_bytes:
            return b""
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk if self._gzip is None or self._deferred else self._gzip.chunk(chunk)

    def close(self) -> bytes:
        """The last chunk: whatever is gathered and the document's end."""
        self._pending.append(self.document.close())
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk if self._gzip is None else self._gzip.finish(chunk)

    @property
    def urls(self) -> int:
        return self.document.urls
