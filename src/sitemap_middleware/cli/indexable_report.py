"""The indexability audit in ``check``'s two outputs: lines of text, or one JSON member.

Per source, each kind of finding with its count and examples; in JSON also every
page's answer (``pages``) and every finding (``found``: code, source, URL, subject,
detail, whether it is new), the list ``--baseline`` reads back. Those two lists are
read back from disk as they are written (:class:`Streamed`), never held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .indexable import MAX_EXAMPLES, IndexableReport, SourceAudit
from .indexable_rules import MESSAGES, Found

__all__ = ["MAX_EXAMPLES", "Streamed", "indexable_json", "indexable_lines"]


class Streamed:
    """A JSON array whose items are written one by one as ``items()`` yields them
    (:func:`~.report.write_json`)."""

    def __init__(self, items: Callable[[], Iterator[Any]]) -> None:
        self.items = items


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
        "findings": report.findings,
        "new": report.new,
        "sources": [_source_json(report, source) for source in report.sources],
        "found": Streamed(report.found),
    }


def _source_json(report: IndexableReport, source: SourceAudit) -> dict[str, Any]:
    return {
        "source": source.name,
        "sitemaps": source.sitemaps,
        "urls": source.urls,
        "sampled": source.sampled,
        "findings": [
            {
                "code": kind.code,
                "message": MESSAGES[kind.code],
                "count": kind.count,
                "new": kind.new,
                "of": source.sampled,
                "examples": [_example(f) for f in kind.examples],
            }
            for kind in source.ordered()
        ],
        "pages": Streamed(lambda: report.pages(source)),
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
        count = source.findings
        lines.append(
            f"  {source.name} ({_count(len(source.sitemaps), 'sitemap')}, "
            f"{_count(source.urls, 'URL')}, {source.sampled} requested): "
            + (_count(count, "finding") if count else "no findings")
        )
        for kind in source.ordered():
            verdict = "FAIL " if kind.new else "known"
            lines.append(
                f"    {verdict} {kind.code}: {MESSAGES[kind.code]} "
                f"({kind.count} of {source.sampled})"
            )
            for example in kind.examples:
                known = "" if report.is_new(example) else "known: "
                lines.append(f"            {known}{_example(example)}")
    total, new = report.findings, report.new
    if report.baseline is not None:
        lines.append(f"  {_count(total, 'finding')}, {new} new (not in {report.baseline_file})")
    else:
        lines.append(f"  {_count(total, 'finding')}")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _example(found: Found) -> str:
    return f"{found.url}: {found.detail}"
