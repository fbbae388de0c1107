"""Stored values read so that one a conversion rejects is a bad field, never a failed page.

Lastmod columns that the database keeps as text (SQLite's ``DateTime`` and ``Date``).

SQLAlchemy's SQLite types store dates as ISO 8601 text and turn every value
back into a ``datetime`` with ``datetime.fromisoformat`` (``date.fromisoformat``
for ``Date``), only for the renderer to write it as text again. For such a
column a source selects the stored text as it is (``type_coerce`` to
``String``: no SQL changes) and parses the column itself with the same
function, so it gets the same values, and keeps the text, whose digits the
renderer copies once it has proved their layout. A stored value the parser
rejects (``'2024-02-30'``, ``'soon'``, a number) becomes
:class:`~sitemap_middleware.core.dates.Unreadable`: the bad-row rule drops that
field, where SQLAlchemy's own conversion would fail the whole response.

PostgreSQL's date and time types are read as their text (``CAST(... AS
TEXT)``) and parsed the same way: both drivers refuse values Python has no
``datetime`` for (``'infinity'``, years past 9999 or before 1) and fail the
whole fetch.

Every other column whose SQLAlchemy type converts stored values (``Numeric``,
``Enum``, ``JSON``, ``Uuid``, ...) is read through :class:`Tolerant`, which
applies the type's own conversion per value and gives :class:`Unconvertible`
where it raises. That marker fails any use (``str``, ``bool``, ``float``,
formatting): a loc built from it is a bad row, a function of the row that
uses it fails for that row only, a lastmod, changefreq or priority holding it
is a bad field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, NoReturn

from sqlalchemy import Date, DateTime, String, Text, Time, cast, null, type_coerce
from sqlalchemy.engine import Dialect, processors
from sqlalchemy.sql.elements import ColumnElement, Label, UnaryExpression
from sqlalchemy.sql.operators import custom_op
from sqlalchemy.types import NullType, TypeDecorator, TypeEngine

from ...core.dates import Unreadable

Parser = Callable[[str], Any]
Processor = Callable[[Any], Any]


class UnreadableValue(ValueError):
    """Raised by any use of an :class:`Unconvertible` value."""


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Unconvertible(Unreadable):
    """A stored value that its column type's conversion (SQLAlchemy's or the driver's) rejects.

    Every use that would turn it into data raises :class:`UnreadableValue`, so a
    loc or extension built from it fails for its row alone and is reported.
    """

    column: str = ""

    def __repr__(self) -> str:
        return f"<unreadable {self.column} {self.value!r:.60}>"

    def _fail(self, *_: Any) -> NoReturn:
        raise UnreadableValue(explain(self))

    __str__ = __bool__ = __float__ = __int__ = __index__ = __format__ = __iter__ = _fail


# SQLAlchemy's conversions of stored text, and the parser each one is.
_PARSERS: tuple[tuple[object, Parser], ...] = (
    (processors.str_to_datetime, datetime.fromisoformat),
    (processors.str_to_date, date.fromisoformat),
)


def explain(value: Unreadable) -> str:
    """Why a stored value cannot be used, naming its column when known."""
    if isinstance(value, Unconvertible):
        return f"column {value.column!r}: stored value {value.value!r:.60} cannot be read: " + (
            value.reason
        )
    return value.reason


# PostgreSQL's date and time types, read as text, and the parser of each (ISO DateStyle,
# the server's default: '2024-05-01 12:00:00.5+02', '2024-05-01').
_PG_PARSERS: tuple[tuple[type[TypeEngine[Any]], Parser], ...] = (
    (DateTime, datetime.fromisoformat),
    (Date, date.fromisoformat),
    (Time, time.fromisoformat),
)


def _base(type_: TypeEngine[Any]) -> TypeEngine[Any]:
    while isinstance(type_, TypeDecorator):
        type_ = type_.impl_instance
    return type_


def _pg_parser(type_: TypeEngine[Any], dialect: Dialect) -> Parser | None:
    """The parser of a PostgreSQL date or time column's text; None for other columns."""
    if dialect.name != "postgresql":
        return None
    type_ = _base(type_)
    for kind, parser in _PG_PARSERS:
        if isinstance(type_, kind):
            return parser
    return None


def text_parser(column: ColumnElement[Any], dialect: Dialect) -> Parser | None:
    """The parser of this column's stored text on ``dialect`` (as SQLAlchemy's conversion
    would read it), or None when it is not a date kept as text or read as text."""
    if isinstance(column.type, TypeDecorator):  # its own conversion follows the stored one
        return None
    pg = _pg_parser(column.type, dialect)
    if pg is not None:
        return pg
    try:
        processor = column.type.dialect_impl(dialect).result_processor(dialect, None)
    except Exception:  # a type that needs a real cursor description: read it as it is
        return None
    for known, parser in _PARSERS:
        if processor is known:
            return parser
    return None


def converts_nothing(column: ColumnElement[Any], dialect: Dialect) -> bool:
    """Whether the values of this column arrive as the driver returns them, and the driver
    cannot fail on any stored value."""
    if _pg_parser(column.type, dialect) is not None:
        return False
    try:
        return column.type.dialect_impl(dialect).result_processor(dialect, None) is None
    except Exception:
        return False


def as_text(
    column: ColumnElement[Any], name: str, dialect: Dialect | None = None
) -> ColumnElement[Any]:
    """The column as its stored text, under the same name (SQLite: the SQL is unchanged;
    PostgreSQL: ``CAST(... AS TEXT)``)."""
    if dialect is None:
        return type_coerce(column, String).label(name)
    return stored_text(column, dialect).label(name)


def stored_text(value: ColumnElement[Any], dialect: Dialect) -> ColumnElement[Any]:
    """An aggregate of a date column (``max(lastmod)``) as the text :func:`text_parser`'s
    parser reads."""
    if dialect.name == "postgresql":
        return cast(value, Text)
    return type_coerce(value, String)


class Tolerant(TypeDecorator[Any]):
    """A column's own conversion, applied per value: a value it rejects is
    :class:`Unconvertible` instead of an exception that fails the whole fetch."""

    impl = NullType
    cache_ok = True

    def __init__(self, original: TypeEngine[Any], column: str) -> None:
        super().__init__()
        self.original = original
        self.column = column

    def convert(self, dialect: Dialect, coltype: object) -> Processor | None:
        processor: Processor | None = self.original.dialect_impl(dialect).result_processor(
            dialect, coltype
        )
        return processor

    def result_processor(self, dialect: Dialect, coltype: object) -> Processor | None:
        convert = self.convert(dialect, coltype)
        if convert is None:
            return None
        column = self.column

        def process(value: Any) -> Any:
            if value is None:
                return None
            try:
                return convert(value)
            except Exception as exc:
                return Unconvertible(value, str(exc) or type(exc).__name__, column)

        return process


class TolerantText(Tolerant):
    """A PostgreSQL date or time column read as text and parsed here (see the module)."""

    cache_ok = True

    def column_expression(self, colexpr: ColumnElement[Any]) -> ColumnElement[Any]:
        # The text, typed as this type again: the result's values go through convert().
        return type_coerce(cast(colexpr, Text), self)

    def convert(self, dialect: Dialect, coltype: object) -> Processor | None:
        parse = _pg_parser(self.original, dialect)
        assert parse is not None
        if not isinstance(self.original, TypeDecorator):
            return parse
        # A TypeDecorator over the type: its own conversion takes the parsed value.
        decorate = self.original.result_processor(dialect, coltype)
        if decorate is None:
            return parse
        return lambda text: decorate(parse(text))


def tolerant(column: ColumnElement[Any], name: str, dialect: Dialect) -> ColumnElement[Any]:
    """The column read so that a value its type cannot convert is :class:`Unconvertible`;
    the column itself when nothing can fail."""
    if _pg_parser(column.type, dialect) is not None:
        return type_coerce(column, TolerantText(column.type, name)).label(name)
    if converts_nothing(column, dialect):
        return column
    return type_coerce(column, Tolerant(column.type, name)).label(name)


def undeclared(column: ColumnElement[Any], name: str) -> ColumnElement[Any]:
    """The column's values without its declared type (SQLite's ``+column``, which changes
    no value): for connections that convert values by declared type, whose conversions
    could fail on a stored value. Only in the select list: a ``WHERE`` on it would not
    use the column's index."""
    inner = column.element if isinstance(column, Label) else column
    return UnaryExpression(inner, operator=custom_op("+"), type_=inner.type).label(name)


def unread(name: str) -> ColumnElement[Any]:
    """A column nothing reads: NULL under its name (no value to convert, none to send)."""
    return null().label(name)


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
