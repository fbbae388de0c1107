"""Lastmod columns that the database keeps as text (SQLite's ``DateTime`` and ``Date``).

SQLAlchemy's SQLite types store dates as ISO 8601 text and turn every value
back into a ``datetime`` with ``datetime.fromisoformat`` (``date.fromisoformat``
for ``Date``), only for the renderer to write it as text again. For such a
column a source selects the stored text as it is (``type_coerce`` to
``String``: no SQL changes) and parses the column itself with the same
function, so it gets the same values, and keeps the text, whose digits the
renderer copies once it has proved their layout. A stored value the parser
rejects (``'2024-02-30'``, ``'soon'``, a number) becomes
:class:`~sitemap_middleware.dates.Unreadable`: the bad-row rule drops that
field, where SQLAlchemy's own conversion would fail the whole response.

Other dialects (PostgreSQL drivers return ``datetime`` objects) and columns
with any other conversion are read as SQLAlchemy reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import String, type_coerce
from sqlalchemy.engine import Dialect, processors
from sqlalchemy.sql.elements import ColumnElement

from ..dates import Unreadable

Parser = Callable[[str], date]

# SQLAlchemy's conversions of stored text, and the parser each one is.
_PARSERS: tuple[tuple[object, Parser], ...] = (
    (processors.str_to_datetime, datetime.fromisoformat),
    (processors.str_to_date, date.fromisoformat),
)


def text_parser(column: ColumnElement[Any], dialect: Dialect) -> Parser | None:
    """The parser SQLAlchemy applies to this column's stored text on ``dialect``, or None."""
    try:
        processor = column.type.dialect_impl(dialect).result_processor(dialect, None)
    except Exception:  # a type that needs a real cursor description: read it as it is
        return None
    for known, parser in _PARSERS:
        if processor is known:
            return parser
    return None


def converts_nothing(column: ColumnElement[Any], dialect: Dialect) -> bool:
    """Whether SQLAlchemy gives this column's values as the driver returns them."""
    try:
        return column.type.dialect_impl(dialect).result_processor(dialect, None) is None
    except Exception:
        return False


def as_text(column: ColumnElement[Any], name: str) -> ColumnElement[Any]:
    """The column as its stored text, under the same name (the SQL is unchanged)."""
    return type_coerce(column, String).label(name)


def parse_column(texts: Sequence[Any], parser: Parser) -> list[Any]:
    """The values SQLAlchemy would give, with :class:`Unreadable` where it would raise."""
    try:
        return list(map(parser, texts))  # the common case: one C-level pass
    except (TypeError, ValueError):
        return [parse_one(text, parser) for text in texts]


def parse_one(text: Any, parser: Parser) -> Any:
    if text is None:
        return None
    try:
        return parser(text)
    except (TypeError, ValueError) as exc:
        return Unreadable(text, str(exc))
