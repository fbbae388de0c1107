"""``sitemap-middleware check URL``: fetch a live sitemap as a crawler would and report.

The root document first; when it is a ``sitemapindex``, every child in its
scope (or the ``--max-children`` first, or a ``--sample`` spread over the
index), one at a time unless ``--concurrency`` says otherwise. Each document
gets the header rules, the built-in document rules (and the XSDs with
``--schemas``), and the conditional-request probes. Locs that name one
resource (however spelt) in two children are reported on the later one in the
index's order, whichever was fetched first. With ``audit``, the lastmods of
every ``urlset`` are audited against the pages themselves (:mod:`.audit`)
once every document is checked; with ``indexable``, the URLs they list are requested and
judged as a crawler would index them (:mod:`.indexable`), after that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio
import httpx

from ..core.spec import MAX_BYTES
from .audit import AuditOptions, AuditSummary, SitemapAudit, collect, run_audit
from .check_options import USER_AGENT
from .conditional import probe
from .digests import DigestMap, digest
from .document import Document, inspect
from .fetch import NetworkError, decode, request
from .findings import Findings
from .headers import check_headers, media_type
from .indexable import Collector, IndexableOptions, IndexableReport, SitemapPart, run_indexable
from .schemas import Schemas
from .scope import resource, scope_problem
from .spread import choose

ACCEPT_ENCODING = "gzip"
INDEXABLE_FINDINGS = 3
"""The exit status of a check whose sitemaps pass but whose indexability audit finds URLs
that are not indexable (and not in the baseline)."""


@dataclass
class CheckOptions:
    url: str
    schemas: Schemas | None = None
    max_bytes: int = MAX_BYTES
    max_children: int | None = None
    sample: int | None = None
    timeout: float = 30.0
    concurrency: int = 1
    conditional: bool = True
    user_agent: str = USER_AGENT
    audit: AuditOptions | None = None
    indexable: IndexableOptions | None = None


@dataclass
class DocumentReport:
    url: str
    role: str
    findings: Findings = field(default_factory=Findings)
    status: int | None = None
    kind: str | None = None
    entries: int = 0
    size: int | None = None
    """Uncompressed bytes."""
    codings: list[str] = field(default_factory=list)
    audit: SitemapAudit | None = None
    indexable: SitemapPart | None = None

    @property
    def errors(self) -> int:
        """Errors and failed audit findings: each makes ``check`` exit 1."""
        return self.findings.errors + (self.audit.failures if self.audit else 0)

    @property
    def warnings(self) -> int:
        return self.findings.warnings + (self.audit.warnings if self.audit else 0)


@dataclass
class Report:
    url: str
    documents: list[DocumentReport] = field(default_factory=list)
    children_listed: int = 0
    children_checked: int = 0
    network_errors: list[str] = field(default_factory=list)
    audit: AuditSummary | None = None
    indexable: IndexableReport | None = None

    @property
    def errors(self) -> int:
        return sum(document.errors for document in self.documents)

    @property
    def warnings(self) -> int:
        return sum(document.warnings for document in self.documents)

    @property
    def exit_status(self) -> int:
        """0 all good, 1 a check failed, 2 a document could not be fetched at all, 3 the
        sitemaps pass but the indexability audit has new findings."""
        if self.network_errors:
            return 2
        if self.errors:
            return 1
        if self.indexable is not None and self.indexable.new:
            return INDEXABLE_FINDINGS
        return 0


async def run_check(
    options: CheckOptions, transport: httpx.AsyncBaseTransport | None = None
) -> Report:
    """Check ``options.url`` over HTTP, or through ``transport`` (an application in-process)."""
    report = Report(options.url)
    audit = options.audit
    indexable = options.indexable
    collector = Collector(indexable) if indexable is not None else None
    connections = max(
        options.concurrency,
        audit.concurrency if audit else 1,
        indexable.concurrency if indexable else 1,
    )
    async with httpx.AsyncClient(
        timeout=options.timeout,
        follow_redirects=False,
        headers={"user-agent": options.user_agent},
        limits=httpx.Limits(max_connections=connections),
        transport=transport,
    ) as client:
        checker = _Checker(client, options, report, collector)
        root = DocumentReport(options.url, "root")
        report.documents.append(root)
        document = await checker.document(root)
        if document is not None and document.kind == "sitemapindex":
            await checker.children(options.url, document)
        if audit is not None:
            audits = [d.audit for d in report.documents if d.audit is not None]
            report.audit = await run_audit(client, audits, audit)
        if indexable is not None and collector is not None:
            parts = [d.indexable for d in report.documents if d.indexable is not None]
            report.indexable = await run_indexable(client, parts, collector, indexable)
    return report


class _Checker:
    def __init__(
        self,
        client: httpx.AsyncClient,
        options: CheckOptions,
        report: Report,
        collector: Collector | None = None,
    ) -> None:
        self.client = client
        self.options = options
        self.report = report
        self.collector = collector
        self.now = datetime.now(UTC)
        # Enough to read a document of the protocol's maximum, even slightly inflated by gzip.
        self.read_limit = max(options.max_bytes, MAX_BYTES)
        # A digest of each loc's resource -> the earliest document (in the index's order)
        # that lists it, for duplicates across documents: 24 to 48 bytes a URL.
        self.seen = DigestMap()

    async def document(self, report: DocumentReport) -> Document | None:
        """Fetch and check one document; the rules' view of it, if it could be read."""
        findings = report.findings
        try:
            first = await request(
                self.client,
                "GET",
                report.url,
                {"accept-encoding": ACCEPT_ENCODING},
                self.read_limit + 1_048_576,
            )
        except NetworkError as exc:
            findings.add("fetch.network", "no answer", str(exc))
            self.report.network_errors.append(str(exc))
            return None
        report.status = first.status
        if first.status != 200:
            location = first.headers.get("location")
            findings.add(
                "http.status",
                "a sitemap must be served with status 200",
                f"{first.status}" + (f" to {location}" if location else ""),
            )
            return None
        body = None
        if first.complete:
            body, report.codings = decode(first, self.read_limit, findings)
            if body is not None and _is_html_page(first.headers.get("content-type"), body):
                # A human view (sitemap.html beside sitemap.xml) or any web page: not a
                # sitemap, so no sitemap rule applies to it.
                beside = ""
                if report.url.endswith(".html"):
                    beside = f"; the sitemap beside it is {report.url.removesuffix('.html')}.xml"
                findings.add(
                    "document.html",
                    "an HTML page, not a sitemap; check the XML document",
                    f"{first.headers.get('content-type')}{beside}",
                )
                return None
        check_headers(report.url, first.headers, findings)
        document = None
        if not first.complete:
            findings.add(
                "http.incomplete",
                "the transfer broke off before the end: crawlers discard such a sitemap",
                first.failure,
            )
        elif body is not None:
            document = self._rules(report, body)
            if self.options.audit is not None and document.kind == "urlset":
                report.audit = collect(document, report.url, self.options.audit, self.now)
            if self.collector is not None and document.kind == "urlset":
                report.indexable = self.collector.collect(document, report.url)
            document.alternates = {}
        if self.options.conditional:
            try:
                await probe(self.client, report.url, first, ACCEPT_ENCODING, findings)
            except NetworkError as exc:
                findings.add("fetch.network", "no answer", str(exc))
                self.report.network_errors.append(str(exc))
        return document

    def _rules(self, report: DocumentReport, body: bytes) -> Document:
        findings = report.findings
        report.size = len(body)
        if len(body) > self.options.max_bytes:
            findings.add(
                "limit.bytes",
                f"more than {self.options.max_bytes:,} bytes uncompressed",
                f"{len(body):,} bytes",
            )
        document = inspect(body, report.url, self.now, findings)
        report.kind = document.kind
        report.entries = document.entries
        schemas = self.options.schemas
        if schemas is not None and document.kind is not None and document.root is not None:
            for error in schemas.errors(document.root, document.kind):
                findings.add("xsd", f"not valid against {schemas.files[document.kind]}", error)
        document.root = None  # the tree is no longer needed; a 50 MB one is large
        return document

    async def children(self, index_url: str, index: Document) -> None:
        listed = list(dict.fromkeys(index.locs))
        in_scope = [child for child in listed if scope_problem(child, index_url) is None]
        chosen = choose(in_scope, self.options.max_children, self.options.sample)
        self.report.children_listed = len(listed)
        self.report.children_checked = len(chosen)
        reports = [DocumentReport(url, "child") for url in chosen]
        self.report.documents.extend(reports)
        pending = iter(enumerate(reports))

        async def worker() -> None:
            for position, report in pending:
                document = await self.document(report)
                if document is None:
                    continue
                if document.kind == "sitemapindex":
                    report.findings.add(
                        "index.nested", "a sitemap index may not list another sitemap index"
                    )
                self._duplicates_across(reports, position, document)

        async with anyio.create_task_group() as group:
            for _ in range(max(1, self.options.concurrency)):
                group.start_soon(worker)

    def _duplicates_across(
        self, reports: list[DocumentReport], position: int, document: Document
    ) -> None:
        """Report each loc another child lists too, on the later child of the two."""
        own: set[int] = set()
        for loc in document.locs:
            key = digest(resource(loc))
            if key in own:  # a duplicate within the document: reported by its own rules
                continue
            own.add(key)
            first = self.seen.setdefault(key, position)
            if first == position:
                continue
            later, earlier = max(first, position), min(first, position)
            self.seen[key] = earlier
            reports[later].findings.add(
                "duplicate.across",
                "loc already listed by another sitemap of the index",
                f"{loc} (also in {reports[earlier].url})",
            )
        document.locs = []


def _is_html_page(content_type: str | None, body: bytes) -> bool:
    """Served as HTML and reading as HTML (an XML sitemap mislabelled text/html is not)."""
    if media_type(content_type)[0] not in ("text/html", "application/xhtml+xml"):
        return False
    start = body[:512].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))
