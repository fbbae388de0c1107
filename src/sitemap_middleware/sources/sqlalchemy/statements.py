"""The statements of a SQLAlchemy source: its rows in a key range, their summary, the
rows changed since a moment, the version of a key range.

Statements are built once per shape of key range (which bounds it has): one key
column is compared with bound parameters, so SQLAlchemy builds its cache key once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, Select, String, bindparam, cast, func, null, or_, select, tuple_
from sqlalchemy.sql.elements import ColumnElement

from ...core.dates import AsOf
from ..base import ALL, KeyRange
from .aggregates import LISTED_UNTIL, LISTED_UNTIL_EPOCH, Aggregates
from .change_counter import ChangeCounter

if TYPE_CHECKING:
    from .options import AnySelect, SQLOptions
    from .reads import ReadPlan

# Bound parameters of a key range's lower (exclusive) and upper (inclusive) key.
_BOUNDS = {">": "sitemap_after", "<=": "sitemap_until"}
SINCE = "sitemap_since"
"""The bound parameter of :meth:`SQLStatements.changes_stmt`: lastmods later than this."""
LIMIT = "sitemap_limit"


class SQLStatements:
    """The statements a source runs, from its options and read plan (both immutable)."""

    def __init__(self, options: SQLOptions, read_plan: ReadPlan, aggregates: Aggregates) -> None:
        self.read_plan = read_plan
        self.aggregates = aggregates
        self.stmt = options.stmt
        self.key_columns = options.key_columns
        self.key_names = options.key_names
        self.lastmod_name = options.lastmod_name
        self.changefreq_name, self.priority_name = options.changefreq_name, options.priority_name
        self.fixed_ranges = options.fixed_ranges
        self.version = options.version
        # One aggregate over a key range instead of one per column (set on PostgreSQL).
        self.ranges_in_one_pass = options.dialect.name == "postgresql"
        self._statements: dict[tuple[str, object], AnySelect] = {}

    def keyed(self, stmt: AnySelect) -> AnySelect:
        """``stmt`` without the rows whose key is NULL: they belong to no page.

        Only a key column that can hold NULL gets the condition (a primary key never
        does), so the usual aggregates keep their index-only plans.
        """
        nullable = [c for c in self.key_columns if getattr(c, "nullable", True)]
        return stmt.where(*(c.is_not(None) for c in nullable)) if nullable else stmt

    def lowest_stmt(self) -> AnySelect:
        """The lowest key of a fixed-range source: below 0, it is cut instead (one index
        lookup)."""
        return self.built(("lowest", None), self._build_lowest_stmt)

    def _build_lowest_stmt(self) -> AnySelect:
        rows = self.stmt.order_by(None).subquery("sitemap_rows")
        return select(func.min(rows.c[self.key_names[0]]))

    def checks_lowest(self, keys: KeyRange) -> bool:
        """Whether reading ``keys`` must first tell that no key is below 0 (a fixed range)."""
        return self.fixed_ranges and keys != ALL

    def with_lowest(self, stmt: AnySelect, keys: KeyRange) -> AnySelect:
        """``stmt`` with the lowest key as its last column, ``sitemap_lowest``, when
        ``keys`` is a fixed range: the page's one statement tells whether it still is."""
        if not self.checks_lowest(keys):
            return stmt
        return stmt.add_columns(self.lowest_stmt().scalar_subquery().label("sitemap_lowest"))

    def nulls_stmt(self) -> AnySelect | None:
        """How many rows have a NULL key (None when no key column can hold NULL)."""
        nullable = [c for c in self.key_columns if getattr(c, "nullable", True)]
        if not nullable:
            return None
        return self.built(("nulls", None), self._build_nulls_stmt)

    def _build_nulls_stmt(self) -> AnySelect:
        rows = self.stmt.order_by(None).subquery("sitemap_rows")
        keys = [rows.c[name] for name in self.key_names]
        return select(func.count()).select_from(rows).where(or_(*(k.is_(None) for k in keys)))

    def where(self, stmt: AnySelect, keys: KeyRange) -> AnySelect:
        """``stmt`` limited to the keys in ``keys``.

        One key column is compared with bound parameters (:meth:`bounds` gives
        their values), so one statement serves every key range of its shape and
        SQLAlchemy builds its cache key once; row values embed theirs.
        """

        def compare(values: tuple[Any, ...], op: str) -> ColumnElement[bool]:
            left: ColumnElement[Any] = self.key_columns[0]
            right: Any = bindparam(_BOUNDS[op], type_=left.type)
            if len(self.key_columns) > 1:  # row values: (a, b) > (:a, :b)
                left, right = tuple_(*self.key_columns), tuple_(*values)
            result: ColumnElement[bool] = left > right if op == ">" else left <= right
            return result

        if keys.after is not None:
            stmt = stmt.where(compare(keys.after, ">"))
        if keys.until is not None:
            stmt = stmt.where(compare(keys.until, "<="))
        return stmt

    def bounds(self, keys: KeyRange) -> dict[str, Any]:
        """The parameters of :meth:`where`'s statement for ``keys``."""
        if len(self.key_columns) > 1:
            return {}
        values = {}
        if keys.after is not None:
            values[_BOUNDS[">"]] = keys.after[0]
        if keys.until is not None:
            values[_BOUNDS["<="]] = keys.until[0]
        return values

    def _shape(self, keys: KeyRange) -> object:
        """What the statements for ``keys`` differ by: which bounds they have (one key column)."""
        if len(self.key_columns) > 1:
            return keys
        return (keys.after is None, keys.until is None)

    def rows_stmt(self, keys: KeyRange) -> AnySelect:
        """The rows statement (:attr:`ReadPlan.stmt` in ``keys``), built once per shape."""
        return self._cached("rows", keys, lambda: self.where(self.read_plan.stmt, keys))

    def summary_stmt(self, keys: KeyRange) -> AnySelect:
        """The aggregate statement, built once per shape."""
        return self._cached("summary", keys, lambda: self._build_summary_stmt(keys))

    def _cached(self, kind: str, keys: KeyRange, build: Callable[[], AnySelect]) -> AnySelect:
        return self.built((kind, self._shape(keys)), build)

    def built(self, what: tuple[str, object], build: Callable[[], AnySelect]) -> AnySelect:
        """The statement ``build`` makes, made once per ``what``: building one costs about as
        much as running it on a small table, and SQLAlchemy's compiled cache wants the same
        statement back."""
        stmt = self._statements.get(what)
        if stmt is None:
            if len(self._statements) >= 1024:  # row-value keys: one per range
                self._statements.clear()
            stmt = self._statements[what] = build()
        return stmt

    def _build_summary_stmt(self, keys: KeyRange) -> AnySelect:
        """count, lowest and highest key, checksum, newest served and earliest future lastmod
        of the rows in a key range (in that order), in one statement.

        The count and checksum are one pass over the range. The keys and lastmods
        are their own scalar subqueries: databases answer ``min``/``max`` of an
        indexed column with one index lookup only when the aggregate stands alone.
        """
        stmt = self.keyed(self.stmt) if keys == ALL else self.stmt
        rows = self.where(stmt, keys).order_by(None).subquery("sitemap_rows")
        aggregates = self.aggregates

        def alone(aggregate: ColumnElement[Any]) -> ColumnElement[Any]:
            return select(aggregate).select_from(rows).scalar_subquery()

        lastmod = rows.c[self.lastmod_name] if self.lastmod_name is not None else None
        first_key: ColumnElement[Any] = rows.c[self.key_names[0]]
        if not self.fixed_ranges:
            # min/max need an ordered type (PostgreSQL has none for uuid); as text they
            # still change when the extreme keys do, which is all the token needs.
            first_key = cast(first_key, String)

        def extremes() -> list[ColumnElement[Any]]:
            return [alone(func.min(first_key)), alone(func.max(first_key))]

        if aggregates.range_pass:  # SQLite: the checksum is the range pass's own
            summary = aggregates.range_summary(rows, self._shown_columns(), extremes())
            return self.with_lowest(summary, keys)
        term = aggregates.term(rows.c.__getitem__)
        checksum = func.sum(term) if term is not None else null()
        if self.ranges_in_one_pass and keys != ALL:
            # PostgreSQL answers a lone max(lastmod) of a key range from the lastmod index,
            # newest first, dropping the rows of every later page on the way (page 1 of
            # 1,000,000 rows: 120 ms); one aggregate reads the range once (2 ms).
            columns: list[ColumnElement[Any]] = [
                func.count(),
                func.min(first_key),
                func.max(first_key),
                checksum,
            ]
            if lastmod is not None:
                columns += [aggregates.newest(lastmod), aggregates.earliest(lastmod)]
            return self.with_lowest(select(*columns).select_from(rows), keys)
        moments = []
        if lastmod is not None:
            moments = [
                aggregates.newest_alone(rows, lastmod),
                aggregates.earliest_alone(rows, lastmod),
            ]
        if term is None:
            return self.with_lowest(
                select(alone(func.count()), *extremes(), checksum, *moments), keys
            )
        totals = (
            select(func.count().label("sitemap_count"), checksum.label("sitemap_checksum"))
            .select_from(rows)
            .subquery("sitemap_totals")
        )
        summary = select(
            totals.c.sitemap_count, *extremes(), totals.c.sitemap_checksum, *moments
        ).select_from(totals)
        return self.with_lowest(summary, keys)

    def _shown_columns(self) -> list[str]:
        """The columns the checksum reads: keys, lastmod, changefreq, priority, shown."""
        names = [*self.key_names, self.lastmod_name, self.changefreq_name, self.priority_name]
        names += [name for name, _ in self.aggregates.shown]
        return list(dict.fromkeys(name for name in names if name is not None))

    def listed_until_bounds(self, as_of: AsOf) -> dict[str, Any]:
        """``listed_until`` parameters of the summary, pages and cuts statements."""
        if self.lastmod_name is None:
            return {}
        aggregates = self.aggregates
        return {
            LISTED_UNTIL: aggregates.column_value(as_of.listed_until, as_of.naive_timezone),
            LISTED_UNTIL_EPOCH: aggregates.listed_until_epochs(as_of),
        }

    def changes_stmt(self) -> AnySelect:
        """The key and lastmod (as text: only compared) of every row whose lastmod is later
        than ``sitemap_since`` and served by ``listed_until``, at most ``sitemap_limit`` of them:
        a range read on the lastmod column's index, however large the table."""
        return self.built(("changes", None), self._build_changes_stmt)

    def _build_changes_stmt(self) -> AnySelect:
        assert self.lastmod_name is not None
        rows = self.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        lastmod = rows.c[self.lastmod_name]
        since = bindparam(SINCE, type_=self.aggregates.listed_until.type)
        return (
            select(rows.c[self.key_names[0]], cast(lastmod, String))
            .where(lastmod > since, lastmod <= self.aggregates.listed_until)
            .limit(bindparam(LIMIT, type_=Integer))
        )

    def changes_bounds(self, since: datetime, as_of: AsOf, limit: int) -> dict[str, Any]:
        aggregates = self.aggregates
        return {
            SINCE: aggregates.column_value(since, as_of.naive_timezone),
            LISTED_UNTIL: aggregates.column_value(as_of.listed_until, as_of.naive_timezone),
            LIMIT: limit,
        }

    def version_stmt(self, keys: KeyRange) -> AnySelect | None:
        """The statement that reads the version of the rows in ``keys``, if it is one."""
        if isinstance(self.version, ChangeCounter):
            return self.version.statement(keys)
        return self.version if isinstance(self.version, Select) else None

    def version_bounds(self, keys: KeyRange) -> dict[str, Any]:
        """The parameters of :meth:`version_stmt`'s statement for ``keys``."""
        if isinstance(self.version, ChangeCounter):
            return self.version.parameters(keys)
        return {}
