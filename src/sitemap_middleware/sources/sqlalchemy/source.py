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
:class:`~sitemap_middleware.sources.sqlalchemy.change_counter.ChangeCounter` (revisions
per key range, kept by triggers), a scalar ``select()`` (such as a revision
counter the application bumps on every write) or a callable. The aggregates
are then read once per version and key range and remembered: while the
version stands, a request costs the version alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from ...errors import MissingExtra

try:
    from sqlalchemy import Select
    from sqlalchemy.engine import Engine
except ModuleNotFoundError as exc:
    raise MissingExtra.of(exc, "SQLAlchemySource", "sqlalchemy") from exc

from ...core.dates import AsOf
from ...core.validators import Summary
from ...output.entry import Batch
from ...settings import ConfigurationTypeError
from ..base import (
    ALL,
    REQUIRED,
    Changes,
    CutPages,
    KeyRange,
    Mark,
    Page,
    SyncSource,
    check_given,
)
from ..extras import ExtensionOptions, ExtrasSpec, extras_spec
from .aggregates import Aggregates
from .locs import LocTemplate
from .options import LocSpec, SQLOptions, sql_options
from .pages import SQLPages
from .push import PushStatements
from .queries import ROW_HASH, CallVersion, Execute, Read, run
from .reads import ReadPlan
from .rows import RowMapping
from .statements import SQLStatements
from .summaries import UNKNOWN, SQLSummaries

if TYPE_CHECKING:
    from .options import AnySelect, VersionSpec

__all__ = ["LocSpec", "LocTemplate", "ReadPlan", "SQLAlchemySource"]


class SQLSourceBase:
    """What the sync and async sources share: their options, checked once; the read plan
    chosen from them; the row mapping, statements, pages and summaries built on both."""

    engine_type: type[Any]
    wrong_engine: str
    """What the error says when the engine is of the other kind."""
    engine: Any

    def __init__(
        self,
        stmt: AnySelect,
        engine: Any,
        *,
        name: str = REQUIRED,
        loc: LocSpec = REQUIRED,
        lastmod: str | None = None,
        changefreq: str | None = None,
        changefreq_column: str | None = None,
        priority: float | None = None,
        priority_column: str | None = None,
        key: str | Sequence[str] | None = None,
        version: VersionSpec = None,
        query_id: str | None = None,
        **extensions: Unpack[ExtensionOptions],
    ) -> None:
        check_given(type(self).__name__, name=name, loc=loc)
        if not isinstance(engine, self.engine_type):
            raise ConfigurationTypeError(f"engine: source {name!r}: {self.wrong_engine}")
        self.engine = engine
        columns = [str(c.key) for c in stmt.selected_columns] if isinstance(stmt, Select) else []
        self.extras = extras_spec(name, columns, loc, extensions, self._default_language())
        self.options: SQLOptions = sql_options(
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
            query_id=query_id,
            dialect=engine.dialect,
        )
        options = self.options
        self.read_plan = ReadPlan.choose(options, extensions=self.extras.active)
        """How the rows are read, chosen once from the options."""
        self.rows = RowMapping(options, self.read_plan)
        aggregates = _aggregates(options, self.extras)
        self.statements = SQLStatements(options, self.read_plan, aggregates)
        self.paging = SQLPages(options, self.statements)
        self.summaries = SQLSummaries(options, aggregates)
        self.name = options.name
        self.pageable = True
        self.fixed_ranges = options.fixed_ranges
        self.versioned = version is not None
        # Pages kept current between recounts (see current_pages): integer keys, and no
        # version that already says when anything changed.
        self.live = self.pageable and self.fixed_ranges and not self.versioned
        self.tracks_changes = options.lastmod_name is not None
        self.pushable = options.lastmod_name is not None and len(options.key_names) == 1
        self._push: PushStatements | None = None
        self._fingerprint: str | None = None
        self.shape = self.extras.shape
        self.extras.language_templates = [
            LocTemplate(template, columns).locs for template in self.extras.templates
        ]
        if self.extras.x_default_template is not None:
            self.extras.x_default_locs = LocTemplate(self.extras.x_default_template, columns).locs

    def _default_language(self) -> str | None:
        """The language ``x_default=True`` names: none here (it is Django's form)."""
        return None

    def fingerprint(self) -> str:
        # Settings only, fixed once built (asked for by every request's validators).
        if self._fingerprint is None:
            self._fingerprint = self.options.fingerprint + self.extras.fingerprint()
        return self._fingerprint

    @property
    def push(self) -> PushStatements:
        """The statements that find changes for IndexNow (built on first use; a source that
        cannot be pushed says why)."""
        if self._push is None:
            self._push = PushStatements(self.options, self.statements)
        return self._push

    def mapped(self, rows: Sequence[Any]) -> Batch:
        """Rows as the sitemap maps them: entries, extensions, one per language."""
        batch = self.rows.map_rows(rows)
        return self.extras.apply(batch, rows) if self.extras.active else batch

    # The reads, run by both sources (queries.run, queries.arun): what each one executes,
    # in which order, and what it makes of the rows.

    def _version(self, keys: KeyRange) -> Read[tuple[Any, Any]]:
        """The version of the rows in ``keys`` and, for a fixed range, the lowest key."""
        stmt = self.statements.version_stmt(keys)
        if stmt is not None:
            row = yield Execute(
                self.statements.with_lowest(stmt, keys), self.statements.version_bounds(keys), "one"
            )
            values = tuple(row)
            return self.summaries.version_of(values[0]), values[-1]
        assert callable(self.options.version)
        version = yield CallVersion(self.options.version)
        lowest = self.summaries.lowest_for(version) if self.statements.checks_lowest(keys) else None
        if lowest is UNKNOWN:
            lowest = yield Execute(self.statements.lowest_stmt(), None, "scalar")
            self.summaries.remember_lowest(version, lowest)
        return version, lowest

    def summary_read(self, keys: KeyRange, as_of: AsOf) -> Read[Summary]:
        """``summarize``: by the version when there is one, else one aggregate statement."""
        version = None
        if self.options.version is not None:
            version, lowest = yield from self._version(keys)
            if self.statements.checks_lowest(keys) and self.summaries.must_cut(lowest):
                raise CutPages(self.name)
            known = self.summaries.cached(version, keys, as_of)
            if known is not None:
                return known
        bounds = {
            **self.statements.bounds(keys),
            **self.statements.listed_until_bounds(as_of),
        }
        if self.statements.aggregates.row_hash:
            yield ROW_HASH
        row = yield Execute(self.statements.summary_stmt(keys), bounds, "first")
        if (
            self.statements.checks_lowest(keys)
            and row is not None
            and self.summaries.must_cut(row[-1])
        ):
            raise CutPages(self.name)
        return self.summaries.summary(row, version, keys, as_of)

    def pages_read(self, page_size: int, as_of: AsOf) -> Read[list[Page]]:
        """``pages``: one row per page (or per cut, for keys that are not fixed ranges)."""
        bounds = self.statements.listed_until_bounds(as_of)
        nulls = self.statements.nulls_stmt()
        if nulls is not None:
            self.paging.report_nulls((yield Execute(nulls, None, "scalar")))
        if self.statements.aggregates.row_hash:
            yield ROW_HASH
        rows = yield Execute(self.paging.pages_stmt(page_size), bounds, "all")  # one per page
        found = self.paging.pages(rows, as_of)
        if found is None:  # a key below 0: cut like any other key
            rows = yield Execute(self.paging.cuts_stmt(page_size), bounds, "all")
            found = self.paging.cuts(rows, as_of)
        return found

    def changed_read(self, since: datetime, as_of: AsOf, limit: int) -> Read[list[tuple[Any, Any]]]:
        """``changed``: the keys and lastmods of the rows changed since ``since``."""
        bounds = self.statements.changes_bounds(since, as_of, limit)
        rows = yield Execute(self.statements.changes_stmt(), bounds, "all")
        return [tuple(row) for row in rows]

    def changes_read(self, after: Mark | None, as_of: AsOf, limit: int) -> Read[Changes]:
        """``changes``: the marks after ``after``, then those rows, mapped."""
        push = self.push
        stmt = push.marks_from_start if after is None else push.marks_after
        found = yield Execute(stmt, push.marks_bounds(after, as_of, limit), "all")
        marks = [(key, Mark(lastmod, text)) for key, lastmod, text in found]
        if not marks:
            return Changes([], Batch.of([]))
        keys = push.rows_bounds([key for key, _ in marks])
        rows = yield Execute(push.rows, keys, "all")
        return Changes(marks, self.mapped(rows))

    def push_start_read(self, as_of: AsOf) -> Read[Mark]:
        """``push_start``: the newest listed row's mark, or now when there is none."""
        push = self.push
        row = yield Execute(push.newest, push.newest_bounds(as_of), "first")
        return push.start(as_of) if row is None else Mark(*row)

    def rows_read(self, keys: KeyRange) -> tuple[Any, dict[str, Any]]:
        """The statement that streams the rows of ``keys`` (to :meth:`mapped`), its bounds."""
        return self.statements.rows_stmt(keys), self.statements.bounds(keys)


def _aggregates(options: SQLOptions, extras: ExtrasSpec) -> Aggregates:
    """The aggregate terms of the summary and pages, by the key and shown columns' types."""
    selected = options.stmt.selected_columns
    lastmod = options.lastmod_name
    return Aggregates(
        options.dialect.name,
        [(name, selected[name].type) for name in options.key_names],
        (lastmod, selected[lastmod].type) if lastmod is not None else None,
        options.changefreq_name,
        options.priority_name,
        options.lastmod_parser,
        [(options.columns[index], selected[index].type) for index in shown(options, extras)],
        {name: column.type for name, column in zip(options.columns, selected, strict=True)},
    )


def shown(options: SQLOptions, extras: ExtrasSpec) -> list[int]:
    """The positions of the columns besides the key, lastmod, changefreq and priority whose
    values feed served bytes: a loc template's fields and an image column; every selected
    column when a function takes the row (a loc callable, ``alternates``, ``images``,
    ``videos``, ``news``), since it may read any of them."""
    functions = (extras.alternates, extras.images, extras.videos, extras.news)
    if not isinstance(options.loc, LocTemplate) or any(f is not None for f in functions):
        used: set[int | None] = set(range(len(options.columns)))
    else:
        used = {*options.loc.fields, extras.image_column}
    own = {*options.key_index, options.lastmod_index, options.changefreq_index}
    own.add(options.priority_index)
    return sorted(index for index in used - own if index is not None)


class SQLAlchemySource(SQLSourceBase, SyncSource):
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

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        return run(self.engine, self.summary_read(keys, as_of))

    def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        return run(self.engine, self.pages_read(page_size, as_of))

    def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        return run(self.engine, self.changed_read(since, as_of, limit))

    def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        return run(self.engine, self.changes_read(after, as_of, limit))

    def push_start(self, as_of: AsOf) -> Mark:
        return run(self.engine, self.push_start_read(as_of))

    def batches(self, keys: KeyRange = ALL, size: int = 500) -> Iterator[Batch]:
        stmt, bounds = self.rows_read(keys)
        mapped = self.mapped
        with self.engine.connect() as conn:
            if self.read_plan.driver_rows:
                # Executed as usual (events, caching, binds); rows read from the cursor.
                with conn.execute(stmt, bounds) as result:
                    fetch = result.cursor.fetchmany
                    while rows := fetch(size):
                        yield mapped(rows)
                return
            with conn.execution_options(yield_per=size).execute(stmt, bounds) as result:
                for partition in result.partitions(size):
                    yield mapped(partition)
