"""What ``check`` finds: problems grouped by code and message, with a few examples each.

A document with 50,000 bad lastmods gives one finding counted 50,000 times,
not 50,000 lines. Codes are stable (``scope.loc``, ``conditional.precedence``)
so scripts can act on ``--json`` output; messages are for people.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
"""Worth knowing, not a problem (``check`` still passes)."""

# Everything else is an error: it makes check exit 1.
WARNINGS = frozenset(
    {
        "alternates.element",  # an XHTML element crawlers skip
        "image.retired",  # image tags Google no longer reads
        "loc.whitespace",  # the XSD collapses it; strict parsers may not
        "news.old",  # news:news Google News no longer reads
        "schema.extension",  # an element in a namespace no crawler knows
        "xml.doctype",
    }
)

MAX_EXAMPLES = 5


@dataclass
class Finding:
    code: str
    message: str
    severity: str = ERROR
    count: int = 0
    examples: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "count": self.count,
            "examples": self.examples,
        }


class Findings:
    """The problems of one document (or of the whole run), in the order first seen."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], Finding] = {}

    def add(
        self, code: str, message: str, example: str | None = None, severity: str | None = None
    ) -> None:
        """Count a finding; its severity is the code's unless ``severity`` says otherwise."""
        finding = self._found.get((code, message))
        if finding is None:
            severity = severity or (WARNING if code in WARNINGS else ERROR)
            finding = self._found[(code, message)] = Finding(code, message, severity)
        finding.count += 1
        if example is not None and len(finding.examples) < MAX_EXAMPLES:
            finding.examples.append(_short(example))

    def __iter__(self) -> Iterator[Finding]:
        return iter(self._found.values())

    def __len__(self) -> int:
        return len(self._found)

    def codes(self) -> set[str]:
        return {finding.code for finding in self}

    @property
    def errors(self) -> int:
        return sum(1 for finding in self if finding.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for finding in self if finding.severity == WARNING)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
