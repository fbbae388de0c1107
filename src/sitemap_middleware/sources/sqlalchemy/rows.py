"""The row mapping of SQLAlchemy sources: a batch of rows as raw entries, column by column.

C-level passes over a batch's rows beat a loop over its rows; the keys are read only
when a bad row must be named.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ...core.dates import Unreadable
from ...output.entry import Batch, Repeated
from .locs import LocTemplate
from .stored_dates import parse_column

if TYPE_CHECKING:
    from sqlalchemy.engine import Row

    from .options import SQLOptions
    from .reads import ReadPlan


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
