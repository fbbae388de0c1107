"""``check --audit-indexable N``: is every URL the sitemaps list one a crawler may index?

As ``check`` reads each ``urlset`` it keeps a pre-sample of N of its in-scope
URLs (:mod:`.audit_sample`; every URL with ``all``), each with the hreflang
alternates the sitemap lists for it, and a digest of every (URL, alternate) link
of every ``urlset``, so that an alternate's own entry can list a URL back from
another sitemap. The sitemaps of one *source* (those whose URLs differ only by
a page number: ``/sitemap-articles-1.xml``, ``/sitemap-articles-2.xml``) share
its N URLs as evenly as their sizes allow.

Once every sitemap is read: each origin's ``robots.txt`` (:mod:`.robots_txt`),
then each URL sampled, then each hreflang alternate whose own sitemap entry
does not list its URL back, is requested once with ``GET`` (redirects not
followed; the first MiB of a page is read), at the audit's pace (:mod:`.pace`),
and judged (:mod:`.indexable_rules`).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

import httpx

from . import robots_txt
from .audit import GET_BODY
from .audit_sample import allocate, presample, take
from .document import Document
from .fetch import NetworkError, inflate_prefix
from .headers import content_codings, media_type
from .indexable_rules import CODES, Found, Visit, hreflang_findings, page_findings
from .pace import Pace
from .page_signals import join, read_signals
from .robots_txt import RobotsTxt
from .scope import resource, scope_problem

ALL: Literal["all"] = "all"
HTML_TYPES = ("text/html", "application/xhtml+xml")
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


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL as a sitemap lists it: its loc and the hrefs of its hreflang alternates."""

    loc: str
    alternates: frozenset[str] = frozenset()


@dataclass
class SitemapPart:
    """One ``urlset``'s share of its source: its URL count and pre-sample."""

    url: str
    source: str
    entries: int
    candidates: list[Candidate]


@dataclass
class SourceAudit:
    """The audit of one source: its sitemaps, the URLs requested, the findings."""

    name: str
    sitemaps: list[str] = field(default_factory=list)
    urls: int = 0
    sampled: list[Candidate] = field(default_factory=list)
    visits: list[Visit] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)


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

    @property
    def found(self) -> list[Found]:
        return [found for source in self.sources for found in source.found]

    def is_new(self, found: Found) -> bool:
        return self.baseline is None or found.key not in self.baseline

    @property
    def new(self) -> list[Found]:
        """The findings that fail the check: those not in the baseline (all without one)."""
        return [found for found in self.found if self.is_new(found)]


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
        self.links: set[bytes] = set()

    def collect(self, document: Document, url: str) -> SitemapPart:
        entries: dict[str, Candidate] = {}
        for loc in document.locs:
            if loc not in entries and scope_problem(loc, url) is None:
                entries[loc] = Candidate(loc, document.alternates.get(loc, frozenset()))
        for loc, hrefs in document.alternates.items():
            self.links.update(_link(loc, href) for href in hrefs if href != loc)
        found = list(entries.values())
        size = self.options.per_source
        if size != ALL:
            found = presample(found, size, self.options.seed, url)
        return SitemapPart(url, source_of(url), len(document.locs), found)

    def lists_back(self, alternate: str, loc: str) -> bool:
        """Whether the sitemap entry of ``alternate`` lists ``loc`` among its alternates."""
        return _link(alternate, loc) in self.links


def _link(loc: str, href: str) -> bytes:
    text = f"{resource(loc)} {resource(href)}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()


async def run_indexable(
    client: httpx.AsyncClient,
    parts: list[SitemapPart],
    collector: Collector,
    options: IndexableOptions,
) -> IndexableReport:
    """Sample each source's URLs from ``parts`` (in the index's order), request, judge."""
    summary = IndexableSummary(options.per_source, options.concurrency, options.delay, options.seed)
    sources = _sample(parts, options)
    report = IndexableReport(summary, sources, options.baseline, options.baseline_file)
    pace = Pace(client, options.concurrency, options.delay)
    started = time.perf_counter()
    sampled = {c.loc: c for source in sources for c in source.sampled}
    summary.sampled = len(sampled)
    origins = list(dict.fromkeys(robots_txt.robots_url(loc) for loc in sampled))
    summary.robots = await pace.each(origins, lambda url: robots_txt.fetch(pace, url))
    robots = dict(zip(origins, summary.robots, strict=True))
    locs = list(sampled)
    visits = {
        resource(visit.url): visit for visit in await pace.each(locs, lambda u: _visit(pace, u))
    }
    summary.pages = len(locs)
    wanted: dict[str, str] = {}
    for candidate in sampled.values():
        if visits[resource(candidate.loc)].status != 200:
            continue
        for alternate in candidate.alternates:
            key = resource(alternate)
            if key not in visits and not collector.lists_back(alternate, candidate.loc):
                wanted.setdefault(key, alternate)
    alternates = list(wanted.values())
    for visit in await pace.each(alternates, lambda u: _visit(pace, u)):
        visits[resource(visit.url)] = visit
    summary.alternates = len(alternates)
    summary.requests, summary.peak_concurrency = pace.requests, pace.peak
    summary.seconds = time.perf_counter() - started
    for source in sources:
        for candidate in source.sampled:
            visit = visits[resource(candidate.loc)]
            source.visits.append(visit)
            found = page_findings(visit, robots[robots_txt.robots_url(candidate.loc)])
            if visit.status == 200:
                found += hreflang_findings(
                    candidate.loc, candidate.alternates, collector.lists_back, visits
                )
            source.found += found
        source.found.sort(key=lambda found: CODES.index(found.code))
    return report


def _sample(parts: list[SitemapPart], options: IndexableOptions) -> list[SourceAudit]:
    """Each source's URLs to request: its N shared between its sitemaps, or all."""
    grouped: dict[str, list[SitemapPart]] = {}
    for part in parts:
        grouped.setdefault(part.source, []).append(part)
    sources = []
    for name, members in grouped.items():
        source = SourceAudit(name, [p.url for p in members], sum(p.entries for p in members))
        size = options.per_source
        if size == ALL:
            chosen = [c for part in members for c in part.candidates]
        else:
            shares = allocate([len(part.candidates) for part in members], size)
            chosen = [
                c
                for part, share in zip(members, shares, strict=True)
                for c in take(part.candidates, share, options.seed)
            ]
        source.sampled = list({c.loc: c for c in chosen}.values())
        for part in members:
            part.candidates = []
        sources.append(source)
    return sources


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
