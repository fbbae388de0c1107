"""A configured sitemap: its sources, its routes, and the pieces that decide its answers.

:class:`Sitemap` composes them and says which document a path names and which
(source, key range) parts it lists; :mod:`.handler` runs the steps of a request
against it. The pieces, each owning one idea:

* :mod:`.hosts`: the site as each allowed host sees it;
* :mod:`..state.remembered_pages`: each source's pages as last read, and recent summaries;
* :mod:`.planning`: status, validators and headers of a document's answer;
* :mod:`.responses`: the answers that carry no document (400, 404, 405, 500, 503);
* :mod:`.index_document`: the ``sitemapindex``, its HTML sibling, and page navigation;
* :mod:`.slots`: how many documents are generated at once;
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
from ..state.current_pages import CurrentPages, keep_current
from ..state.remembered_pages import RememberedPages, RememberedSummaries
from . import key_file, responses, robots
from .dates import AsOf
from .effects import Effects
from .exchange import Headers, Part, Plan, Request, Response
from .failures import FailureLog
from .hosts import Hosts, SiteForHost
from .planning import Planner
from .responses import ALLOWED_METHODS, ServerErrors
from .routing import Routes, Target
from .slots import Slot, Slots
from .validators import Summary

__all__ = [
    "ALLOWED_METHODS",
    "Body",
    "Document",
    "Headers",
    "Part",
    "Plan",
    "Request",
    "Response",
    "SiteForHost",
    "Sitemap",
    "Slot",
    "Slots",
    "Urlset",
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
        self.page_sizes = {
            source.name: source.shape.page_size(
                settings.limits.max_urls, settings.limits.max_bytes, settings.limits.max_loc_length
            )
            for source in self.sources
        }
        # Bad rows are counted on the source objects, where the application can read them.
        tallies = {source.name: tally_of(source) for source in self.sources}
        self.rules = EntryRules(
            self.site, settings.lastmods.naive_timezone, settings.strict, tallies
        )
        register(self, self.url, tallies)
        self.hosts = Hosts(settings, self.rules, self.page_sizes)
        self.host_site = self.hosts.default
        self.slots = Slots(settings.load.max_generations)
        self.failures = FailureLog()
        self.errors = ServerErrors(settings)
        # Pages kept current between recounts, for the sources that can be (current_pages).
        self.live = _live_pages(self.sources, self.page_sizes, settings)
        self.known = RememberedPages(self.page_sizes)
        self.recent = RememberedSummaries(settings.freshness.summary_ttl)
        self.planner = Planner(settings, self.sources, self.page_sizes)
        self.index_document = IndexDocument(settings, self.routes, self.by_name, self.known)

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source name, counted since the process started (a snapshot)."""
        return self.rules.stats

    def keep_current(
        self,
        live: CurrentPages,
        now: datetime | None = None,
        *,
        inline: bool = False,
        recount: bool = False,
    ) -> Effects[None]:
        """A refresh or recount of ``live`` as reads (see :func:`keep_current`):
        claimed by the caller in the background, or ``inline`` before an answer."""
        moment = now or datetime.now(UTC)
        return keep_current(
            live,
            moment,
            self.as_of(moment),
            inline=inline,
            recount=recount,
        )

    def as_of(self, now: datetime) -> AsOf:
        """How a request at ``now`` reads lastmods (the settings' zone and tolerance)."""
        return AsOf.at(now, self.settings.lastmods.naive_timezone, self.settings.lastmods.tolerance)

    @property
    def url(self) -> str:
        """The public URL of the root sitemap."""
        return self.site.url_for(self.settings.path)

    def page_size(self, source: AnySource) -> int:
        """Rows per page of a source."""
        return self.page_sizes[source.name]

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
        keys = page_keys(target.page, self.page_size(source))
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

    def site_for(self, request: Request) -> SiteForHost | None:
        """The view a request gets (see :meth:`.hosts.Hosts.site_for`); None: a 400."""
        return self.hosts.site_for(request.host, "host" in request.headers)

    def key_file(self, request: Request) -> Response:
        """The IndexNow key file (see :mod:`.key_file`)."""
        return key_file.key_file_response(self.settings, request)

    def wants_robots(self, path: str, method: str) -> bool:
        """Whether this request is for the robots.txt that the sitemap is added to."""
        return self.settings.robots_txt and path == robots.PATH and method in ALLOWED_METHODS

    def robots(
        self, request: Request, status: int, headers: list[tuple[str, str]], body: bytes
    ) -> Response | None:
        """The robots.txt for the app's complete answer, or None to pass that through."""
        host_site = self.site_for(request)
        if host_site is None:
            return None
        url = host_site.site.url_for(self.settings.path)
        result = robots.robots_response(
            request.method,
            dict(request.headers),
            url,
            status,
            headers,
            body,
            self.settings.headers.cache_control,
        )
        return None if result is None else Response(*result)

    def respond(
        self,
        request: Request,
        target: Target,
        parts: Sequence[Part],
        summaries: Sequence[Summary],
        now: datetime,
        host_site: SiteForHost | None = None,
    ) -> Response | Plan:
        """The answer to a GET or HEAD of a target (see :meth:`.planning.Planner.respond`)."""
        return self.planner.respond(
            request, target, parts, summaries, now, host_site or self.host_site
        )

    def sitemapindex(self, plan: Plan) -> bytes:
        """The whole ``sitemapindex`` (or its HTML sibling) that ``plan`` calls for."""
        return self.index_document.render(plan, (plan.host_site or self.host_site).site)

    def body(self, plan: Plan) -> Body:
        """The body of a streamed document: a ``urlset``, or its HTML sibling."""
        host_site = plan.host_site or self.host_site
        document: Document
        listed_until_values = {
            source.name: listed_until
            for (source, _), listed_until in zip(plan.parts, plan.listed_until_values, strict=False)
        }
        if plan.html:
            heading = self.index_document.heading(plan.target, host_site.site)
            document = html.Table(host_site.rules, heading, listed_until_values)
        else:
            shapes = {source.name: source.shape for source, _ in plan.parts}
            document = Urlset(
                host_site.renderer, self.settings, shapes, plan.news_cutoff, listed_until_values
            )
        return Body(document, self.settings, plan.gzip)

    # The answers without a document, as the handler gives them.

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
        return self.errors.busy(path or self.settings.path, self.slots.running)

    def too_large(self, error: Exception, path: str | None = None) -> Response:
        """A document past the protocol's limits, or a source that cannot be split: a 500."""
        return self.errors.too_large(error, path or self.settings.path)


def _live_pages(
    sources: list[AnySource], page_sizes: Mapping[str, int], settings: Settings
) -> dict[str, CurrentPages]:
    """Pages kept current between recounts (``freshness.mode="incremental"``), by source name."""
    if settings.freshness.mode != "incremental":
        return {}
    return {
        source.name: CurrentPages(
            source,
            page_sizes[source.name],
            settings.freshness.refresh_interval,
            settings.freshness.recount_interval,
            settings.freshness.exact_rows,
        )
        for source in sources
        if source.live
    }
