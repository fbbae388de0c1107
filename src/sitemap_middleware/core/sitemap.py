"""A configured sitemap: its sources, its routes, and the pieces that decide its answers.

:class:`Sitemap` composes them and says which document a path names and which
(source, key range) parts it lists; :mod:`.flow` runs the steps of a request
against it. The pieces, each owning one idea:

* :mod:`.views`: the site as each allowed host sees it;
* :mod:`.known_pages`: each source's pages as last read, and recent summaries;
* :mod:`.planning`: status, validators and headers of a document's answer;
* :mod:`.responses`: the answers that carry no document (400, 404, 405, 500, 503);
* :mod:`.index_document`: the ``sitemapindex``, its HTML sibling, and page navigation;
* :mod:`.generations`: how many documents are generated at once;
* :mod:`.documents`: the bytes of a streamed ``urlset`` (or its HTML table), in chunks.

No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ..output import html
from ..output.body import Body, Document, Urlset
from ..output.entry import EntryRules
from ..output.sitemapindex import IndexDocument
from ..settings import Settings
from ..sources.arguments import build_sources
from ..sources.base import ALL, MAX_KEY, AnySource, KeyRange, page_keys
from ..state.bad_rows import BadRowStats, register, tally_of
from ..state.current_pages import LivePages, keep_current
from ..state.remembered_pages import KnownPages, RecentSummaries
from . import key_file, responses, robots
from .effects import Reads
from .exchange import Headers, Part, Plan, Request, Response
from .failures import FailureLog
from .hosts import HostViews, View
from .planning import Planner
from .responses import ALLOWED_METHODS, ServerErrors
from .routing import Routes, Target
from .slots import Generations, Slot
from .validators import Summary

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
        self.routes = Routes(settings.path, self.by_name, settings.html, settings.key_path)
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

    def keep_current(
        self,
        live: LivePages,
        now: datetime | None = None,
        *,
        inline: bool = False,
        recount: bool = False,
    ) -> Reads[None]:
        """A refresh or recount of ``live`` as reads (see :func:`.live_pages.keep_current`):
        claimed by the caller in the background, or ``inline`` before an answer."""
        settings = self.settings
        moment = now or datetime.now(UTC)
        return keep_current(
            live,
            moment,
            settings.naive_timezone,
            settings.lastmod_tolerance,
            inline=inline,
            recount=recount,
        )

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

    def key_file(self, request: Request) -> Response:
        """The IndexNow key file (see :mod:`.key_file`)."""
        return key_file.answer(self.settings, request)

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

    def sitemapindex(self, plan: Plan) -> bytes:
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
            source,
            widths[source.name],
            settings.refresh_interval,
            settings.recount_interval,
            settings.exact_rows,
        )
        for source in sources
        if source.live
    }
