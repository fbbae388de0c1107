"""A configured sitemap: its sources, its routes, and the pieces that decide its answers.

:class:`Sitemap` composes them and says which document a path names and which
(source, key range) parts it lists; :mod:`.flow` runs the steps of a request
against it. The pieces, each owning one idea:

* :mod:`.views`: the site as each allowed host sees it;
* :mod:`.known_pages`: each source's pages as last read, and recent summaries;
* :mod:`.planning`: status, validators and headers of a document's answer;
* :mod:`.responses`: the answers that carry no document (400, 404, 405, 500, 503);
* :mod:`.index_document`: the ``sitemapindex``, its HTML sibling, and page navigation;
* :mod:`.generations`: how many documents are generated at once.

The bodies of streamed documents are produced below: a :class:`Urlset` (or an
HTML table) written through a :class:`Body`. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from . import html, responses, robots
from .duplicates import SeenLocs
from .encoding import GzipStream
from .entry import Batch, EntryRules
from .extensions import NAMESPACES, Shape, urlset_open
from .failures import FailureLog
from .generations import Generations, Slot
from .index_document import IndexDocument
from .known_pages import KnownPages, RecentSummaries
from .live_pages import LivePages
from .messages import Headers, Part, Plan, Request, Response
from .planning import Planner
from .render import Renderer
from .responses import ALLOWED_METHODS, ServerErrors
from .routing import Routes, Target
from .settings import Settings
from .sources.arguments import build_sources
from .sources.base import ALL, MAX_KEY, AnySource, KeyRange, page_keys
from .stats import BadRowStats, register, tally_of
from .validators import Summary
from .views import HostViews, View
from .xml import UrlsetWriter

__all__ = [
    "ALLOWED_METHODS",
    "Body",
    "Document",
    "Generations",
    "Headers",
    "Part",
    "Plan",
    "Request",
    "Response",
    "Sitemap",
    "Slot",
    "Urlset",
    "View",
    "build_sources",
]


class Sitemap:
    """A configured sitemap: its sources, its settings, its routes, and the pieces that
    decide about it (see the module's docstring)."""

    def __init__(self, sources: object, settings: Settings) -> None:
        self.settings = settings
        self.site = settings.site
        self.sources = build_sources(sources)
        self.by_name = {source.name: source for source in self.sources}
        self.routes = Routes(settings.path, self.by_name, settings.html)
        # Rows per page of each source: its worst-case entry must fit the limits.
        self.widths = {
            source.name: source.shape.rows_per_page(
                settings.max_urls, settings.max_bytes, settings.max_loc_length
            )
            for source in self.sources
        }
        # Bad rows are counted on the source objects, where the application can read them.
        tallies = {source.name: tally_of(source) for source in self.sources}
        self.rules = EntryRules(self.site, settings.naive_timezone, settings.strict, tallies)
        register(self, self.url, tallies)
        self.views = HostViews(settings, self.rules, self.widths)
        self.view = self.views.default
        self.generations = Generations(settings.max_generations)
        self.failures = FailureLog()
        self.errors = ServerErrors(settings)
        # Pages kept current between recounts, for the sources that can be (live_pages).
        self.live = _live_pages(self.sources, self.widths, settings)
        self.known = KnownPages(self.widths)
        self.recent = RecentSummaries(settings.summary_ttl)
        self.planner = Planner(settings, self.sources, self.widths)
        self.index_document = IndexDocument(settings, self.routes, self.by_name, self.known)

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source name, counted since the process started (a snapshot)."""
        return self.rules.stats

    @property
    def url(self) -> str:
        """The public URL of the root sitemap."""
        return self.site.url_for(self.settings.path)

    def width(self, source: AnySource) -> int:
        """Rows per page of a source."""
        return self.widths[source.name]

    def route(self, path: str) -> Target | None:
        """The document a route path names, or None when the path is not the sitemap's."""
        return self.routes.match(path)

    def path_of(self, target: Target) -> str:
        """The path of the document ``target`` names, as logs name it."""
        return self.routes.path_of(target) if target.valid else self.settings.path

    def parts(self, target: Target, cut: bool = False) -> tuple[Part, ...] | None:
        """The (source, key range) parts a target lists; None when it names nothing.

        ``cut``: the page's source is cut (its data says so): its pages were just read.
        """
        if not target.valid:
            return None
        if target.source is None:
            return tuple((source, ALL) for source in self.sources)
        source = self.by_name.get(target.source)
        if source is None or target.page is None:
            return None
        if not source.pageable:  # served whole, as page 1
            return ((source, ALL),) if target.page == 1 else None
        pages = self.known.pages(source)
        if not source.fixed_ranges or (cut and pages and pages[0].last is not None):
            # Read just before (see cut_source and CutPages).
            if target.page > len(pages):
                return None
            after = pages[target.page - 2].last if target.page > 1 else None
            return ((source, KeyRange(after, pages[target.page - 1].last)),)
        keys = page_keys(target.page, self.width(source))
        if keys.after is not None and keys.after[0] >= MAX_KEY:
            return None  # past the largest 64-bit key: no row can be there
        return ((source, keys),)

    def cut_source(self, target: Target) -> AnySource | None:
        """The source whose cuts (pages) must be current before ``target`` can be planned."""
        if not target.valid or target.source is None or target.page is None:
            return None
        source = self.by_name.get(target.source)
        if source is None or not source.pageable or source.fixed_ranges:
            return None
        return source

    def view_for(self, request: Request) -> View | None:
        """The view a request gets (see :meth:`.views.HostViews.view_for`); None: a 400."""
        return self.views.view_for(request.host, "host" in request.headers)

    def wants_robots(self, path: str, method: str) -> bool:
        """Whether this request is for the robots.txt that the sitemap is added to."""
        return self.settings.robots_txt and path == robots.PATH and method in ALLOWED_METHODS

    def robots(
        self, request: Request, status: int, headers: list[tuple[str, str]], body: bytes
    ) -> Response | None:
        """The robots.txt for the app's complete answer, or None to pass that through."""
        view = self.view_for(request)
        if view is None:
            return None
        url = view.site.url_for(self.settings.path)
        result = robots.answer(
            request.method,
            dict(request.headers),
            url,
            status,
            headers,
            body,
            self.settings.cache_control,
        )
        return None if result is None else Response(*result)

    def respond(
        self,
        request: Request,
        target: Target,
        parts: Sequence[Part],
        summaries: Sequence[Summary],
        now: datetime,
        view: View | None = None,
    ) -> Response | Plan:
        """The answer to a GET or HEAD of a target (see :meth:`.planning.Planner.respond`)."""
        return self.planner.respond(request, target, parts, summaries, now, view or self.view)

    def index(self, plan: Plan) -> bytes:
        """The whole ``sitemapindex`` (or its HTML sibling) that ``plan`` calls for."""
        return self.index_document.render(plan, (plan.view or self.view).site)

    def body(self, plan: Plan) -> Body:
        """The body of a streamed document: a ``urlset``, or its HTML sibling."""
        view = plan.view or self.view
        document: Document
        horizons = {
            source.name: horizon
            for (source, _), horizon in zip(plan.parts, plan.horizons, strict=False)
        }
        if plan.html:
            heading = self.index_document.heading(plan.target, view.site)
            document = html.Table(view.rules, heading, horizons)
        else:
            shapes = {source.name: source.shape for source, _ in plan.parts}
            document = Urlset(view.renderer, self.settings, shapes, plan.news_cutoff, horizons)
        return Body(document, self.settings, plan.gzip)

    # The answers without a document, as the flow gives them.

    def method_not_allowed(self, request: Request) -> Response | None:
        return responses.method_not_allowed(request)

    def bad_host(self) -> Response:
        return responses.bad_host()

    def not_found(self) -> Response:
        return responses.not_found()

    def unavailable(self) -> Response:
        """The data could not be read: try again later, and publish nothing."""
        return self.errors.unavailable()

    def busy(self, path: str | None = None) -> Response:
        """Too many documents are being generated at once: try again shortly."""
        return self.errors.busy(path or self.settings.path, self.generations.running)

    def too_large(self, error: Exception, path: str | None = None) -> Response:
        """A document past the protocol's limits, or a source that cannot be split: a 500."""
        return self.errors.too_large(error, path or self.settings.path)


def _live_pages(
    sources: list[AnySource], widths: Mapping[str, int], settings: Settings
) -> dict[str, LivePages]:
    """Pages kept current between recounts (``freshness="incremental"``), by source name."""
    if settings.freshness != "incremental":
        return {}
    return {
        source.name: LivePages(
            source, widths[source.name], settings.refresh_interval, settings.recount_interval
        )
        for source in sources
        if source.live
    }


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
        horizons: Mapping[str, datetime | None] | None = None,
    ) -> None:
        self.renderer = renderer
        self.writer = UrlsetWriter(settings.max_urls, settings.max_bytes)
        self.shapes = shapes
        self.news_cutoff = news_cutoff
        self.seen = SeenLocs(renderer.rules.site)
        self.horizons = horizons or {}

    @property
    def urls(self) -> int:
        return self.writer.urls

    def open(self) -> bytes:
        prefixes = {prefix for shape in self.shapes.values() for prefix in shape.prefixes}
        ordered = [prefix for prefix in NAMESPACES if prefix in prefixes]
        return self.writer.open(urlset_open(ordered))

    def write(self, source: str, batch: Batch) -> bytes:
        extras = batch.extras
        horizon = self.horizons.get(source)
        if extras is not None and extras.count(None) != len(extras):
            elements = self.renderer.extended(
                source, batch, self.shapes[source], self.news_cutoff, horizon, self.seen
            )
        else:
            elements = self.renderer.elements(source, batch, horizon, self.seen)
        return self.writer.write(elements)

    def close(self) -> bytes:
        return self.writer.close()


class Body:
    """Turns batches of raw entries into the chunks of one document, in order.

    Rendered bytes are gathered until ``chunk_bytes`` are ready, so a chunk is
    at most ``chunk_bytes`` plus one batch; the document's opening travels in
    the first chunk, its end in the last. With ``gzip`` every chunk is
    compressed (and sync-flushed) on its way out.
    """

    def __init__(self, document: Document, settings: Settings, gzip: bool = False) -> None:
        self.document = document
        self.chunk_bytes = settings.chunk_bytes
        self._gzip = GzipStream(settings.gzip_level) if gzip else None
        self._pending = [document.open()]
        self._size = 0

    def feed(self, source: str, batch: Batch) -> bytes:
        """A chunk once enough is gathered, else ``b""``; bad rows follow the bad-row rule."""
        data = self.document.write(source, batch)
        if data:
            self._pending.append(data)
            self._size += len(data)
        if self._size < self.chunk_bytes:
            return b""
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk if self._gzip is None else self._gzip.chunk(chunk)

    def close(self) -> bytes:
        """The last chunk: whatever is gathered and the document's end."""
        self._pending.append(self.document.close())
        chunk = b"".join(self._pending)
        self._pending, self._size = [], 0
        return chunk if self._gzip is None else self._gzip.finish(chunk)

    @property
    def urls(self) -> int:
        return self.document.urls
