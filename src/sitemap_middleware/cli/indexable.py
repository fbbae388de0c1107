"""``check --audit-indexable N``: is every URL the sitemaps list one a crawler may index?

As ``check`` reads each ``urlset`` it keeps a pre-sample of N of its in-scope
URLs (:mod:`.audit_sample`), each with the hreflang alternates the sitemap lists
for it; with ``all``, every URL, written to a temporary file rather than kept. The
sitemaps of one *source* (those whose URLs differ only by a page number:
``/sitemap-articles-1.xml``, ``/sitemap-articles-2.xml``) share its N URLs as evenly
as their sizes allow.

Once every sitemap is read, each URL sampled is requested once with ``GET``
(redirects not followed; the first MiB of a page is read), at the audit's pace
(:mod:`.pace`), after the ``robots.txt`` of its origin (:mod:`.robots_txt`), and
judged (:mod:`.indexable_rules`) as its answer comes; then each hreflang alternate
whose own sitemap entry does not list its URL back, unless it was requested as a
listed URL already.

Memory does not grow with the URLs audited but by a few digests
(:mod:`.digests`: 8 bytes each, in tables at most half full, so 16 to 32 bytes):

* one for each (URL, alternate) link a sitemap lists, so that an alternate's entry
  can list its URL back from any sitemap: 16 to 32 bytes a link;
* one for each URL audited, to request a URL listed twice in a source once: 16 to
  32 bytes a URL;
* one for each alternate whose entry does not list its URL back (none on a site
  whose annotations point both ways), and the answer of its page, a few hundred
  bytes, once requested.

What else the audit learns of each URL is on disk (:mod:`.spill`) until the report
is written: the URLs of ``all`` until requested, the answer of each page and every
finding for the JSON report. The report's findings themselves are counted for each
source and kind, with the first few of each (:data:`MAX_EXAMPLES` new ones and as
many known ones) kept as examples.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import anyio
import httpx

from . import robots_txt
from .audit import GET_BODY
from .audit_sample import allocate, presample, take
from .digests import DigestSet, digest
from .document import Document
from .fetch import NetworkError, inflate_prefix
from .headers import content_codings, media_type
from .indexable_rules import CODES, Found, Visit, hreflang_findings, page_findings
from .pace import Pace
from .page_signals import Signals, join, read_signals
from .progress import Progress
from .robots_txt import RobotsTxt
from .scope import resource, scope_problem
from .spill import Spill

ALL: Literal["all"] = "all"
HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_EXAMPLES = 5
"""The examples each kind of finding shows in a source, the new ones first."""
_PAGE_NUMBER = re.compile(r"[-_.]?\d+$")

Key = tuple[str, str, str]


@dataclass
class IndexableOptions:
    per_source: int | Literal["all"]
    concurrency: int = 2
    delay: float = 0.2
    seed: int | None = None
    baseline: frozenset[Key] | None = None
    """The findings to tolerate (``--baseline``): only others fail the check."""
    baseline_file: str | None = None
    progress: TextIO | None = None
    """Where to show a progress bar while URLs are requested, when it is a terminal."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL as a sitemap lists it: its loc and the hrefs of its hreflang alternates."""

    loc: str
    alternates: frozenset[str] = frozenset()


@dataclass
class SitemapPart:
    """One ``urlset``'s share of its source: its URL count and pre-sample (with ``all``,
    ``stored`` URLs from offset ``start`` of the collector's file)."""

    url: str
    source: str
    entries: int
    candidates: list[Candidate]
    start: int = 0
    stored: int = 0


@dataclass
class Kind:
    """One kind of finding in one source: how many, how many new, the first few, and
    where all of them start in the file of that kind."""

    code: str
    start: int
    count: int = 0
    new: int = 0
    first_new: list[Found] = field(default_factory=list)
    first_known: list[Found] = field(default_factory=list)

    @property
    def examples(self) -> list[Found]:
        """A few of them, the new ones first."""
        return (self.first_new + self.first_known)[:MAX_EXAMPLES]


@dataclass
class SourceAudit:
    """The audit of one source: its sitemaps, the URLs requested, the findings."""

    name: str
    sitemaps: list[str] = field(default_factory=list)
    urls: int = 0
    sampled: int = 0
    """The URLs requested (the pages' answers: from offset ``pages_start``)."""
    pages_start: int = 0
    kinds: dict[str, Kind] = field(default_factory=dict)

    @property
    def findings(self) -> int:
        return sum(kind.count for kind in self.kinds.values())

    def ordered(self) -> list[Kind]:
        """The kinds found, in :data:`~.indexable_rules.CODES` order."""
        return [self.kinds[code] for code in CODES if code in self.kinds]


@dataclass
class IndexableSummary:
    per_source: int | Literal["all"]
    concurrency: int
    delay: float
    seed: int | None
    sampled: int = 0
    requests: int = 0
    pages: int = 0
    alternates: int = 0
    peak_concurrency: int = 0
    seconds: float = 0.0
    robots: list[RobotsTxt] = field(default_factory=list)


@dataclass
class IndexableReport:
    summary: IndexableSummary
    sources: list[SourceAudit]
    baseline: frozenset[Key] | None = None
    baseline_file: str | None = None
    pages_file: Spill = field(default_factory=Spill)
    found_files: dict[str, Spill] = field(default_factory=dict)

    @property
    def findings(self) -> int:
        return sum(source.findings for source in self.sources)

    @property
    def new(self) -> int:
        """How many findings fail the check: those not in the baseline (all without one)."""
        return sum(kind.new for source in self.sources for kind in source.kinds.values())

    def is_new(self, found: Found) -> bool:
        return self.baseline is None or found.key not in self.baseline

    def pages(self, source: SourceAudit) -> Iterator[dict[str, Any]]:
        """The answer of each URL of ``source`` requested: url, status, location, error."""
        return self.pages_file.read(source.pages_start, source.sampled)

    def found(self) -> Iterator[dict[str, Any]]:
        """Every finding (code, source, url, subject, detail, new), by source and kind."""
        for source in self.sources:
            for kind in source.ordered():
                yield from self.found_files[kind.code].read(kind.start, kind.count)

    def record(self, source: SourceAudit, found: Found) -> None:
        new = self.is_new(found)
        file = self.found_files.setdefault(found.code, Spill())
        kind = source.kinds.setdefault(found.code, Kind(found.code, file.end))
        kind.count += 1
        kind.new += new
        first = kind.first_new if new else kind.first_known
        if len(first) < MAX_EXAMPLES:
            first.append(found)
        file.append(
            {
                "code": found.code,
                "source": source.name,
                "url": found.url,
                "subject": found.subject,
                "detail": found.detail,
                "new": new,
            }
        )


def source_of(url: str) -> str:
    """The source a sitemap belongs to: its path without extension or page number
    (``/sitemap-articles-2.xml`` and ``/sitemap-articles-3.xml.gz`` are
    ``/sitemap-articles``)."""
    path = urlsplit(url).path
    for extension in (".gz", ".xml"):
        path = path.removesuffix(extension)
    named = _PAGE_NUMBER.sub("", path)
    return path if named.endswith("/") or not named else named


class Collector:
    """What the audit keeps of every ``urlset`` as ``check`` reads them."""

    def __init__(self, options: IndexableOptions) -> None:
        self.options = options
        # A digest of each (loc, alternate) an entry lists: "the alternate's entry lists the
        # loc back" is then a lookup, whichever sitemap holds that entry.
        self.links = DigestSet()
        self.stored = Spill() if options.per_source == ALL else None

    def collect(self, document: Document, url: str) -> SitemapPart:
        entries: dict[str, Candidate] = {}
        for loc in document.locs:
            if loc not in entries and scope_problem(loc, url) is None:
                entries[loc] = Candidate(loc, document.alternates.get(loc, frozenset()))
        for loc, hrefs in document.alternates.items():
            for href in hrefs:
                if href != loc:
                    self.links.add(_link(loc, href))
        part = SitemapPart(url, source_of(url), len(document.locs), [])
        size = self.options.per_source
        if self.stored is not None:
            part.start, part.stored = self.stored.end, len(entries)
            for candidate in entries.values():
                self.stored.append([candidate.loc, sorted(candidate.alternates)])
        elif size != ALL:
            part.candidates = presample(list(entries.values()), size, self.options.seed, url)
        return part

    def candidates(self, part: SitemapPart) -> Iterable[Candidate]:
        if self.stored is None:
            return part.candidates
        stored = self.stored.read(part.start, part.stored)
        return (Candidate(loc, frozenset(alternates)) for loc, alternates in stored)

    def lists_back(self, alternate: str, loc: str) -> bool:
        """Whether the sitemap entry of ``alternate`` lists ``loc`` among its alternates."""
        return _link(alternate, loc) in self.links

    def close(self) -> None:
        if self.stored is not None:
            self.stored.close()


def _link(loc: str, href: str) -> int:
    return digest(f"{resource(loc)} {resource(href)}")


@dataclass
class _Planned:
    """A source to audit: the URLs it requests (read as they are needed), how many at most."""

    audit: SourceAudit
    parts: list[tuple[SitemapPart, int | None]]
    """Each sitemap and its share of the pre-sample (None: all of it)."""
    total: int


async def run_indexable(
    client: httpx.AsyncClient,
    parts: list[SitemapPart],
    collector: Collector,
    options: IndexableOptions,
) -> IndexableReport:
    """Sample each source's URLs from ``parts`` (in the index's order), request, judge."""
    summary = IndexableSummary(options.per_source, options.concurrency, options.delay, options.seed)
    plan = _plan(parts, options)
    report = IndexableReport(
        summary, [p.audit for p in plan], options.baseline, options.baseline_file
    )
    try:
        await _Audit(client, collector, options, report).run(plan)
    finally:
        collector.close()
    return report


def _plan(parts: list[SitemapPart], options: IndexableOptions) -> list[_Planned]:
    """Each source's URLs to request: its N shared between its sitemaps, or all."""
    grouped: dict[str, list[SitemapPart]] = {}
    for part in parts:
        grouped.setdefault(part.source, []).append(part)
    plan = []
    for name, members in grouped.items():
        source = SourceAudit(name, [p.url for p in members], sum(p.entries for p in members))
        size = options.per_source
        if size == ALL:
            shares: list[int | None] = [None] * len(members)
            total = sum(part.stored for part in members)
        else:
            counts = allocate([len(part.candidates) for part in members], size)
            shares, total = list(counts), sum(counts)
        plan.append(_Planned(source, list(zip(members, shares, strict=True)), total))
    return plan


class _Audit:
    def __init__(
        self,
        client: httpx.AsyncClient,
        collector: Collector,
        options: IndexableOptions,
        report: IndexableReport,
    ) -> None:
        self.collector = collector
        self.options = options
        self.report = report
        self.pace = Pace(client, options.concurrency, options.delay)
        self.robots: dict[str, RobotsTxt] = {}
        self.fetching: dict[str, anyio.Event] = {}
        self.origins: list[str] = []
        # The alternates whose entry does not list their URL back, and the answers of their
        # pages once requested (by resource).
        self.wanted = DigestSet()
        self.alternates: dict[str, Visit] = {}
        # The URLs answering 200 with such alternates: judged once those are requested.
        self.pending = Spill()
        self.pending_count = 0
        self.progress = Progress(
            options.progress, options.progress is not None, "indexability audit", interval=0.2
        )
        self.total = 0
        self.done = 0

    async def run(self, plan: list[_Planned]) -> None:
        summary = self.report.summary
        started = time.perf_counter()
        self.total = sum(planned.total for planned in plan)
        lists_back = self.collector.lists_back
        try:
            # First the alternates that no entry lists back, so that the answer of one that
            # is a listed URL too is kept when it is requested as such (not requested twice).
            for _, candidate in self._sampled(plan, once=False):
                own = resource(candidate.loc)
                for alternate in candidate.alternates:
                    key = resource(alternate)
                    if key != own and not lists_back(alternate, candidate.loc):
                        self.wanted.add(digest(key))
            sampled = self._sampled(plan, self._advance)
            await self.pace.stream(sampled, self._page, self._judge)
            wanted: dict[str, str] = {}
            for _, _loc, alternates in self.pending.read(0, self.pending_count):
                for alternate in alternates:
                    key = resource(alternate)
                    if key not in self.alternates:
                        wanted.setdefault(key, alternate)
            summary.alternates = len(wanted)
            self.total += len(wanted)
            await self.pace.stream(wanted.values(), lambda u: _visit(self.pace, u), self._alternate)
            sources = self.report.sources
            for index, loc, alternates in self.pending.read(0, self.pending_count):
                for found in hreflang_findings(
                    loc, frozenset(alternates), lists_back, self.alternates
                ):
                    self.report.record(sources[index], found)
            self._show()  # with the hreflang findings, judged last
        finally:
            self.pending.close()
            self.progress.close()
        summary.robots = [self.robots[url] for url in self.origins]
        summary.sampled = sum(source.sampled for source in self.report.sources)
        summary.requests, summary.peak_concurrency = self.pace.requests, self.pace.peak
        summary.seconds = time.perf_counter() - started

    def _sampled(
        self,
        plan: list[_Planned],
        duplicate: Callable[[], None] | None = None,
        once: bool = True,
    ) -> Iterator[tuple[int, Candidate]]:
        """Each source's URLs in turn, read as they are needed; with ``once``, each once in
        its source (``duplicate`` is called for each other time)."""
        requested = DigestSet() if once else None
        for index, planned in enumerate(plan):
            for part, share in planned.parts:
                candidates = self.collector.candidates(part)
                if share is not None:
                    candidates = take(list(candidates), share, self.options.seed)
                for candidate in candidates:
                    if requested is None or requested.add(digest(f"{index} {candidate.loc}")):
                        yield index, candidate
                    elif duplicate is not None:
                        duplicate()

    async def _page(self, item: tuple[int, Candidate]) -> tuple[Visit, RobotsTxt]:
        robots = await self._robots_for(item[1].loc)
        return await _visit(self.pace, item[1].loc), robots

    async def _robots_for(self, page: str) -> RobotsTxt:
        """The robots.txt of ``page``'s origin, requested once, by the first page that needs it."""
        url = robots_txt.robots_url(page)
        while url not in self.robots:
            fetching = self.fetching.get(url)
            if fetching is not None:
                await fetching.wait()
                continue
            self.fetching[url] = event = anyio.Event()
            self.origins.append(url)
            try:
                self.robots[url] = await robots_txt.fetch(self.pace, url)
            finally:
                del self.fetching[url]
                event.set()
        return self.robots[url]

    def _judge(self, item: tuple[int, Candidate], answer: tuple[Visit, RobotsTxt]) -> None:
        """Record what one URL's answer shows, in the order the URLs were listed."""
        index, candidate = item
        visit, robots = answer
        source = self.report.sources[index]
        if source.sampled == 0:
            source.pages_start = self.report.pages_file.end
        source.sampled += 1
        self.report.summary.pages += 1
        self.report.pages_file.append(
            {
                "url": visit.url,
                "status": visit.status,
                "location": visit.location,
                "error": visit.error,
            }
        )
        self._keep(visit)
        for found in page_findings(visit, robots):
            self.report.record(source, found)
        if visit.status == 200:
            own = resource(candidate.loc)
            unconfirmed = [
                alternate
                for alternate in sorted(candidate.alternates)
                if resource(alternate) != own
                and not self.collector.lists_back(alternate, candidate.loc)
            ]
            if unconfirmed:
                self.pending.append([index, candidate.loc, unconfirmed])
                self.pending_count += 1
        self._advance()

    def _keep(self, visit: Visit) -> None:
        """Keep what the hreflang rule needs of ``visit`` if its URL is an alternate that is
        not listed back."""
        key = resource(visit.url)
        if digest(key) in self.wanted:
            kept = Signals(alternates=visit.signals.alternates)
            self.alternates[key] = Visit(visit.url, visit.status, visit.location, visit.error, kept)

    def _alternate(self, url: str, visit: Visit) -> None:
        self._keep(visit)
        self._advance()

    def _advance(self) -> None:
        self.done += 1
        if self.progress.due(self.done >= self.total):
            self._show()

    def _show(self) -> None:
        found = f"{self.report.findings:,} findings"
        self.progress.count(self.done, self.total, "URLs", found)


async def _visit(pace: Pace, url: str) -> Visit:
    """GET one page and read what it tells crawlers."""
    try:
        exchange = await pace.send("GET", url, {"accept-encoding": "gzip"}, GET_BODY)
    except NetworkError as exc:
        return Visit(url, error=str(exc))
    headers = exchange.headers
    visit = Visit(url, exchange.status)
    location = headers.get("location")
    if location is not None:
        visit.location = join(url, location.strip())
    if exchange.status != 200:
        return visit
    kind, parameters = media_type(headers.get("content-type"))
    body: bytes | None = None
    codings = content_codings(headers)
    if kind in HTML_TYPES and not codings:
        body = exchange.raw
    elif kind in HTML_TYPES and codings in (["gzip"], ["x-gzip"]):
        body = inflate_prefix(exchange.raw, GET_BODY)
    visit.signals = read_signals(
        url,
        body,
        parameters.get("charset"),
        headers.get_list("x-robots-tag"),
        headers.get_list("link"),
    )
    return visit
