"""The pure core: request description in, response plan out.

No I/O here. An adapter asks :meth:`Sitemap.route` whether a path is ours and
:meth:`Sitemap.parts` which (source, key range) summaries it needs, reads them,
and lets :meth:`Sitemap.respond` decide: 405, 404, 304, a bodiless HEAD, or a
200 whose body it then produces: a ``urlset`` streamed through a :class:`Body`,
or a ``sitemapindex`` from :meth:`Sitemap.index` once it has read the pages of
the sources that :meth:`Sitemap.index_needs` names.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from . import html, robots
from .duplicates import SeenLocs
from .encoding import GzipStream, gzip_whole
from .entry import Batch, EntryRules
from .extensions import NAMESPACES, NEWS_WINDOW, Shape, urlset_open
from .failures import FailureLog
from .http import accepts_gzip, evaluate_preconditions, format_http_date
from .live_pages import LivePages
from .render import Renderer
from .routing import Routes, Target
from .settings import ConfigurationError, ConfigurationTypeError, Settings
from .sources.base import (
    ALL,
    MAX_KEY,
    AnySource,
    Bucket,
    KeyRange,
    NotPageable,
    Source,
    page_keys,
)
from .sources.iterable import as_source
from .stats import BadRowStats, register, tally_of
from .urls import Site, normalize_host
from .validators import DATE_LAG, Summary, last_modified, make_etag
from .xml import UrlsetWriter, sitemap_element, sitemapindex

logger = logging.getLogger("sitemap_middleware")

ALLOWED_METHODS = ("GET", "HEAD")
Headers = Mapping[str, Sequence[str]]
Part = tuple[AnySource, KeyRange]


_SECOND = timedelta(seconds=1)


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
class View:
    """The site as one host sees it: its URLs, the rules for its locs, its renderer."""

    site: Site
    rules: EntryRules
    renderer: Renderer
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Response:
    """A planned response.

    ``stream`` means a 200 whose body the adapter produces: a ``urlset`` of
    ``parts`` or, with ``index``, a ``sitemapindex``; ``gzip`` says to compress it.
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    stream: bool = False
    index: bool = False
    parts: tuple[Part, ...] = ()
    gzip: bool = False
    view: View | None = None
    html: bool = False
    target: Target | None = None
    news_cutoff: datetime | None = None
    horizons: tuple[datetime | None, ...] = ()
    """Per part, the horizon its summary was read under: later lastmods are not served."""


def _text(status: int, message: str, extra: Sequence[tuple[str, str]] = ()) -> Response:
    body = (message + "\n").encode("ascii")
    headers = [
        ("content-type", "text/plain; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        *extra,
    ]
    return Response(status, headers, body)


class Slot:
    """One running generation; :meth:`release` gives its place back (once)."""

    def __init__(self, generations: Generations) -> None:
        self._generations: Generations | None = generations

    def release(self) -> None:
        if self._generations is not None:
            self._generations.release()
            self._generations = None


class Generations:
    """How many documents this process is generating; at most ``limit`` at once.

    Generating reads rows and holds a database connection for the whole
    transfer, so a burst of crawlers could otherwise take every connection of
    the pool from the application. 304s and HEADs read aggregates only and are
    not counted. Shared by threads (WSGI) and tasks (ASGI), hence the lock.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.running = 0
        self._lock = threading.Lock()

    def acquire(self) -> Slot | None:
        with self._lock:
            if self.limit is not None and self.running >= self.limit:
                return None
            self.running += 1
        return Slot(self)

    def release(self) -> None:
        with self._lock:
            self.running -= 1


class Sitemap:
    """A configured sitemap: its sources, its settings and every decision about it."""

    def __init__(self, sources: object, settings: Settings) -> None:
        self.settings = settings
        self.site = settings.site
        self._scheme = self.site.origin.partition(":")[0]
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
        self.view = self._view(self.site)
        # Host-derived URLs: a view per allowed host, made on first use (the list bounds them).
        self._views = {self.site.origin.partition("://")[2]: self.view}
        # Pages of each source, remembered for the data version (summary token) they came from,
        # with the horizon they were read under.
        self._buckets: dict[str, tuple[str, list[Bucket], datetime | None]] = {}
        self.generations = Generations(settings.max_generations)
        self.failures = FailureLog()
        # summary_ttl: summaries read in the last few seconds, by (source, key range).
        self._recent: dict[tuple[str, KeyRange], tuple[float, Summary]] = {}
        # Pages kept current between recounts, for the sources that can be (live_pages).
        self.live: dict[str, LivePages] = {}
        if settings.freshness == "incremental":
            self.live = {
                source.name: LivePages(
                    source,
                    self.widths[source.name],
                    settings.refresh_interval,
                    settings.recount_interval,
                )
                for source in self.sources
                if source.live
            }
        self._reported: set[str] = set()
        # The index's <sitemap> elements by (base URL, source, page, lastmod shown).
        self._index_elements: dict[tuple[str, str, int, datetime | None], str] = {}

    def _view(self, site: Site) -> View:
        # Every view counts and logs bad rows in the same place.
        rules = EntryRules(
            site,
            self.settings.naive_timezone,
            self.settings.strict,
            self.rules.tallies,
            self.rules._logged,
        )
        widths = repr(sorted(self.widths.items()))
        fingerprint = "|".join((self.settings.fingerprint(), site.base_url, widths))
        return View(site, rules, Renderer(rules), fingerprint)

    def recent_summaries(self, parts: Sequence[Part], horizon: datetime) -> list[Summary] | None:
        """The parts' summaries if all were read less than ``summary_ttl`` seconds ago and no
        future lastmod they saw is due by ``horizon``."""
        if not self.settings.summary_ttl:
            return None
        now = time.monotonic()
        found = []
        for source, keys in parts:
            kept = self._recent.get((source.name, keys))
            if kept is None or kept[0] < now or not kept[1].fresh(horizon):
                return None
            found.append(kept[1])
        return found

    def keep_summaries(self, parts: Sequence[Part], summaries: Sequence[Summary]) -> None:
        if not self.settings.summary_ttl:
            return
        if len(self._recent) > 65_536:  # one entry per page: bounded, and cheap to refill
            self._recent.clear()
        expires = time.monotonic() + self.settings.summary_ttl
        for (source, keys), summary in zip(parts, summaries, strict=True):
            self._recent[(source.name, keys)] = (expires, summary)

    def width(self, source: Source) -> int:
        """Rows per page of a source."""
        return self.widths[source.name]

    def view_for(self, request: Request) -> View | None:
        """The view a request gets: the base URL's, or with ``allowed_hosts`` its Host's;
        None for a Host that is not allowed (answered 400, never used to build a URL)."""
        if self.settings.allowed_hosts is None:
            return self.view
        raw = request.host
        if raw is None:
            return self.view if "host" not in request.headers else None
        host = normalize_host(raw, self._scheme)
        if host is None or host not in self.settings.allowed_hosts:
            return None
        view = self._views.get(host)
        if view is None:
            view = self._views[host] = self._view(self.site.with_host(host, self.settings.path))
        return view

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

    def wants_robots(self, path: str, method: str) -> bool:
        """Whether this request is for the robots.txt that the sitemap is added to."""
        return self.settings.robots_txt and path == robots.PATH and method in ALLOWED_METHODS

    def bad_host(self) -> Response:
        return _text(400, "Bad Request: this host is not served")

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source name, counted since the process started (a snapshot)."""
        return self.rules.stats

    @property
    def url(self) -> str:
        """The public URL of the root sitemap."""
        return self.site.url_for(self.settings.path)

    def path_of(self, target: Target) -> str:
        """The path of the document ``target`` names, as logs name it."""
        return self.routes.path_of(target) if target.valid else self.settings.path

    def route(self, path: str) -> Target | None:
        """The document a route path names, or None when the path is not the sitemap's."""
        return self.routes.match(path)

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
        pages = self.pages(source)
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

    def page_summaries(
        self, target: Target, parts: Sequence[Part], cut: bool = False
    ) -> list[Summary] | None:
        """A cut page's summary, known from its cut (read just before): no query needed."""
        source, keys = parts[0]
        if (source.fixed_ranges and not cut) or keys == ALL or target.page is None:
            return None
        bucket = self.pages(source)[target.page - 1]  # parts() found the page
        if bucket.last is None:
            return None  # the data no longer needs cuts: a page of fixed key ranges
        whole, _, horizon = self._buckets[source.name]
        token = f"cut:{bucket.count}:{keys!r}:{bucket.checksum}:{bucket.newest}:{bucket.expires}"
        if source.versioned:
            # The version sees what the checksum cannot (a renamed slug), but only for the
            # whole source: cut pages shift, so every one of them follows it.
            token += ":" + whole
        return [Summary(bucket.newest, bucket.count, token, horizon, bucket.expires)]

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

    def busy(self, path: str | None = None) -> Response:
        """Too many documents are being generated at once: try again shortly."""
        logger.warning(
            "sitemap %s: %d generations running, the most max_generations allows; answering 503",
            path or self.settings.path,
            self.generations.running,
        )
        return _text(
            503,
            "Sitemap generation busy, retry later",
            [("retry-after", str(self.settings.busy_retry_after))],
        )

    def not_found(self) -> Response:
        return _text(404, "Not Found")

    def too_large(self, error: Exception, path: str | None = None) -> Response:
        """A document the protocol's limits (or the source's keys) do not allow: a 500 whose
        log line says which (``path``: the document's)."""
        if isinstance(error, NotPageable):
            # The same every time until the configuration changes: said once.
            if str(error) not in self._reported:
                self._reported.add(str(error))
                logger.error("sitemap %s cannot be served: %s", path or self.settings.path, error)
            return _text(500, "Sitemap source cannot be split into pages")
        logger.error("sitemap %s cannot be served: %s", path or self.settings.path, error)
        return _text(500, "Sitemap exceeds the protocol limits")

    def is_index(self, target: Target, summaries: Sequence[Summary]) -> bool:
        """The root is an index unless it is one source that fits on one page (index="auto")."""
        if target.source is not None:
            return False
        if self.settings.index == "always" or len(self.sources) > 1:
            return True
        count = summaries[0].count
        return count is None or count > self.width(self.sources[0])

    def respond(
        self,
        request: Request,
        target: Target,
        parts: Sequence[Part],
        summaries: Sequence[Summary],
        now: datetime,
        view: View | None = None,
    ) -> Response:
        """The answer to a GET or HEAD of a target, given its parts' summaries and the clock."""
        if all(summary.count == 0 for summary in summaries):
            # An empty urlset or sitemapindex fails the XSD: there is nothing to list.
            return self.not_found()
        index = self.is_index(target, summaries)
        gzip_file = target.gz
        coding = (
            not gzip_file
            and self.settings.gzip
            and accepts_gzip(request.headers.get("accept-encoding"))
        )
        representation = "gz" if gzip_file else "gzip" if coding else "identity"
        if target.html:
            representation += "+html"
        view = view or self.view
        tag_parts = [view.fingerprint, repr(target), "index" if index else "urlset"]
        for (source, keys), summary in zip(parts, summaries, strict=True):
            tag_parts += (source.name, source.fingerprint(), repr(keys), summary.token)
        # Each representation has its own tag (RFC 9110 §8.8.3.3).
        newest = [summary.newest for summary in summaries]
        news_cutoff = None
        if any(source.shape.news for source, _ in parts):
            # News older than two days lose their news:news: the document changes with the
            # clock, a tick at a time, and its validators say so.
            # Ticks start DATE_LAG late, so that no tick is newer than the Last-Modified cap.
            tick = self.settings.news_tick
            moment = datetime.fromtimestamp((now - DATE_LAG).timestamp() // tick * tick, UTC)
            news_cutoff = moment - NEWS_WINDOW
            tag_parts.append(f"news:{moment.isoformat()}")
            newest.append(moment)
        etag = make_etag([*tag_parts, representation])
        # One clock reading gives the Date and caps the Last-Modified (RFC 9110 §8.8.2.1).
        modified = last_modified(newest, now)
        headers = [("date", format_http_date(now)), ("etag", etag)]
        if modified is not None:
            headers.append(("last-modified", format_http_date(modified)))
        if self.settings.cache_control is not None:
            headers.append(("cache-control", self.settings.cache_control))
        if self.settings.gzip and not gzip_file:
            headers.append(("vary", "Accept-Encoding"))
        if self.settings.x_robots_tag is not None:
            headers.append(("x-robots-tag", self.settings.x_robots_tag))
        status = evaluate_preconditions(request.method, dict(request.headers), etag, modified)
        if status in (304, 412):
            return Response(status, headers)
        if gzip_file:
            headers.insert(0, ("content-type", "application/gzip"))
        else:
            content_type = html.CONTENT_TYPE if target.html else self.settings.content_type
            headers.insert(0, ("content-type", content_type))
            if coding:
                headers.insert(1, ("content-encoding", "gzip"))
        if target.html:
            headers.append(("content-security-policy", html.CONTENT_SECURITY_POLICY))
        return Response(
            200,
            headers,
            stream=request.method == "GET",
            index=index,
            parts=tuple(parts),
            gzip=gzip_file or coding,
            view=view,
            html=target.html,
            target=target,
            news_cutoff=news_cutoff,
            horizons=tuple(summary.horizon for summary in summaries),
        )

    def index_needs(
        self, plan: Response, summaries: Sequence[Summary]
    ) -> list[tuple[AnySource, Summary]]:
        """The sources whose pages must be read (not remembered for their current data).

        A source that cannot be split is one page, known from its summary alone;
        past one page it is refused (:class:`NotPageable`).
        """
        return [
            (source, summary)
            for (source, _), summary in zip(plan.parts, summaries, strict=True)
            if self.needs_pages(source, summary)
        ]

    def needs_pages(self, source: AnySource, summary: Summary) -> bool:
        """Whether a source's pages must be read for its whole-source ``summary``."""
        if self._buckets.get(source.name, ("", [], None))[0] == summary.token:
            return False
        live = self.live.get(source.name)
        if live is not None and live.usable:
            return False  # kept current by live_pages
        if not source.pageable:
            if summary.count is not None and summary.count > self.width(source):
                raise NotPageable(
                    f"source {source.name!r} has {summary.count} rows, more than one page "
                    f"holds ({self.width(source)}), and cannot be split into pages; split it "
                    "into several sources, or give it buckets() (see Source.buckets)"
                )
            self.remember(source, summary, [Bucket(0, summary.count or 1, summary.newest)])
            return False
        return True

    def pages(self, source: AnySource) -> list[Bucket]:
        """The non-empty pages of a source, as last read."""
        return self._buckets.get(source.name, ("", [], None))[1]

    def remember(self, source: AnySource, summary: Summary, buckets: list[Bucket]) -> None:
        self._buckets[source.name] = (summary.token, buckets, summary.horizon)

    def index(self, plan: Response) -> bytes:
        """The ``sitemapindex`` of every non-empty page, each with its newest lastmod."""
        if plan.html:
            document = self._html_index(plan)
            return gzip_whole(document, self.settings.gzip_level) if plan.gzip else document
        elements = []
        site = (plan.view or self.view).site
        known = self._index_elements
        if len(known) > 250_000:  # one per page and host: bounded, and cheap to refill
            known.clear()
        for source, _ in plan.parts:
            _, buckets, horizon = self._buckets[source.name]
            # A source's own pages may not know the horizon: never list a future lastmod.
            # (Whole seconds count: a moment is served while it is before the next second.)
            limit = None if horizon is None else horizon.replace(microsecond=0) + _SECOND
            for bucket in buckets:
                newest = bucket.newest
                if newest is not None and limit is not None and newest >= limit:
                    newest = None
                # Most pages are unchanged between two indexes: their elements are reused.
                key = (site.base_url, source.name, bucket.index, newest)
                element = known.get(key)
                if element is None:
                    element = known[key] = self._index_element(site, source.name, bucket, newest)
                elements.append(element)
        document = sitemapindex(elements, self.settings.max_bytes)
        return gzip_whole(document, self.settings.gzip_level) if plan.gzip else document

    def _index_element(
        self, site: Site, source: str, bucket: Bucket, newest: datetime | None
    ) -> str:
        url = site.url_for(self.routes.page_path(source, bucket.index + 1, self.settings.index_gz))
        lastmod = None
        if newest is not None:
            lastmod = newest.astimezone(UTC).isoformat(timespec="seconds")
        return sitemap_element(url, lastmod)

    def _html_index(self, plan: Response) -> bytes:
        site = (plan.view or self.view).site
        rows = []
        for source, _ in plan.parts:
            for bucket in self.pages(source):
                page = bucket.index + 1
                lastmod = None
                if bucket.newest is not None:
                    lastmod = bucket.newest.astimezone(UTC).isoformat(timespec="seconds")
                rows.append(
                    html.IndexRow(
                        f"{source.name}, page {page}",
                        _filename(self.routes.page_path(source.name, page, html=True)),
                        site.url_for(self.routes.page_path(source.name, page)),
                        # The index reads counts of rows: each gives one URL per language.
                        bucket.count * source.shape.urls_per_row,
                        lastmod,
                    )
                )
        return html.index_document("Sitemap index", site.url_for(self.settings.path), rows)

    def body(self, plan: Response) -> Body:
        view = plan.view or self.view
        document: Document
        horizons = {
            source.name: horizon
            for (source, _), horizon in zip(plan.parts, plan.horizons, strict=False)
        }
        if plan.html:
            document = html.Table(view.rules, self._html_heading(plan, view), horizons)
        else:
            shapes = {source.name: source.shape for source, _ in plan.parts}
            document = Urlset(view.renderer, self.settings, shapes, plan.news_cutoff, horizons)
        return Body(document, self.settings, plan.gzip)

    def _html_heading(self, plan: Response, view: View) -> html.Heading:
        """Title, XML link and page navigation of a urlset's HTML sibling."""
        target = plan.target
        site = view.site
        root = _filename(self.routes.html_path(Target()))
        if target is None or target.source is None or target.page is None:
            return html.Heading("Sitemap", site.url_for(self.settings.path), [])
        source, page = target.source, target.page
        numbers = [bucket.index + 1 for bucket in self.pages(self.by_name[source])] or [page]
        at = numbers.index(page) if page in numbers else 0
        nav = [html.Link("Sitemap index", root, "up")]
        if at > 0:
            previous = self.routes.page_path(source, numbers[at - 1], html=True)
            nav.append(html.Link("Previous page", _filename(previous), "prev"))
        if at + 1 < len(numbers):
            following = self.routes.page_path(source, numbers[at + 1], html=True)
            nav.append(html.Link("Next page", _filename(following), "next"))
        return html.Heading(
            f"Sitemap: {source}, page {page} of {len(numbers)}",
            site.url_for(self.routes.page_path(source, page)),
            nav,
        )


def _filename(path: str) -> str:
    """A child's link relative to its sibling documents (they share one directory)."""
    return path.rpartition("/")[2]


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


def build_sources(value: object) -> list[AnySource]:
    """Sources from what a user passes: a source, a list of sources, a name -> source mapping,
    or one list of entries/URLs or (async) generator function (named ``urls``)."""
    if isinstance(value, Source):
        sources = [value]
    elif isinstance(value, Mapping):
        sources = []
        for name, item in value.items():
            if not isinstance(name, str):
                raise ConfigurationTypeError(
                    f"sources: the names of a mapping of sources must be strings, got {name!r}"
                )
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
        except ConfigurationError:
            raise
        except TypeError as exc:
            raise ConfigurationError(f"sources: {exc}") from None
    if not sources:
        raise ConfigurationError("sources: give at least one source")
    names = [source.name for source in sources]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(f"sources: names must be unique; repeated: {duplicates}")
    return sources  # type: ignore[return-value]
