"""The lastmod audit in ``check``'s two outputs: lines of text, or JSON members."""

from __future__ import annotations

from typing import Any

from .audit import AuditSummary, SitemapAudit
from .audit_rules import AuditFinding, PageAnswer

_VERDICTS = {"pass": "pass", "warn": "WARN", "fail": "FAIL", "n/a": "n/a "}


def audit_json(audit: SitemapAudit) -> dict[str, Any]:
    stats = audit.stats
    asked = [a for a in audit.answers if not a.skipped]
    return {
        "entries": stats.entries,
        "lastmods": stats.with_lastmod,
        "pages_sampled": len(audit.answers),
        "pages_requested": len(asked),
        "findings": [_finding_json(finding) for finding in audit.findings],
        "pages": [_page_json(answer) for answer in audit.answers],
    }


def _page_json(answer: PageAnswer) -> dict[str, Any]:
    return {
        "loc": answer.listed.loc,
        "lastmod": answer.listed.lastmod,
        "skipped": answer.skipped,
        "method": answer.method,
        "status": answer.status,
        "last_modified": answer.last_modified,
        "date": answer.date,
        "error": answer.error,
    }


def _finding_json(finding: AuditFinding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "verdict": finding.verdict,
        "message": finding.message,
        "count": finding.count,
        "of": finding.of,
        "share": finding.share,
        "examples": finding.examples,
    }


def summary_json(summary: AuditSummary) -> dict[str, Any]:
    return {
        "pages": summary.pages,
        "sampled": summary.sampled,
        "requests": summary.requests,
        "head": summary.head,
        "get": summary.get,
        "head_refused": summary.head_refused,
        "skipped": summary.skipped,
        "concurrency": summary.concurrency,
        "peak_concurrency": summary.peak_concurrency,
        "delay": summary.delay,
        "seed": summary.seed,
        "seconds": round(summary.seconds, 3),
    }


def audit_lines(audit: SitemapAudit) -> list[str]:
    stats = audit.stats
    asked = sum(1 for a in audit.answers if not a.skipped)
    lines = [
        f"     lastmod audit: {stats.with_lastmod:,} of {stats.entries:,} URLs with a lastmod; "
        f"{asked} of {len(audit.answers)} sampled pages requested"
    ]
    for finding in audit.findings:
        if finding.verdict == "pass":
            continue
        counted = f" ({finding.count} of {finding.of})" if finding.of else ""
        lines.append(
            f"       {_VERDICTS[finding.verdict]} {finding.code}: {finding.message}{counted}"
        )
        lines += [f"               {example}" for example in finding.examples]
    passed = [finding.code for finding in audit.findings if finding.verdict == "pass"]
    if passed:
        lines.append(f"       pass {', '.join(passed)}")
    return lines


def summary_line(summary: AuditSummary) -> str:
    refused = f", {summary.head_refused} HEAD refused" if summary.head_refused else ""
    skipped = f", {summary.skipped} skipped (budget spent)" if summary.skipped else ""
    return (
        f"lastmod audit: {summary.sampled} of {summary.pages} pages sampled, "
        f"{summary.requests} requests ({summary.head} HEAD, {summary.get} GET{refused}{skipped}) "
        f"in {summary.seconds:.2f} s, at most {summary.peak_concurrency} at once "
        f"(--audit-concurrency {summary.concurrency}, --audit-delay {summary.delay:g})"
    )
