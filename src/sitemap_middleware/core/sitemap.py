"""A configured sitemap: its sources, its routes, and the pieces that decide its answers.

:class:`Sitemap` holds the pieces, each owning one idea, and does only what takes several
of them: which (source, key range) parts a target lists, a streamed document's body, the
robots.txt line. :mod:`.handler` runs the steps of a request against the pieces
themselves:

* ``routes`` (:mod:`.routing`): which document a path names, and each document's path;
* ``hosts`` (:mod:`.hosts`): the site as each allowed host sees it;
* ``current_pages`` (:mod:`..state.current_pages`): the pages of live sources, kept current;
* ``remembered_pages``, ``remembered_summaries`` (:mod:`..state.remembered_pages`): each
  source's pages as last read, and the summaries read in the last ``summary_ttl``;
* ``planner`` (:mod:`.planning`): status, validators and headers of a document's answer;
* ``errors`` (:mod:`.responses`): the answers past a failure (500, 503); the answers that
  carry no document (400, 404, 405) are :mod:`.responses`' functions;
* ``index_document`` (:mod:`..output.sitemapindex`): the ``sitemapindex``, its HTML
  sibling, and page navigation;
* ``slots`` (:mod:`.slots`): how many documents are generated at once;
* ``failures`` (:mod:`.failures`): failures logged without floods;
* ``keys`` (:mod:`.surrogate_keys`): the surrogate keys of each document, and those a
  change purges; ``purges`` (:mod:`..state.purges`): the purges on their way, with a purger.

No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from ..output import html
from ..output.body import Body, Document, Urlset
from ..output.entry import EntryRules
from ..output.robots_gate import RobotsGate
from ..output.sitemapindex import IndexDocument
from ..settings import ConfigurationError, ConfigurationTypeError, Settings
from ..sources.arguments import build_sources
from ..sources.base import ALL, MAX_KEY, AnySource, KeyRange, page_keys
from ..state.bad_rows import register, tally_of
from ..state.current_pages import CurrentPages, keep_current
from ..state.purges import PurgeQueue, Purger
from ..state.remembered_pages import RememberedPages, RememberedSummaries
from ..state.robots_rules import RobotsRules
from . import robots
from .dates import AsOf
from .effects import Effects
from .exchange import Headers, Part, Plan, Request, Response, StreamedPlan, TablePlan, UrlsetPlan
from .failures import FailureLog
from .hosts import Hosts, SiteForHost
from .planning import Planner
from .responses import ALLOWED_METHODS, ServerErrors
from .routing import KeyFileTarget, NotFoundTarget, PageTarget, RootTarget, Routes, Target
from .slots import Slot, Slots
from .surrogate_keys import SurrogateKeys

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

    def __init__(
        self,
        sources: object,
        settings: Settings,
        purger: Purger | None = None,
        *,
        purges: PurgeQueue | None = None,
    ) -> None:
        """``purger``: told the surrogate keys of the documents a change moved (see
        :meth:`purge`); it needs ``headers.surrogate_keys``. ``purges``: a queue shared with
        other sitemaps instead (the sites of one middleware), checked by its owner."""
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
        self.slots = Slots(settings.load.max_generations)
        self.failures = FailureLog()
        self.errors = ServerErrors(settings)
        self.keys = SurrogateKeys(
            self.site,
            self.routes,
            [source.name for source in self.sources],
            settings.headers.surrogate_keys,
        )
        self.purges = purges if purger is None else purge_queue(purger, settings)
        # Pages kept current between recounts, by source name, for the sources that can be.
        self.current_pages = _current_pages(
            self.sources,
            self.page_sizes,
            settings,
            None if self.purges is None else self._pages_moved,
        )
        self.remembered_pages = RememberedPages(self.page_sizes)
        self.remembered_summaries = RememberedSummaries(settings.freshness.summary_ttl)
        # robots_filter: the site's robots.txt rules, read by the adapters (protego is
        # imported here, so that a missing extra fails at start).
        self.robots_rules = (
            None
            if settings.robots_filter is False
            else RobotsRules(settings.robots_filter.ttl, timeout=settings.robots_filter.timeout)
        )
        self.planner = Planner(
            settings, self.sources, self.page_sizes, self.keys, self.robots_rules
        )
        self.index_document = IndexDocument(
            settings, self.routes, self.by_name, self.remembered_pages
        )

    def keep_current(
        self,
        pages: CurrentPages,
        now: datetime | None = None,
        *,
        inline: bool = False,
        recount: bool = False,
    ) -> Effects[None]:
        """A refresh or recount of ``pages`` as reads (see :func:`keep_current`), as of the
        clock and the settings: claimed by the caller in the background, or ``inline`` before
        an answer."""
        moment = now or datetime.now(UTC)
        return keep_current(
            pages,
            moment,
            self.as_of(moment),
            inline=inline,
            recount=recount,
        )

    def purge(self, source: str | None = None) -> list[str]:
        """Queue the purge of one source's documents (the root included), or, with None,
        of every document; returns the keys queued. Never waits: the purger runs in the
        background."""
        if self.purges is None:
            raise ConfigurationError("purger: none is configured; pass purger=... to purge")
        keys = self.keys.of_source(source)
        self.purges.submit(keys)
        return keys

    def _pages_moved(self, source: str, pages: list[int] | None, version: str) -> None:
        """A refresh or recount moved these pages' validators: purge their documents, once
        per version of the pages (see :class:`~sitemap_middleware.state.purges.Claims`)."""
        if self.purges is not None:
            self.purges.submit(self.keys.of_pages(source, pages), version)

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

    def parts(self, target: Target, cut: bool = False) -> tuple[Part, ...] | None:
        """The (source, key range) parts a target lists; None when it names nothing.

        ``cut``: the page's source is cut (its data says so): its pages were just read.
        """
        match target:
            case RootTarget():
                return tuple((source, ALL) for source in self.sources)
            case KeyFileTarget() | NotFoundTarget():
                return None
        source = self.by_name.get(target.source)
        if source is None:
            return None
        if not source.pageable:  # served whole, as page 1
            return ((source, ALL),) if target.page == 1 else None
        pages = self.remembered_pages.pages(source)
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
        if not isinstance(target, PageTarget):
            return None
        source = self.by_name.get(target.source)
        if source is None or not source.pageable or source.fixed_ranges:
            return None
        return source

    def wants_robots(self, path: str, method: str) -> bool:
        """Whether this request is for the robots.txt that the sitemap is added to."""
        return self.settings.robots_txt and path == robots.PATH and method in ALLOWED_METHODS

    def robots(
        self, request: Request, status: int, headers: list[tuple[str, str]], body: bytes
    ) -> Response | None:
        """The robots.txt for the app's complete answer, or None to pass that through."""
        host_site = self.hosts.site_for(request.host, request.host_sent)
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

    def body(self, plan: StreamedPlan) -> Body:
        """The body of a streamed document: a ``urlset``, or its HTML sibling."""
        host_site = plan.host_site
        listed_until_values = {
            source.name: listed_until
            for (source, _), listed_until in zip(plan.parts, plan.listed_until_values, strict=False)
        }
        document: Document
        match plan:
            case TablePlan():
                heading = self.index_document.heading(plan.target, host_site.site)
                document = html.Table(host_site.rules, heading, listed_until_values)
            case UrlsetPlan():
                shapes = {source.name: source.shape for source, _ in plan.parts}
                document = Urlset(
                    host_site.renderer, self.settings, shapes, plan.news_cutoff, listed_until_values
                )
        gate = None if plan.robots is None else RobotsGate(host_site.rules, plan.robots)
        return Body(document, self.settings, plan.gzip, gate)


def _current_pages(
    sources: list[AnySource],
    page_sizes: Mapping[str, int],
    settings: Settings,
    moved: Callable[[str, list[int] | None, str], None] | None,
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
            pages_moved=moved,
        )
        for source in sources
        if source.live
    }


def purge_queue(purger: object, settings: Settings) -> PurgeQueue:
    """The queue of ``purger``, checked: a Purger, and keys on the documents to purge."""
    if not isinstance(purger, Purger):
        raise ConfigurationTypeError(
            f"purger: must have a purge(keys) method (a Purger), got {purger!r}"
        )
    if not settings.headers.surrogate_keys:
        raise ConfigurationError(
            "purger: the documents carry no surrogate keys to purge; set "
            "headers.surrogate_keys, e.g. Headers.cdn()"
        )
    return PurgeQueue(purger)
