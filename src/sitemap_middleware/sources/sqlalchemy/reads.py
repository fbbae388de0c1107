"""How a SQLAlchemy source reads its rows: chosen once, when the source is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .locs import LocTemplate
from .stored_dates import as_text, converts_nothing, tolerant, undeclared, unread

if TYPE_CHECKING:
    from .options import AnySelect, SQLOptions


@dataclass(frozen=True)
class ReadPlan:
    """Which columns are read and how: as they are, as stored text, or through their type's
    conversion value by value (:func:`~.stored_dates.tolerant`), so that no stored value
    can fail a fetch."""

    every_column: bool
    """Functions of the row (a loc callable, extensions) see every column's values, read
    through SQLAlchemy's rows. Otherwise only the columns the mapping uses are read, and
    one that cannot be converted is not sent at all."""
    lastmods_as_text: bool
    """The lastmod column is read as the text the database keeps and parsed by the mapping."""
    driver_rows: bool
    """The driver's own tuples stand in for SQLAlchemy's rows (and their buffer)."""
    stmt: AnySelect
    """The statement that reads the rows (before any key range)."""

    @classmethod
    def choose(cls, options: SQLOptions, *, extensions: bool) -> ReadPlan:
        """The plan for a source's options; ``extensions``: the source has extensions,
        whose functions take the row."""
        every_column = extensions or not isinstance(options.loc, LocTemplate)
        lastmods_as_text = not every_column and _text_lastmods(options)
        stmt = _read_stmt(options, every_column=every_column, text_lastmods=lastmods_as_text)
        return cls(
            every_column=every_column,
            lastmods_as_text=lastmods_as_text,
            driver_rows=not every_column and _driver_reads(options, stmt),
            stmt=stmt,
        )


def _text_lastmods(options: SQLOptions) -> bool:
    """Whether the lastmods can be read as text: stored as text, and no other use of the
    column (a key, a loc field) needs its value."""
    loc = options.loc
    return (
        options.lastmod_parser is not None
        and options.lastmod_index not in options.key_index
        and isinstance(loc, LocTemplate)
        and options.lastmod_index not in loc.fields
    )


def _read_stmt(options: SQLOptions, *, every_column: bool, text_lastmods: bool) -> AnySelect:
    used = options.used
    dialect = options.dialect
    read = list(options.stmt.selected_columns)
    for index, column in enumerate(read):
        name = options.columns[index]
        if index == options.lastmod_index and text_lastmods:
            read[index] = as_text(column, name, dialect)
        elif every_column or index in used:
            read[index] = tolerant(column, name, dialect)
        elif not converts_nothing(column, dialect):
            read[index] = unread(name)
        if getattr(dialect, "converts_declared_types", False):
            read[index] = undeclared(read[index], name)
    changed = any(a is not b for a, b in zip(read, options.stmt.selected_columns, strict=True))
    if not changed:
        return options.stmt
    return options.stmt.with_only_columns(*read, maintain_column_froms=True)


def _driver_reads(options: SQLOptions, stmt: AnySelect) -> bool:
    """pysqlite (and aiosqlite's server-side cursor over it) reads lazily by itself: when
    no column the mapping reads needs converting, the cursor's own tuples stand in for
    SQLAlchemy's Row objects (and their buffer)."""
    dialect = options.dialect
    return (
        dialect.name == "sqlite"
        and dialect.driver in ("pysqlite", "aiosqlite")
        and all(
            converts_nothing(stmt.selected_columns[index], dialect)
            for index in options.used
            if index is not None
        )
    )
