"""The ``sitemapindex``: every non-empty page of every source, each with its newest lastmod;
its HTML sibling; and, from the same list, a human page's links to its neighbours.

The pages are those
:class:`~..state.remembered_pages.RememberedPages` last read for the current data.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from ..core.exchange import IndexPlan
from ..core.routing import DocumentTarget, PageTarget, RootTarget, Routes
from ..core.urls import Site
from ..settings import Settings
from ..sources.base import AnySource, Page
from ..state.remembered_pages import RememberedPages
from . import html
from .gzip import gzip_whole
from .xml import sitemap_element, sitemapindex

_SECOND = timedelta(seconds=1)


class IndexDocument:
    """Renders the index of the pages known; reuses each page's element while it stands."""

    LIMIT = 250_000
    """Elements kept: one per page and host; bounded, and cheap to refill."""

    def __init__(
        self,
        settings: Settings,
        routes: Routes,
        sources: Mapping[str, AnySource],
        remembered_pages: RememberedPages,
    ) -> None:
        self._settings = settings
        self._routes = routes
        self._sources = sources
        self._remembered_pages = remembered_pages
        # The <sitemap> elements by (base URL, source, page, lastmod shown).
        self._elements: dict[tuple[str, str, int, datetime | None], str] = {}

    def render(self, plan: IndexPlan) -> bytes:
        """The whole index (or its HTML sibling) that ``plan`` calls for, on its host's URLs."""
        site = plan.host_site.site
        document = self._html(plan, site) if plan.html else self._xml(plan, site)
        return gzip_whole(document, self._settings.gzip_files.level) if plan.gzip else document

    def _xml(self, plan: IndexPlan, site: Site) -> bytes:
        elements = []
        if len(self._elements) > self.LIMIT:
            self._elements.clear()
        for source, _ in plan.parts:
            read = self._remembered_pages.of(source)
            # A source's own pages may not know ``listed_until``: never list a future lastmod.
            # (Whole seconds count: a moment is served while it is before the next second.)
            limit = (
                None
                if read.listed_until is None
                else read.listed_until.replace(microsecond=0) + _SECOND
            )
            for page in read.pages:
                newest = page.newest
                if newest is not None and limit is not None and newest >= limit:
                    newest = None
                elements.append(self._element(site, source.name, page, newest))
        return sitemapindex(elements, self._settings.limits.max_bytes)

    def _element(self, site: Site, source: str, page: Page, newest: datetime | None) -> str:
        # Most pages are unchanged between two indexes: their elements are reused.
        key = (site.base_url, source, page.index, newest)
        element = self._elements.get(key)
        if element is None:
            path = self._routes.page_path(
                source, page.index + 1, self._settings.gzip_files.index_files
            )
            element = self._elements[key] = sitemap_element(site.url_for(path), _w3c(newest))
        return element

    def _html(self, plan: IndexPlan, site: Site) -> bytes:
        rows = []
        for source, _ in plan.parts:
            for known in self._remembered_pages.pages(source):
                page = known.index + 1
                rows.append(
                    html.IndexRow(
                        f"{source.name}, page {page}",
                        _filename(self._routes.page_path(source.name, page, html=True)),
                        site.url_for(self._routes.page_path(source.name, page)),
                        # The index reads counts of rows: each gives one URL per language.
                        known.count * source.shape.urls_per_row,
                        _w3c(known.newest),
                    )
                )
        return html.index_document("Sitemap index", site.url_for(self._settings.path), rows)

    def heading(self, target: DocumentTarget, site: Site) -> html.Heading:
        """Title, XML link and page navigation of a urlset's HTML sibling."""
        routes = self._routes
        if not isinstance(target, PageTarget):
            return html.Heading("Sitemap", site.url_for(self._settings.path), [])
        source, page = target.source, target.page
        pages = self._remembered_pages.pages(self._sources[source])
        numbers = [known.index + 1 for known in pages] or [page]
        at = numbers.index(page) if page in numbers else 0
        nav = [html.Link("Sitemap index", _filename(routes.html_path(RootTarget())), "up")]
        if at > 0:
            previous = routes.page_path(source, numbers[at - 1], html=True)
            nav.append(html.Link("Previous page", _filename(previous), "prev"))
        if at + 1 < len(numbers):
            following = routes.page_path(source, numbers[at + 1], html=True)
            nav.append(html.Link("Next page", _filename(following), "next"))
        return html.Heading(
            f"Sitemap: {source}, page {page} of {len(numbers)}",
            site.url_for(routes.page_path(source, page)),
            nav,
        )


def _w3c(moment: datetime | None) -> str | None:
    """A lastmod as the index shows it: UTC, whole seconds."""
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


def _filename(path: str) -> str:
    """A child's link relative to its sibling documents (they share one directory)."""
    return path.rpartition("/")[2]
