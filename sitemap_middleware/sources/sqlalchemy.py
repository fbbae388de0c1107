"""SQLAlchemy ``select()`` sources on a sync ``Engine`` or an ``AsyncEngine``.

Rows are streamed in key order (``yield_per`` partitions; ``stream()`` on
async engines, so aiosqlite and asyncpg do not buffer the result) and mapped
to entries with a loc template or callable, a lastmod column and optional
changefreq/priority columns or constants.

The summary is one aggregate statement over the statement's rows and reads no
rows into Python::

    SELECT count(*), max(<lastmod>), min(<key>), max(<key>) FROM (<select>) AS rows

With an index on the key and the lastmod column this is an index-only scan:
its cost grows with the number of rows, but far more slowly than reading them.
A source whose table is large can pass ``version=``: a
:class:`~sitemap_middleware.sources.change_counter.ChangeCounter` (revisions
per key range, kept by triggers), a scalar ``select()`` (such as a revision
counter the application bumps on every write) or a callable. The aggregates
are then read once per version and key range and remembered: while the
version stands, a request costs the version alone.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, tzinfo
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    DateTime,
    Integer,
    Select,
    String,
    bindparam,
    cast,
    func,
    null,
    or_,
    select,
    tuple_,
)
from sqlalchemy.engine import Connection, Dialect, Engine, Row
from sqlalchemy.sql.elements import ColumnElement

from ..dates import Unreadable
from ..entry import CHANGEFREQS, Affixed, Batch, Repeated, format_priority
from ..settings import ConfigurationError, ConfigurationTypeError
from ..validators import Summary, default_horizon
from .aggregates import HORIZON, HORIZON_EPOCH, Aggregates, iso
from .base import ALL, Bucket, CutPages, KeyRange, SyncSource, check_name
from .change_counter import ChangeCounter
from .extras import extras_spec
from .stored_dates import (
    Parser,
    as_text,
    converts_nothing,
    explain,
    parse_column,
    text_parser,
    tolerant,
    unread,
)

logger = logging.getLogger("sitemap_middleware")

LocSpec = str | Callable[[Row[Any]], str]
if TYPE_CHECKING:
    # A select of any columns (SQLAlchemy 2.1 types a select by its column types).
    AnySelect = Select[*tuple[Any, ...]]
    VersionSpec = ChangeCounter | AnySelect | Callable[[], Any] | None


# Bound parameters of a key range's lower (exclusive) and upper (inclusive) key.
_BOUNDS = {">": "sitemap_after", "<=": "sitemap_until"}


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


class _Mapping:
    """Everything shared by the sync and async sources: statements and row mapping."""

    def __init__(
        self,
        stmt: AnySelect,
        *,
        name: str,
        loc: LocSpec,
        lastmod: str | None,
        changefreq: str | None,
        changefreq_column: str | None,
        priority: float | None,
        priority_column: str | None,
        key: str | Sequence[str] | None,
        version: VersionSpec,
        dialect: Dialect,
    ) -> None:
        self.name = check_name(name)
        if not isinstance(stmt, Select):
            raise ConfigurationTypeError(
                f"stmt: source {name!r} needs a sqlalchemy select(), got {type(stmt).__name__}"
            )
        columns = [str(c.key) for c in stmt.selected_columns]
        selected = stmt.selected_columns

        def column_index(setting: str, column: str | None) -> int | None:
            if column is None:
                return None
            if column not in columns:
                raise ConfigurationError(
                    f"{setting}: source {name!r}: {column!r} is not a selected column; "
                    f"select it, or use one of: {', '.join(columns)}"
                )
            return columns.index(column)

        if isinstance(loc, str):
            self.loc: Callable[[Any], Any] = LocTemplate(loc, columns)
            loc_fingerprint = loc
        elif callable(loc):
            self.loc = loc
            loc_fingerprint = f"{loc.__module__}.{getattr(loc, '__qualname__', repr(loc))}"
        else:
            raise ConfigurationTypeError(
                f"loc: source {name!r}: must be a template string such as '/articles/{{slug}}' "
                f"or a callable taking the row, got {type(loc).__name__}"
            )

        if key is None:
            key_names = [str(c.key) for c in selected if getattr(c, "primary_key", False)]
            if not key_names:
                raise ConfigurationError(
                    f"key: source {name!r}: cannot tell the row key; select the primary key or "
                    "pass key='column' (a unique, indexed column)"
                )
        else:
            key_names = [key] if isinstance(key, str) else list(key)
        self.key_index = [column_index("key", k) for k in key_names]
        self.key_columns: list[ColumnElement[Any]] = [selected[k] for k in key_names]

        if changefreq is not None and changefreq not in CHANGEFREQS:
            raise ConfigurationError(
                f"changefreq: source {name!r}: {changefreq!r} is not one of "
                f"{', '.join(sorted(CHANGEFREQS))}"
            )
        if changefreq is not None and changefreq_column is not None:
            raise ConfigurationError(
                f"changefreq: source {name!r}: give changefreq or changefreq_column, not both"
            )
        if priority is not None:
            try:
                format_priority(priority)
            except (ValueError, TypeError) as exc:
                raise ConfigurationError(
                    f"priority: source {name!r}: {exc}; give a number from 0.0 to 1.0"
                ) from None
        if priority is not None and priority_column is not None:
            raise ConfigurationError(
                f"priority: source {name!r}: give priority or priority_column, not both"
            )
        if version is not None and not (
            isinstance(version, ChangeCounter | Select) or callable(version)
        ):
            raise ConfigurationTypeError(
                f"version: source {name!r}: must be a ChangeCounter, a scalar select() or a "
                f"callable, got {type(version).__name__}"
            )

        self.lastmod_index = column_index("lastmod", lastmod)
        self.changefreq_index = column_index("changefreq_column", changefreq_column)
        self.priority_index = column_index("priority_column", priority_column)
        self.changefreq = changefreq
        self.priority = priority
        self.lastmod_name = lastmod
        self.changefreq_name, self.priority_name = changefreq_column, priority_column
        # A timestamptz keeps no offset: psycopg gives it in the session's TimeZone, asyncpg
        # in UTC. Written in UTC, the bytes depend on the data alone, not on the connection.
        lastmod_type = selected[self.lastmod_index].type if self.lastmod_index is not None else None
        self.lastmod_in_utc = isinstance(lastmod_type, DateTime) and bool(lastmod_type.timezone)
        self.key_names = key_names
        self.stmt = stmt.order_by(None).order_by(*self.key_columns)
        self.version = version
        # A lastmod the database keeps as text (SQLite) is read as text and parsed here.
        self.lastmod_parser: Parser | None = None
        if self.lastmod_index is not None:
            self.lastmod_parser = text_parser(selected[self.lastmod_index], dialect)
        self.dialect = dialect
        self.columns = columns
        self._statements: dict[tuple[str, object], AnySelect] = {}
        self._nulls_reported: Any = None
        self._lowest_by_version: tuple[str, Any] | None = None
        self.nullable_key = any(getattr(c, "nullable", True) for c in self.key_columns)
        self._plan_reads(every_column=not isinstance(self.loc, LocTemplate))
        self.aggregates = Aggregates(
            dialect.name,
            [(name, selected[name].type) for name in key_names],
            (lastmod, selected[lastmod].type) if lastmod is not None else None,
            changefreq_column,
            priority_column,
            self.lastmod_parser,
        )
        # One aggregate over a key range instead of one per column (set on PostgreSQL).
        self.ranges_in_one_pass = dialect.name == "postgresql"
        # A single integer key pages by fixed key ranges; any other unique key is cut at
        # every width-th key (window functions: SQLite 3.25+, PostgreSQL).
        self.pageable = True
        self.fixed_ranges = len(self.key_columns) == 1 and isinstance(
            self.key_columns[0].type, Integer
        )
        # With a version: per key range, the version its summary was read for.
        self._by_range: dict[tuple[KeyRange, tzinfo], tuple[str, Summary]] = {}
        self._fingerprint = "|".join(
            [
                "sqlalchemy",
                str(self.stmt.compile(compile_kwargs={"literal_binds": False})),
                loc_fingerprint,
                repr((lastmod, changefreq, changefreq_column, priority, priority_column)),
                repr(key_names),
            ]
        )

    def keep_rows(self) -> None:
        """Read SQLAlchemy's rows with every column's values: functions of the source's
        options see them."""
        self._plan_reads(every_column=True)

    def _plan_reads(self, *, every_column: bool) -> None:
        """How each column is read: as it is, as stored text, or through its type's conversion
        value by value (:func:`tolerant`), so that no stored value can fail a fetch.

        ``every_column``: functions of the row see every column. Otherwise only the columns
        the mapping uses are read, and one that cannot be converted is not sent at all.
        """
        used = {*self.key_index, self.lastmod_index, self.changefreq_index, self.priority_index}
        if isinstance(self.loc, LocTemplate):
            used |= self.loc.fields
        self.lastmods_as_text = (
            not every_column
            and self.lastmod_parser is not None
            and self.lastmod_index not in self.key_index
            and isinstance(self.loc, LocTemplate)
            and self.lastmod_index not in self.loc.fields
        )
        read = list(self.stmt.selected_columns)
        for index, column in enumerate(read):
            name = self.columns[index]
            if index == self.lastmod_index and self.lastmods_as_text:
                read[index] = as_text(column, name, self.dialect)
            elif every_column or index in used:
                read[index] = tolerant(column, name, self.dialect)
            elif not converts_nothing(column, self.dialect):
                read[index] = unread(name)
        changed = any(a is not b for a, b in zip(read, self.stmt.selected_columns, strict=True))
        self.read_stmt = (
            self.stmt.with_only_columns(*read, maintain_column_froms=True) if changed else self.stmt
        )
        # pysqlite (and aiosqlite's server-side cursor over it) reads lazily by itself: when
        # no column the mapping reads needs converting, the cursor's own tuples stand in for
        # SQLAlchemy's Row objects (and their buffer).
        dialect = self.dialect
        self.driver_rows = (
            not every_column
            and dialect.name == "sqlite"
            and dialect.driver in ("pysqlite", "aiosqlite")
            and all(
                converts_nothing(self.read_stmt.selected_columns[index], dialect)
                for index in used
                if index is not None
            )
        )
        self._statements.clear()

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

    def lowest_for(self, version: Any) -> Any:
        """The lowest key remembered for an application's version (a callable): the version
        changes whenever the data does."""
        known = self._lowest_by_version
        return known[1] if known is not None and known[0] == repr(version) else _UNKNOWN

    def remember_lowest(self, version: Any, lowest: Any) -> None:
        self._lowest_by_version = (repr(version), lowest)

    @staticmethod
    def must_cut(lowest: Any) -> bool:
        """Whether a fixed-range source's data needs cut pages (a key below 0)."""
        return lowest is not None and lowest < 0

    def nulls_stmt(self) -> AnySelect | None:
        """How many rows have a NULL key (None when no key column can hold NULL)."""
        nullable = [c for c in self.key_columns if getattr(c, "nullable", True)]
        if not nullable:
            return None
        rows = self.stmt.order_by(None).subquery("sitemap_rows")
        keys = [rows.c[name] for name in self.key_names]
        return select(func.count()).select_from(rows).where(or_(*(k.is_(None) for k in keys)))

    def report_nulls(self, count: Any) -> None:
        """Log rows with a NULL key, once per count: they are on no page."""
        if not count or count == self._nulls_reported:
            return
        self._nulls_reported = count
        logger.warning(
            "bad sitemap rows: source %r: %d rows have a NULL key (%s) and are not listed; "
            "give them a key or leave them out of the select",
            self.name,
            count,
            ", ".join(self.key_names),
        )

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
        """The rows statement (:attr:`read_stmt` in ``keys``), built once per shape."""
        return self._cached("rows", keys, lambda: self.where(self.read_stmt, keys))

    def summary_stmt(self, keys: KeyRange) -> AnySelect:
        """The aggregate statement, built once per shape."""
        return self._cached("summary", keys, lambda: self._build_summary_stmt(keys))

    def _cached(self, kind: str, keys: KeyRange, build: Callable[[], AnySelect]) -> AnySelect:
        shape = (kind, self._shape(keys))
        stmt = self._statements.get(shape)
        if stmt is None:
            if len(self._statements) >= 1024:  # row-value keys: one per range
                self._statements.clear()
            stmt = self._statements[shape] = build()
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
        extremes = [alone(func.min(first_key)), alone(func.max(first_key))]
        if aggregates.range_pass:
            summary = aggregates.range_summary(rows, self._shown_columns(), extremes)
            return self.with_lowest(summary, keys)
        moments = []
        if lastmod is not None:
            moments = [
                aggregates.newest_alone(rows, lastmod),
                aggregates.earliest_alone(rows, lastmod),
            ]
        if term is None:
            return self.with_lowest(
                select(alone(func.count()), *extremes, checksum, *moments), keys
            )
        totals = (
            select(func.count().label("sitemap_count"), checksum.label("sitemap_checksum"))
            .select_from(rows)
            .subquery("sitemap_totals")
        )
        summary = select(
            totals.c.sitemap_count, *extremes, totals.c.sitemap_checksum, *moments
        ).select_from(totals)
        return self.with_lowest(summary, keys)

    def buckets_stmt(self, width: int) -> AnySelect:
        """One aggregate over the whole select: per page (fixed integer ranges) its number,
        count, lowest key, checksum, newest served and earliest future lastmod; or the cuts
        of a source with another key."""
        if not self.fixed_ranges:
            return self.cuts_stmt(width)
        rows = self.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        key = rows.c[self.key_names[0]]
        bucket = (key // width).label("bucket")
        term = self.aggregates.term(rows.c.__getitem__)
        columns: list[ColumnElement[Any]] = [
            bucket,
            func.count(),
            func.min(key),
            func.sum(term) if term is not None else null(),
        ]
        if self.lastmod_name is not None:
            lastmod = rows.c[self.lastmod_name]
            columns += [self.aggregates.newest(lastmod), self.aggregates.earliest(lastmod)]
        return select(*columns).group_by(bucket).order_by(bucket)

    def _shown_columns(self) -> list[str]:
        """The columns the checksum reads: keys, lastmod, changefreq, priority."""
        names = [*self.key_names, self.lastmod_name, self.changefreq_name, self.priority_name]
        return list(dict.fromkeys(name for name in names if name is not None))

    def horizon_bounds(self, horizon: datetime, naive_timezone: tzinfo) -> dict[str, Any]:
        """The horizon parameters of the summary, pages and cuts statements."""
        if self.lastmod_name is None:
            return {}
        aggregates = self.aggregates
        return {
            HORIZON: aggregates.horizon_value(horizon, naive_timezone),
            HORIZON_EPOCH: aggregates.horizon_epochs(horizon, naive_timezone),
        }

    def _moments(
        self,
        values: Sequence[Any],
        naive_timezone: tzinfo,
        horizon: datetime,
        epochs: bool = False,
    ) -> tuple[datetime | None, datetime | None]:
        """The newest served and earliest future lastmod of an aggregate's last two values."""
        if self.lastmod_name is None:
            return None, None
        moment = self.aggregates.moment
        return (
            moment(values[0], naive_timezone, horizon, newest=True, epochs=epochs),
            moment(values[1], naive_timezone, horizon, newest=False, epochs=epochs),
        )

    def cuts_stmt(self, width: int) -> AnySelect:
        """Per run of ``width`` rows in key order: its number, count, checksum, newest served
        and earliest future lastmod, and its last key.

        One statement (one snapshot, one pass in key order): rows are numbered,
        grouped ``width`` at a time, and only each group's last row is returned.
        """
        rows = self.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        keys = [rows.c[name] for name in self.key_names]
        lastmod = self.lastmod_name
        term = self.aggregates.term(rows.c.__getitem__)
        numbered = select(
            *keys,
            *([rows.c[lastmod].label("sitemap_lastmod")] if lastmod is not None else []),
            *([term.label("sitemap_term")] if term is not None else []),
            func.row_number().over(order_by=keys).label("sitemap_rn"),
            func.count().over().label("sitemap_total"),
        ).subquery("numbered")
        grouped = select(
            numbered,
            ((numbered.c.sitemap_rn - 1) // width).label("sitemap_page"),
        ).subquery("grouped")
        page = grouped.c.sitemap_page
        moments = []
        if lastmod is not None:
            column = grouped.c.sitemap_lastmod
            moments = [
                self.aggregates.newest(column, page).label("sitemap_newest"),
                self.aggregates.earliest(column, page).label("sitemap_expires"),
            ]
        checksum = (
            func.sum(grouped.c.sitemap_term).over(partition_by=page) if term is not None else null()
        )
        windowed = select(
            *(grouped.c[name] for name in self.key_names),
            page,
            grouped.c.sitemap_rn,
            grouped.c.sitemap_total,
            func.count().over(partition_by=page).label("sitemap_count"),
            checksum.label("sitemap_checksum"),
            *moments,
        ).subquery("windowed")
        last = or_(
            windowed.c.sitemap_rn % width == 0,
            windowed.c.sitemap_rn == windowed.c.sitemap_total,
        )
        columns = [windowed.c.sitemap_page, windowed.c.sitemap_count, windowed.c.sitemap_checksum]
        if lastmod is not None:
            columns += [windowed.c.sitemap_newest, windowed.c.sitemap_expires]
        columns += [windowed.c[name] for name in self.key_names]
        return select(*columns).where(last).order_by(windowed.c.sitemap_rn)

    def buckets(
        self, rows: Sequence[Row[Any]], naive_timezone: tzinfo, horizon: datetime
    ) -> list[Bucket] | None:
        """The pages :meth:`buckets_stmt` found; None when a key below 0 means the source
        must be cut (read :meth:`cuts_stmt` and give its rows to :meth:`cuts`)."""
        if not self.fixed_ranges:
            return self.cuts(rows, naive_timezone, horizon)
        epochs = self.aggregates.as_text  # SQLite's lastmod aggregates are epochs
        out = []
        for row in rows:
            values = tuple(row)
            if values[2] < 0:
                return None
            newest, expires = self._moments(values[4:6], naive_timezone, horizon, epochs)
            out.append(
                Bucket(int(values[0]), int(values[1]), newest, None, str(values[3]), expires)
            )
        return out

    def cuts(
        self, rows: Sequence[Row[Any]], naive_timezone: tzinfo, horizon: datetime
    ) -> list[Bucket]:
        first_key = 5 if self.lastmod_name is not None else 3
        epochs = self.aggregates.as_text  # SQLite's lastmod aggregates are epochs
        out = []
        for row in rows:
            values = tuple(row)
            newest, expires = self._moments(values[3:5], naive_timezone, horizon, epochs)
            last = values[first_key:]
            out.append(
                Bucket(int(values[0]), int(values[1]), newest, tuple(last), str(values[2]), expires)
            )
        return out

    def changes_stmt(self) -> AnySelect:
        """The key and lastmod (as text: only compared) of every row whose lastmod is later
        than ``sitemap_since`` and served by the horizon, at most ``sitemap_limit`` of them:
        a range read on the lastmod column's index, however large the table."""
        assert self.lastmod_name is not None
        rows = self.keyed(self.stmt).order_by(None).subquery("sitemap_rows")
        lastmod = rows.c[self.lastmod_name]
        since = bindparam(SINCE, type_=self.aggregates.horizon.type)
        return (
            select(rows.c[self.key_names[0]], cast(lastmod, String))
            .where(lastmod > since, lastmod <= self.aggregates.horizon)
            .limit(bindparam(LIMIT, type_=Integer))
        )

    def changes_bounds(
        self, since: datetime, horizon: datetime, naive_timezone: tzinfo, limit: int
    ) -> dict[str, Any]:
        aggregates = self.aggregates
        return {
            SINCE: aggregates.horizon_value(since, naive_timezone),
            HORIZON: aggregates.horizon_value(horizon, naive_timezone),
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

    def version_of(self, value: Any) -> Any:
        """The version a statement or callable gave, as the token knows it."""
        if isinstance(self.version, ChangeCounter):
            return self.version.token(value)
        return value

    def cached(
        self, version: Any, keys: KeyRange, naive_timezone: tzinfo, horizon: datetime
    ) -> Summary | None:
        """The summary already read for this version of the rows in ``keys``, if any and
        if no lastmod it saw in the future is due by ``horizon``."""
        known = self._by_range.get((keys, naive_timezone))
        if known is not None and known[0] == repr(version) and known[1].fresh(horizon):
            return known[1]
        return None

    def summary(
        self,
        row: Row[Any] | None,
        version: Any,
        keys: KeyRange,
        naive_timezone: tzinfo,
        horizon: datetime,
    ) -> Summary:
        assert row is not None
        values = tuple(row)
        count, low, high, checksum = values[0], values[1], values[2], values[3]
        epochs = self.aggregates.range_pass
        newest, expires = self._moments(values[4:6], naive_timezone, horizon, epochs)
        # Which lastmods are served changes when the horizon passes the earliest future one.
        moments = f"{iso(newest)}:{iso(expires)}"
        if self.version is None:
            token = f"n:{count}:{low!r}:{high!r}:{checksum}:{moments}"
            return Summary(newest, count, token, horizon, expires, str(checksum))
        # The version says when the rows changed: remember the summary until it moves.
        summary = Summary(newest, count, f"v:{version!r}:{moments}", horizon, expires)
        if len(self._by_range) >= 100_000:
            self._by_range.clear()
        self._by_range[(keys, naive_timezone)] = (repr(version), summary)
        return summary

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
        lastmods = self._column(rows, self.lastmod_index, None, count)
        texts = None
        if self.lastmods_as_text:
            assert self.lastmod_parser is not None
            texts, lastmods = lastmods, parse_column(lastmods, self.lastmod_parser)
        if self.lastmod_in_utc:
            lastmods = [_in_utc(value) for value in lastmods]
            texts = None  # the values no longer read as their stored text
        return Batch(
            keys,
            locs,
            lastmods,
            self._column(rows, self.changefreq_index, self.changefreq, count),
            self._column(rows, self.priority_index, self.priority, count),
            texts,
        )

    def _call_loc(self, row: Row[Any]) -> Any:
        try:
            return self.loc(row)
        except Exception as exc:  # a callable failing on one row is a bad row, not a failure
            return Unreadable(None, f"the loc function raised {exc!r:.200}")

    @staticmethod
    def _column(
        rows: Sequence[Row[Any]], index: int | None, constant: Any, count: int
    ) -> Sequence[Any]:
        if index is None:
            return Repeated(constant, count)
        return list(map(itemgetter(index), rows))


_UNKNOWN = object()
SINCE = "sitemap_since"
"""The bound parameter of :meth:`_Mapping.changes_stmt`: lastmods later than this."""
LIMIT = "sitemap_limit"
_NULL_KEY = Unreadable(None, "the key is NULL: a row without a key cannot be placed on a page")


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


class _Options:
    """What the sync and async sources share: their options, checked once, and the mapping."""

    engine_type: type[Any]
    wrong_engine: str
    """What the error says when the engine is of the other kind."""
    engine: Any

    def __init__(
        self,
        stmt: AnySelect,
        engine: Any,
        *,
        name: str,
        loc: LocSpec,
        lastmod: str | None = None,
        changefreq: str | None = None,
        changefreq_column: str | None = None,
        priority: float | None = None,
        priority_column: str | None = None,
        key: str | Sequence[str] | None = None,
        version: VersionSpec = None,
        **extensions: Any,
    ) -> None:
        if not isinstance(engine, self.engine_type):
            raise ConfigurationTypeError(f"engine: source {name!r}: {self.wrong_engine}")
        self.engine = engine
        columns = [str(c.key) for c in stmt.selected_columns] if isinstance(stmt, Select) else []
        self.extras = extras_spec(name, columns, loc, extensions)
        self.mapping = _Mapping(
            stmt,
            name=name,
            loc=self.extras.first_loc or loc,
            lastmod=lastmod,
            changefreq=changefreq,
            changefreq_column=changefreq_column,
            priority=priority,
            priority_column=priority_column,
            key=key,
            version=version,
            dialect=engine.dialect,
        )
        if self.extras.active:
            self.mapping.keep_rows()
        self.name = self.mapping.name
        self.pageable = self.mapping.pageable
        self.fixed_ranges = self.mapping.fixed_ranges
        self.versioned = version is not None
        # Pages kept current between recounts (see live_pages): integer keys, and no
        # version that already says when anything changed.
        self.live = self.pageable and self.fixed_ranges and not self.versioned
        self.tracks_changes = self.mapping.lastmod_name is not None
        self.shape = self.extras.shape
        self.extras.language_templates = [
            LocTemplate(template, columns).locs for template in self.extras.templates
        ]

    def fingerprint(self) -> str:
        return self.mapping._fingerprint + self.extras.fingerprint()


class SQLAlchemySource(_Options, SyncSource):
    """A ``select()`` on a sync :class:`~sqlalchemy.engine.Engine`.

    ``loc`` is a template over the selected columns (``"/articles/{slug}"``) or
    a callable taking the row; ``lastmod`` names a column; ``changefreq`` /
    ``priority`` are constants, ``changefreq_column`` / ``priority_column``
    name columns. ``key`` names the unique, indexed column(s) that order the
    rows (default: the selected primary key columns).
    """

    engine_type = Engine
    wrong_engine = (
        "SQLAlchemySource needs a sync Engine; use AsyncSQLAlchemySource for an AsyncEngine"
    )
    engine: Engine

    def _version(self, conn: Connection, keys: KeyRange) -> tuple[Any, Any]:
        """The version of the rows in ``keys`` and, for a fixed range, the lowest key."""
        mapping = self.mapping
        stmt = mapping.version_stmt(keys)
        if stmt is not None:
            row = conn.execute(mapping.with_lowest(stmt, keys), mapping.version_bounds(keys))
            values = tuple(row.one())
            return mapping.version_of(values[0]), values[-1]
        assert callable(mapping.version)
        version = mapping.version()
        lowest = mapping.lowest_for(version) if mapping.checks_lowest(keys) else None
        if lowest is _UNKNOWN:
            lowest = conn.scalar(mapping.lowest_stmt())
            mapping.remember_lowest(version, lowest)
        return version, lowest

    def summarize(
        self, keys: KeyRange, naive_timezone: tzinfo, horizon: datetime | None = None
    ) -> Summary:
        horizon = horizon or default_horizon()
        mapping = self.mapping
        with self.engine.connect() as conn:
            version = None
            if mapping.version is not None:
                version, lowest = self._version(conn, keys)
                if mapping.checks_lowest(keys) and mapping.must_cut(lowest):
                    raise CutPages(self.name)
                known = mapping.cached(version, keys, naive_timezone, horizon)
                if known is not None:
                    return known
            bounds = {**mapping.bounds(keys), **mapping.horizon_bounds(horizon, naive_timezone)}
            row = conn.execute(mapping.summary_stmt(keys), bounds).first()
        if mapping.checks_lowest(keys) and row is not None and mapping.must_cut(row[-1]):
            raise CutPages(self.name)
        return mapping.summary(row, version, keys, naive_timezone, horizon)

    def buckets(
        self, width: int, naive_timezone: tzinfo, horizon: datetime | None = None
    ) -> list[Bucket]:
        horizon = horizon or default_horizon()
        mapping = self.mapping
        bounds = mapping.horizon_bounds(horizon, naive_timezone)
        with self.engine.connect() as conn:
            nulls = mapping.nulls_stmt()
            if nulls is not None:
                mapping.report_nulls(conn.scalar(nulls))
            stmt = mapping.buckets_stmt(width)
            found = mapping.buckets(conn.execute(stmt, bounds).all(), naive_timezone, horizon)
            if found is None:  # a key below 0: cut like any other key
                rows = conn.execute(mapping.cuts_stmt(width), bounds).all()
                found = mapping.cuts(rows, naive_timezone, horizon)
        return found

    def changed(
        self, since: datetime, horizon: datetime, naive_timezone: tzinfo, limit: int
    ) -> list[tuple[Any, Any]]:
        mapping = self.mapping
        bounds = mapping.changes_bounds(since, horizon, naive_timezone, limit)
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(mapping.changes_stmt(), bounds)]

    def batches(self, keys: KeyRange = ALL, size: int = 500) -> Iterator[Batch]:
        mapping, extras = self.mapping, self.extras
        stmt, bounds = mapping.rows_stmt(keys), mapping.bounds(keys)
        with self.engine.connect() as conn:
            if mapping.driver_rows:
                # Executed as usual (events, caching, binds); rows read from the cursor.
                with conn.execute(stmt, bounds) as result:
                    fetch = result.cursor.fetchmany
                    while rows := fetch(size):
                        yield mapping.map_rows(rows)
                return
            with conn.execution_options(yield_per=size).execute(stmt, bounds) as result:
                for partition in result.partitions(size):
                    batch = mapping.map_rows(partition)
                    yield extras.apply(batch, partition) if extras.active else batch
