"""Loc templates of SQLAlchemy sources: ``"/articles/{slug}"`` over the selected columns."""

from __future__ import annotations

import string
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from ..dates import Unreadable
from ..entry import Affixed
from ..settings import ConfigurationError
from .stored_dates import explain


class LocTemplate:
    """``"/articles/{slug}"``: fields name selected columns.

    Values are inserted as they are except that ``?`` and ``#`` are
    percent-encoded, so data cannot add a query or fragment; the loc rule then
    encodes anything else a URI cannot hold. A NULL value makes the row's loc
    invalid (the row is skipped and reported).
    """

    def __init__(self, template: str, columns: Sequence[str]) -> None:
        self.template = template
        self.parts: list[tuple[str, int | None]] = []
        for literal, field, spec, conversion in string.Formatter().parse(template):
            if spec or conversion:
                raise ConfigurationError(
                    f"loc: template {template!r}: format specs and conversions are not "
                    "supported; name the column alone, e.g. '/articles/{slug}'"
                )
            if literal:
                self.parts.append((literal, None))
            if field is not None:
                if field not in columns:
                    raise ConfigurationError(
                        f"loc: template {template!r} names {field!r}, which the select does not "
                        f"return; select it, or use one of: {', '.join(columns)}"
                    )
                self.parts.append(("", columns.index(field)))
        self.fields = {index for _, index in self.parts if index is not None}
        """The positions of the columns the template uses."""
        # The common one-field template ("/articles/{slug}") has a column-wise fast path.
        fields = [at for at, (_, index) in enumerate(self.parts) if index is not None]
        self._single: tuple[str, int, str] | None = None
        if len(fields) == 1:
            at = fields[0]
            index = self.parts[at][1]
            assert index is not None
            self._single = (
                "".join(literal for literal, _ in self.parts[:at]),
                index,
                "".join(literal for literal, _ in self.parts[at + 1 :]),
            )

    def __call__(self, row: Sequence[Any]) -> Any:
        """The loc; None for a NULL value, the :class:`Unreadable` value for one that cannot
        be read (the loc rule skips the row either way)."""
        out = []
        for literal, index in self.parts:
            if index is None:
                out.append(literal)
                continue
            value = row[index]
            if value is None:
                return None
            if isinstance(value, Unreadable):
                return Unreadable(value.value, explain(value))
            text = value if type(value) is str else str(value)
            if "?" in text or "#" in text:
                text = text.replace("?", "%3F").replace("#", "%23")
            out.append(text)
        return "".join(out)

    def locs(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """The whole locs of many rows, as a list."""
        return list(self.column(rows))

    def column(self, rows: Sequence[Sequence[Any]]) -> Sequence[Any]:
        """The locs of many rows; the same result as calling the template on each."""
        if self._single is not None:
            before, index, after = self._single
            values = list(map(itemgetter(index), rows))
            try:
                # One C-level pass proves every value is a string with nothing to encode
                # (the renderer reads the same joined text for the locs' characters).
                joined = "\n".join(values)
            except TypeError:
                joined = "?"
            if "?" not in joined and "#" not in joined:
                return Affixed(before, values, after, joined)
        return [self(row) for row in rows]
