"""The statements that find what changed, for IndexNow: rows in ``(lastmod, key)`` order
after a mark, by keyset.

A mark is a row's lastmod and key as the database writes them as text: compared back in
the column's own type (SQLite compares its stored text as it is), so a mark is exact
whatever the column's type or precision. Two statements per batch, each served by an
index whatever the table's size:

1. the marks and keys of the next ``limit`` rows after the mark, up to ``listed_until``
   (a range on the lastmod index: ``lastmod >= :mark``, ties broken by the key);
2. those rows, by key, read and mapped as the sitemap reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, String, bindparam, cast, or_, select
from sqlalchemy.sql.elements import ColumnElement

from ...core.dates import AsOf
from ...settings import ConfigurationError
from ..base import Mark
from .aggregates import LISTED_UNTIL

if TYPE_CHECKING:
    from .options import AnySelect, SQLOptions
    from .statements import SQLStatements

_LASTMOD, _KEY, _LIMIT, _KEYS = (
    "sitemap_mark_lastmod",
    "sitemap_mark_key",
    "sitemap_mark_limit",
    "sitemap_mark_keys",
)


class PushStatements:
    """The change statements of one source (built once)."""

    def __init__(self, options: SQLOptions, statements: SQLStatements) -> None:
        if options.lastmod_name is None:
            raise ConfigurationError(
                f"lastmod: source {options.name!r}: IndexNow finds changes by their lastmod; "
                "name the lastmod column"
            )
        if len(options.key_names) != 1:
            raise ConfigurationError(
                f"key: source {options.name!r}: IndexNow marks need one key column, got "
                f"{list(options.key_names)}"
            )
        self._statements = statements
        self._sqlite = options.dialect.name == "sqlite"
        rows = statements.keyed(options.stmt).order_by(None).subquery("sitemap_rows")
        self._lastmod = rows.c[options.lastmod_name]
        self._key = rows.c[options.key_names[0]]
        self._rows = rows
        self._key_column = options.key_columns[0]
        self.marks_after = self._marks(after=True)
        self.marks_from_start = self._marks(after=False)
        self.newest = self._newest()
        self.rows = self._read_rows()

    def _back(self, name: str, column: ColumnElement[Any]) -> ColumnElement[Any]:
        """A mark's text as a value of ``column``'s type (a SQLite lastmod: the stored
        text itself; its CAST would give a date column numeric affinity)."""
        value: ColumnElement[Any] = bindparam(name, type_=String)
        if self._sqlite and column is self._lastmod:
            return value
        return cast(value, column.type)

    def _marks(self, after: bool) -> AnySelect:
        lastmod, key = self._lastmod, self._key
        stmt = select(key, cast(lastmod, String), cast(key, String)).where(
            lastmod <= self._statements.aggregates.listed_until
        )
        if after:
            since = self._back(_LASTMOD, lastmod)
            stmt = stmt.where(lastmod >= since, or_(lastmod > since, key > self._back(_KEY, key)))
        return stmt.order_by(lastmod, key).limit(bindparam(_LIMIT, type_=Integer))

    def _newest(self) -> AnySelect:
        """The last row in ``(lastmod, key)`` order up to ``listed_until``: where pushing starts."""
        lastmod, key = self._lastmod, self._key
        return (
            select(cast(lastmod, String), cast(key, String))
            .where(lastmod <= self._statements.aggregates.listed_until)
            .order_by(lastmod.desc(), key.desc())
            .limit(1)
        )

    def _read_rows(self) -> AnySelect:
        stmt = self._statements.read_plan.stmt
        keys: Any = bindparam(_KEYS, expanding=True)
        return stmt.where(self._key_column.in_(keys)).order_by(None).order_by(self._key_column)

    def marks_bounds(self, after: Mark | None, as_of: AsOf, limit: int) -> dict[str, Any]:
        aggregates = self._statements.aggregates
        bounds: dict[str, Any] = {
            LISTED_UNTIL: aggregates.column_value(as_of.listed_until, as_of.naive_timezone),
            _LIMIT: limit,
        }
        if after is not None:
            bounds[_LASTMOD], bounds[_KEY] = after.lastmod, after.key
        return bounds

    def newest_bounds(self, as_of: AsOf) -> dict[str, Any]:
        aggregates = self._statements.aggregates
        return {LISTED_UNTIL: aggregates.column_value(as_of.listed_until, as_of.naive_timezone)}

    def start(self, as_of: AsOf) -> Mark:
        """The mark of an empty source: ``listed_until`` itself (nothing before it is pushed)."""
        value = self._statements.aggregates.column_value(as_of.listed_until, as_of.naive_timezone)
        return Mark(str(value), None)

    @staticmethod
    def rows_bounds(keys: list[Any]) -> dict[str, Any]:
        return {_KEYS: keys}
