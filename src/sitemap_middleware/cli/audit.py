"""``check --audit-lastmod N``: do the sitemaps' lastmods tell the truth?

As ``check`` reads each ``urlset`` it counts its lastmods (:mod:`.audit_rules`)
and keeps a pre-sample of its pages (:mod:`.audit_sample`). Once every
sitemap is read, N pages spread over them are requested, each once: ``HEAD``
(with check's user agent), or ``GET`` on a host that answered ``HEAD`` with
405 or 501. At most ``concurrency`` requests are in flight, each connection
waits ``delay`` seconds after each answer, and no more than N page requests
are made in all: a GET after a refused HEAD takes one from the budget, and the
pages left when it is spent are reported as skipped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

import httpx

from .audit_rules import (
    FAIL,
    WARN,
    AuditFinding,
    LastmodStats,
    PageAnswer,
    future_finding,
    lastmod_stats,
    page_findings,
    stamp_finding,
)
from .audit_sample import Listed, allocate, presample, take
from .document import Document
from .fetch import Exchange, NetworkError
from .pace import Pace
from .scope import scope_problem

HEAD_REFUSED = (405, 501)
GET_BODY = 1_048_576
"""The most of a page's body a GET reads (and drops); a longer one closes its connection."""


@dataclass
class AuditOptions:
    pages: int
    concurrency: int = 2
    delay: float = 0.2
    seed: int | None = None


@dataclass
class SitemapAudit:
    """The audit of one ``urlset``: its lastmods, the pages sampled from it, the findings."""

    stats: LastmodStats
    candidates: list[Listed] = field(default_factory=list)
    answers: list[PageAnswer] = field(default_factory=list)
    findings: list[AuditFinding] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(1 for finding in self.findings if finding.verdict == FAIL)

    @property
    def warnings(self) -> int:
        return sum(1 for finding in self.findings if finding.verdict == WARN)

    def conclude(self) -> None:
        self.findings = [
            stamp_finding(self.stats),
            future_finding(self.stats),
            *page_findings(self.answers),
        ]


@dataclass
class AuditSummary:
    """The audit's requests over the whole run."""

    pages: int
    concurrency: int
    delay: float
    seed: int | None
    sampled: int = 0
    requests: int = 0
    head: int = 0
    get: int = 0
    head_refused: int = 0
    skipped: int = 0
    peak_concurrency: int = 0
    seconds: float = 0.0


def collect(document: Document, url: str, options: AuditOptions, now: datetime) -> SitemapAudit:
    """Count the lastmods of the ``urlset`` ``document`` served at ``url`` and keep a
    pre-sample of its in-scope pages."""
    audit = SitemapAudit(lastmod_stats(document.locs, document.lastmods, now))
    entries = {}
    for loc, lastmod in zip(document.locs, document.lastmods, strict=True):
        if loc not in entries and scope_problem(loc, url) is None:
            entries[loc] = Listed(loc, lastmod)
    audit.candidates = presample(list(entries.values()), options.pages, options.seed, url)
    return audit


async def run_audit(
    client: httpx.AsyncClient, audits: list[SitemapAudit], options: AuditOptions
) -> AuditSummary:
    """Share the N pages between the sitemaps (in the order given), request them, conclude."""
    summary = AuditSummary(options.pages, options.concurrency, options.delay, options.seed)
    shares = allocate([len(a.candidates) for a in audits], options.pages)
    pages: list[tuple[SitemapAudit, Listed]] = []
    for audit, share in zip(audits, shares, strict=True):
        pages += [(audit, listed) for listed in take(audit.candidates, share, options.seed)]
        audit.candidates = []
    summary.sampled = len(pages)
    started = time.perf_counter()
    answers = await _Prober(client, options, summary).probe_all([p for _, p in pages])
    summary.seconds = time.perf_counter() - started
    for (audit, _), answer in zip(pages, answers, strict=True):
        audit.answers.append(answer)
    for audit in audits:
        audit.conclude()
    summary.skipped = sum(1 for answer in answers if answer.skipped)
    return summary


class _Prober:
    def __init__(
        self, client: httpx.AsyncClient, options: AuditOptions, summary: AuditSummary
    ) -> None:
        self.pace = Pace(client, options.concurrency, options.delay)
        self.summary = summary
        self.left = options.pages
        self.refused: set[str] = set()

    async def probe_all(self, pages: list[Listed]) -> list[PageAnswer]:
        answers = await self.pace.each(pages, self.probe)
        self.summary.peak_concurrency = self.pace.peak
        return answers

    async def probe(self, listed: Listed) -> PageAnswer:
        """HEAD the page (GET where HEAD is refused) within the budget."""
        host = urlsplit(listed.loc).netloc.lower()
        method = "GET" if host in self.refused else "HEAD"
        while self.left > 0:
            self.left -= 1
            try:
                exchange = await self._send(method, listed.loc)
            except NetworkError as exc:
                return PageAnswer(listed, method, error=str(exc))
            if method == "HEAD" and exchange.status in HEAD_REFUSED:
                self.refused.add(host)
                self.summary.head_refused += 1
                method = "GET"
                continue
            headers = exchange.headers
            return PageAnswer(
                listed, method, exchange.status, headers.get("last-modified"), headers.get("date")
            )
        return PageAnswer(listed, skipped=True)

    async def _send(self, method: str, url: str) -> Exchange:
        self.summary.requests += 1
        self.summary.head += method == "HEAD"
        self.summary.get += method == "GET"
        return await self.pace.send(method, url, {}, GET_BODY if method == "GET" else 0)
