"""The row mapping of SQLAlchemy sources: a batch of rows as raw entries, column by column.

C-level passes over a batch's rows beat a loop over its rows; the keys are read only
when a bad row must be named.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ..dates import Unreadable
from ..entry import Affixed, Batch, Repeated
from ..settings import ConfigurationError
from .stored_dates import explain, parse_column

if TYPE_CHECKING:
    from sqlalchemy.engine import Row

    from .sql_options import SQLOptions
    from .sql_reads import ReadPlan


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


class KeyColumn(Sequence[Any]):
    """The keys of a batch's rows, read from the rows when asked for (bad rows only)."""

    __slots__ = ("get", "rows", "single")

    def __init__(self, rows: Sequence[Any], key_index: Sequence[int | None]) -> None:
        self.rows = rows
        self.get = itemgetter(*key_index)  # one column: the value; several: a tuple
        self.single = len(key_index) == 1

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(map(self.get, self.rows[index]))
        return self.get(self.rows[index])

    def __iter__(self) -> Iterator[Any]:
        return map(self.get, self.rows)


class RowMapping:
    """Rows as raw entries, as the options and the read plan say."""

    def __init__(self, options: SQLOptions, plan: ReadPlan) -> None:
        self.loc = options.loc
        self.key_index = options.key_index
        self.nullable_key = options.nullable_key
        self.lastmod_index = options.lastmod_index
        self.lastmod_parser = options.lastmod_parser if plan.lastmods_as_text else None
        self.lastmod_in_utc = options.lastmod_in_utc
        self.changefreq_index, self.changefreq = options.changefreq_index, options.changefreq
        self.priority_index, self.priority = options.priority_index, options.priority

    def map_rows(self, rows: Sequence[Row[Any]]) -> Batch:
        """Rows as raw entries, built column by column (C-level passes beat a row loop).

        The keys only name bad rows in logs: they are read when asked for.
        """
        count = len(rows)
        keys = KeyColumn(rows, self.key_index)
        if isinstance(self.loc, LocTemplate):
            locs = self.loc.column(rows)
        else:
            locs = [self._call_loc(row) for row in rows]
        if self.nullable_key and _holds_none(keys):
            pairs = zip(keys, locs, strict=True)
            locs = [_NULL_KEY if _has_none(key) else loc for key, loc in pairs]
        lastmods = _column(rows, self.lastmod_index, None, count)
        texts = None
        if self.lastmod_parser is not None:  # read as stored text: parsed here
            texts, lastmods = lastmods, parse_column(lastmods, self.lastmod_parser)
        if self.lastmod_in_utc:
            lastmods = [_in_utc(value) for value in lastmods]
            texts = None  # the values no longer read as their stored text
        return Batch(
            keys,
            locs,
            lastmods,
            _column(rows, self.changefreq_index, self.changefreq, count),
            _column(rows, self.priority_index, self.priority, count),
            texts,
        )

    def _call_loc(self, row: Row[Any]) -> Any:
        try:
            return self.loc(row)
        except Exception as exc:  # a callable failing on one row is a bad row, not a failure
            return Unreadable(None, f"the loc function raised {exc!r:.200}")


_NULL_KEY = Unreadable(None, "the key is NULL: a row without a key cannot be placed on a page")


def _column(
    rows: Sequence[Row[Any]], index: int | None, constant: Any, count: int
) -> Sequence[Any]:
    if index is None:
        return Repeated(constant, count)
    return list(map(itemgetter(index), rows))


def _has_none(key: Any) -> bool:
    return key is None or (type(key) is tuple and None in key)


def _holds_none(keys: KeyColumn) -> bool:
    """Whether any key of a batch is (or holds) NULL; one C-level pass for one key column."""
    if keys.single:
        return None in list(keys)
    return any(None in key for key in keys)


def _in_utc(value: Any) -> Any:
    if type(value) is datetime and value.tzinfo is not None and value.tzinfo is not UTC:
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):  # out of range in UTC: the rules judge it as it is
            return value
    return value
