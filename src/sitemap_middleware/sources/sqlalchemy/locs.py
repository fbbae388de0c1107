"""Loc templates of SQLAlchemy sources: ``"/articles/{slug}"`` over the selected columns."""

from __future__ import annotations

import string
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from ...core.dates import Unreadable
from ...output.entry import Affixed
from ...settings import ConfigurationError
from .stored_dates import explain

# A column value is data: a "%" in it is a character, never an escape, and "?" or "#" cannot
# start a query or fragment. These are encoded here; the loc rule encodes every other
# character a URI cannot hold the same way (``urls.iri_to_uri``), so that a value comes out
# as Django's ``reverse()`` writes it (``quote(value, safe="!$&'()*+,;=/~:@")``).
_PATH_VALUE = str.maketrans({"%": "%25", "?": "%3F", "#": "%23"})
# In a query or fragment a value is one parameter's value: "&", "=" and "+" (a space in
# form decoding) are encoded too.
_QUERY_VALUE = str.maketrans(
    {"%": "%25", "?": "%3F", "#": "%23", "&": "%26", "=": "%3D", "+": "%2B"}
)


def _plain_in_path(text: str) -> bool:
    """Whether a value is written as it is in a path (a C-level scan for each character)."""
    return "%" not in text and "?" not in text and "#" not in text


def _plain_in_query(text: str) -> bool:
    """Whether a value is written as it is in a query or fragment."""
    return _plain_in_path(text) and "&" not in text and "=" not in text and "+" not in text


class LocTemplate:
    """``"/articles/{slug}"``: fields name selected columns.

    Values are data, percent-encoded whole: ``%`` becomes ``%25`` (a value never holds an
    escape), ``?`` and ``#`` are encoded so data cannot add a query or fragment, and in a
    query or fragment ``&``, ``=`` and ``+`` too; ``/`` is kept in a path, so a column may
    hold a path. The loc rule then encodes everything else a URI cannot hold. The result is
    the URL a router decodes back into the value (Django's ``reverse()`` writes the same).
    A NULL value makes the row's loc invalid (the row is skipped and reported).
    """

    def __init__(self, template: str, columns: Sequence[str]) -> None:
        self.template = template
        # (literal, None) or ("", column, the table encoding its value: a path's, or a
        # query's after a "?" or "#").
        self.parts: list[tuple[str, int | None, dict[int, str]]] = []
        in_query = False
        for literal, field, spec, conversion in string.Formatter().parse(template):
            if spec or conversion:
                raise ConfigurationError(
                    f"loc: template {template!r}: format specs and conversions are not "
                    "supported; name the column alone, e.g. '/articles/{slug}'"
                )
            if literal:
                self.parts.append((literal, None, _PATH_VALUE))
                in_query = in_query or "?" in literal or "#" in literal
            if field is not None:
                if field not in columns:
                    raise ConfigurationError(
                        f"loc: template {template!r} names {field!r}, which the select does not "
                        f"return; select it, or use one of: {', '.join(columns)}"
                    )
                table = _QUERY_VALUE if in_query else _PATH_VALUE
                self.parts.append(("", columns.index(field), table))
        self.fields = {index for _, index, _ in self.parts if index is not None}
        """The positions of the columns the template uses."""
        # The common one-field template ("/articles/{slug}") has a column-wise fast path.
        fields = [at for at, (_, index, _) in enumerate(self.parts) if index is not None]
        self._single: tuple[str, int, str, dict[int, str]] | None = None
        if len(fields) == 1:
            at = fields[0]
            _, index, table = self.parts[at]
            assert index is not None
            self._single = (
                "".join(literal for literal, _, _ in self.parts[:at]),
                index,
                "".join(literal for literal, _, _ in self.parts[at + 1 :]),
                table,
            )

    def __call__(self, row: Sequence[Any]) -> Any:
        """The loc; None for a NULL value, the :class:`Unreadable` value for one that cannot
        be read (the loc rule skips the row either way)."""
        out = []
        for literal, index, table in self.parts:
            if index is None:
                out.append(literal)
                continue
            value = row[index]
            if value is None:
                return None
            if isinstance(value, Unreadable):
                return Unreadable(value.value, explain(value))
            text = value if type(value) is str else str(value)
            if table is _PATH_VALUE:
                if "%" in text or "?" in text or "#" in text:
                    text = text.translate(table)
            elif not _plain_in_query(text):
                text = text.translate(table)
            out.append(text)
        return "".join(out)

    def locs(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """The whole locs of many rows, as a list."""
        return list(self.column(rows))

    def column(self, rows: Sequence[Sequence[Any]]) -> Sequence[Any]:
        """The locs of many rows; the same result as calling the template on each."""
        if self._single is not None:
            before, index, after, table = self._single
            values = list(map(itemgetter(index), rows))
            try:
                # One C-level pass proves every value is a string with nothing to encode
                # (the renderer reads the same joined text for the locs' characters).
                joined = "\n".join(values)
            except TypeError:
                return [self(row) for row in rows]
            plain = _plain_in_path if table is _PATH_VALUE else _plain_in_query
            if plain(joined):
                return Affixed(before, values, after, joined)
            return Affixed(before, [value.translate(table) for value in values], after)
        return [self(row) for row in rows]
