"""The indexability audit in ``check``'s two outputs: lines of text, or one JSON member.

Per source, each kind of finding with its count and examples; in JSON also every
finding (``found``: code, source, URL, subject, detail, whether it is new), the
list ``--baseline`` reads back.
"""

from __future__ import annotations

from typing import Any

from .indexable import IndexableReport, SourceAudit
from .indexable_rules import CODES, MESSAGES, Found

MAX_EXAMPLES = 5


def indexable_json(report: IndexableReport) -> dict[str, Any]:
    summary = report.summary
    return {
        "per_source": summary.per_source,
        "sampled": summary.sampled,
        "requests": summary.requests,
        "pages": summary.pages,
        "alternates": summary.alternates,
        "concurrency": summary.concurrency,
        "peak_concurrency": summary.peak_concurrency,
        "delay": summary.delay,
        "seed": summary.seed,
        "seconds": round(summary.seconds, 3),
        "robots_txt": [
            {
                "url": robots.url,
                "status": robots.status,
                "disallow_all": robots.disallow_all,
                "note": robots.note,
            }
            for robots in summary.robots
        ],
        "baseline": report.baseline_file,
        "findings": len(report.found),
        "new": len(report.new),
        "sources": [_source_json(report, source) for source in report.sources],
        "found": [
            {
                "code": found.code,
                "source": source.name,
                "url": found.url,
                "subject": found.subject,
                "detail": found.detail,
                "new": report.is_new(found),
            }
            for source in report.sources
            for found in source.found
        ],
    }


def _source_json(report: IndexableReport, source: SourceAudit) -> dict[str, Any]:
    return {
        "source": source.name,
        "sitemaps": source.sitemaps,
        "urls": source.urls,
        "sampled": len(source.sampled),
        "findings": [
            {
                "code": code,
                "message": MESSAGES[code],
                "count": len(found),
                "new": sum(1 for f in found if report.is_new(f)),
                "of": len(source.sampled),
                "examples": [_example(f) for f in _examples(report, found)],
            }
            for code, found in _kinds(source).items()
        ],
        "pages": [
            {"url": v.url, "status": v.status, "location": v.location, "error": v.error}
            for v in source.visits
        ],
    }


def indexable_lines(report: IndexableReport) -> list[str]:
    summary = report.summary
    per = "all" if summary.per_source == "all" else f"at most {summary.per_source}"
    lines = [
        f"indexability audit: {_count(len(report.sources), 'source')}, "
        f"{summary.sampled} URLs sampled ({per} per source), {summary.requests} requests "
        f"({len(summary.robots)} robots.txt, "
        f"{summary.pages} pages, {summary.alternates} hreflang alternates) in "
        f"{summary.seconds:.2f} s, at most {summary.peak_concurrency} at once "
        f"(--audit-concurrency {summary.concurrency}, --audit-delay {summary.delay:g})",
    ]
    lines += [f"  {robots.url}: {robots.note}" for robots in summary.robots]
    for source in report.sources:
        kinds = _kinds(source)
        count = sum(len(found) for found in kinds.values())
        lines.append(
            f"  {source.name} ({_count(len(source.sitemaps), 'sitemap')}, "
            f"{_count(source.urls, 'URL')}, {len(source.sampled)} requested): "
            + (_count(count, "finding") if count else "no findings")
        )
        for code, found in kinds.items():
            verdict = "FAIL " if any(report.is_new(f) for f in found) else "known"
            lines.append(
                f"    {verdict} {code}: {MESSAGES[code]} ({len(found)} of {len(source.sampled)})"
            )
            for example in _examples(report, found):
                known = "" if report.is_new(example) else "known: "
                lines.append(f"            {known}{_example(example)}")
    total, new = len(report.found), len(report.new)
    if report.baseline is not None:
        lines.append(f"  {_count(total, 'finding')}, {new} new (not in {report.baseline_file})")
    else:
        lines.append(f"  {_count(total, 'finding')}")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _kinds(source: SourceAudit) -> dict[str, list[Found]]:
    kinds: dict[str, list[Found]] = {}
    for found in source.found:
        kinds.setdefault(found.code, []).append(found)
    return {code: kinds[code] for code in CODES if code in kinds}


def _examples(report: IndexableReport, found: list[Found]) -> list[Found]:
    """A few of ``found``, the new ones first."""
    return sorted(found, key=lambda f: not report.is_new(f))[:MAX_EXAMPLES]


def _example(found: Found) -> str:
    return f"{found.url}: {found.detail}"
