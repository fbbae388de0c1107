"""``check`` output: a readable report, or one JSON object (``--json``)."""

from __future__ import annotations

import io
import json
import re
import secrets
from collections.abc import Iterator
from typing import Any, TextIO

from .audit_report import audit_json, audit_lines, summary_json, summary_line
from .check import DocumentReport, Report
from .findings import ERROR, WARNING
from .indexable_report import Streamed, indexable_json, indexable_lines


def as_json(report: Report) -> str:
    out = io.StringIO()
    write_json(report, out)
    return out.getvalue()


def write_json(report: Report, out: TextIO) -> None:
    """The report as one JSON object on ``out``; its long arrays (:class:`Streamed`: an
    indexability audit's pages and findings) are written item by item, not built whole."""
    document: dict[str, Any] = {
        "url": report.url,
        "exit_status": report.exit_status,
        "ok": report.exit_status == 0,
        "errors": report.errors,
        "warnings": report.warnings,
        "children": {"listed": report.children_listed, "checked": report.children_checked},
        "documents": [_document_json(d) for d in report.documents],
    }
    if report.audit is not None:
        document["audit"] = summary_json(report.audit)
    if report.indexable is not None:
        document["indexable"] = indexable_json(report.indexable)
    streamed: list[Streamed] = []
    token = secrets.token_hex(8)

    def placeholder(value: object) -> str:
        if not isinstance(value, Streamed):
            raise TypeError(f"{type(value).__name__} is not JSON serializable")
        streamed.append(value)
        return f"\0{token}:{len(streamed) - 1}"

    # The rest of the document is small: written whole, each array in place of its marker.
    text = json.dumps(document, indent=2, ensure_ascii=False, default=placeholder)
    written = 0
    for marker in re.finditer(rf'"\\u0000{token}:(\d+)"', text):
        out.write(text[written : marker.start()])
        line = text[text.rfind("\n", 0, marker.start()) + 1 :]
        _write_array(out, streamed[int(marker[1])].items(), len(line) - len(line.lstrip(" ")))
        written = marker.end()
    out.write(text[written:])


def _write_array(out: TextIO, items: Iterator[Any], indent: int) -> None:
    """A JSON array as ``json.dumps(..., indent=2)`` writes it at ``indent``."""
    inner = "\n" + " " * (indent + 2)
    empty = True
    for item in items:
        out.write("[" + inner if empty else "," + inner)
        out.write(json.dumps(item, indent=2, ensure_ascii=False).replace("\n", inner))
        empty = False
    out.write("[]" if empty else "\n" + " " * indent + "]")


def _document_json(document: DocumentReport) -> dict[str, Any]:
    return {
        "url": document.url,
        "role": document.role,
        "status": document.status,
        "kind": document.kind,
        "entries": document.entries,
        "bytes": document.size,
        "codings": document.codings,
        "ok": document.errors == 0,
        "findings": [finding.as_json() for finding in document.findings],
        **({"audit": audit_json(document.audit)} if document.audit is not None else {}),
    }


def as_text(report: Report) -> str:
    lines = [f"sitemap-middleware check {report.url}"]
    if report.children_listed:
        lines.append(
            f"index lists {report.children_listed} sitemaps; {report.children_checked} checked"
        )
    lines.append("")
    for document in report.documents:
        verdict = "FAIL" if document.errors else "ok  "
        lines.append(f"{verdict} {document.url}{_summary(document)}")
        for finding in document.findings:
            times = f" ({finding.count}x)" if finding.count > 1 else ""
            severity = {ERROR: "error  ", WARNING: "warning"}.get(finding.severity, "info   ")
            lines.append(f"     {severity} {finding.code}: {finding.message}{times}")
            for example in finding.examples:
                lines.append(f"               {example}")
        if document.audit is not None:
            lines += audit_lines(document.audit)
    failed = sum(1 for d in report.documents if d.errors)
    if report.audit is not None:
        lines += ["", summary_line(report.audit)]
    if report.indexable is not None:
        lines += ["", *indexable_lines(report.indexable)]
    lines += [
        "",
        f"{len(report.documents)} documents checked, {failed} failed: "
        f"{report.errors} errors, {report.warnings} warnings (exit status {report.exit_status})",
    ]
    return "\n".join(lines)


def _summary(document: DocumentReport) -> str:
    parts = []
    if document.kind is not None:
        noun = "URLs" if document.kind == "urlset" else "sitemaps"
        parts.append(f"{document.kind}, {document.entries:,} {noun}")
    if document.size is not None:
        parts.append(f"{document.size:,} bytes")
    parts += document.codings
    return f"  ({'; '.join(parts)})" if parts else ""
