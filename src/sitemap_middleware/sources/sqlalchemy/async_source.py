"""SQLAlchemy ``select()`` sources on an ``AsyncEngine`` (needs ``greenlet``).

Same options and behaviour as
:class:`~sitemap_middleware.sources.sqlalchemy.source.SQLAlchemySource`;
rows come through ``AsyncConnection.stream()``, a server-side cursor, because
``execute()`` would buffer the whole result (aiosqlite fetches everything).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from ...errors import MissingExtra

try:
    from sqlalchemy import Connection, CursorResult
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
except ModuleNotFoundError as exc:
    raise MissingExtra.of(exc, "AsyncSQLAlchemySource", "sqlalchemy") from exc

from ...core.dates import AsOf
from ...core.validators import Summary
from ...output.entry import Batch
from ..base import ALL, AsyncSource, Changes, CutPages, KeyRange, Mark, Page
from . import sqlite_hash
from .source import SQLSourceBase
from .summaries import UNKNOWN

T = TypeVar("T")


class AsyncSQLAlchemySource(SQLSourceBase, AsyncSource):
    """A ``select()`` on an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (same options)."""

    engine_type = AsyncEngine
    wrong_engine = (
        "AsyncSQLAlchemySource needs an AsyncEngine; use SQLAlchemySource for a sync Engine"
    )
    engine: AsyncEngine

    async def _version(self, conn: AsyncConnection, keys: KeyRange) -> tuple[Any, Any]:
        """The version of the rows in ``keys`` and, for a fixed range, the lowest key."""
        stmt = self.statements.version_stmt(keys)
        if stmt is not None:
            result = await conn.execute(
                self.statements.with_lowest(stmt, keys), self.statements.version_bounds(keys)
            )
            values = tuple(result.one())
            return self.summaries.version_of(values[0]), values[-1]
        assert callable(self.options.version)
        version = self.options.version()
        if hasattr(version, "__await__"):
            version = await version
        lowest = self.summaries.lowest_for(version) if self.statements.checks_lowest(keys) else None
        if lowest is UNKNOWN:
            lowest = await conn.scalar(self.statements.lowest_stmt())
            self.summaries.remember_lowest(version, lowest)
        return version, lowest

    async def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        async with self.engine.connect() as conn:
            version = None
            if self.options.version is not None:
                version, lowest = await self._version(conn, keys)
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
                await sqlite_hash.ensure_async(conn)
            row = (await conn.execute(self.statements.summary_stmt(keys), bounds)).first()
        if (
            self.statements.checks_lowest(keys)
            and row is not None
            and self.summaries.must_cut(row[-1])
        ):
            raise CutPages(self.name)
        return self.summaries.summary(row, version, keys, as_of)

    async def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        bounds = self.statements.listed_until_bounds(as_of)
        async with self.engine.connect() as conn:
            nulls = self.statements.nulls_stmt()
            if nulls is not None:
                self.paging.report_nulls(await conn.scalar(nulls))
            if self.statements.aggregates.row_hash:
                await sqlite_hash.ensure_async(conn)
            rows = (await conn.execute(self.paging.pages_stmt(page_size), bounds)).all()  # per page
            found = self.paging.pages(rows, as_of)
            if found is None:  # a key below 0: cut like any other key
                rows = (await conn.execute(self.paging.cuts_stmt(page_size), bounds)).all()
                found = self.paging.cuts(rows, as_of)
        return found

    async def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        bounds = self.statements.changes_bounds(since, as_of, limit)
        async with self.engine.connect() as conn:
            return [
                tuple(row) for row in await conn.execute(self.statements.changes_stmt(), bounds)
            ]

    async def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        push = self.push
        stmt = push.marks_from_start if after is None else push.marks_after
        bounds = push.marks_bounds(after, as_of, limit)
        async with self.engine.connect() as conn:
            found = await conn.execute(stmt, bounds)
            marks = [(key, Mark(lastmod, text)) for key, lastmod, text in found]
            if not marks:
                return Changes([], Batch.of([]))
            keys = push.rows_bounds([key for key, _ in marks])
            rows = (await conn.execute(push.rows, keys)).all()
        return Changes(marks, self.mapped(rows))

    async def push_start(self, as_of: AsOf) -> Mark:
        push = self.push
        bounds = push.newest_bounds(as_of)
        async with self.engine.connect() as conn:
            row = (await conn.execute(push.newest, bounds)).first()
        return push.start(as_of) if row is None else Mark(*row)

    async def batches(self, keys: KeyRange = ALL, size: int = 500) -> AsyncGenerator[Batch, None]:
        stmt, bounds = self.statements.rows_stmt(keys), self.statements.bounds(keys)
        if self.read_plan.driver_rows:
            async with self.engine.connect() as conn:
                async for rows in _driver_rows(conn, stmt, bounds, size):
                    yield self.rows.map_rows(rows)
            return
        options = {"yield_per": max(size, ROWS_PER_TRIP)}
        async with (
            self.engine.connect() as conn,
            conn.stream(stmt, bounds, execution_options=options) as result,
        ):
            async for rows in result.partitions(size):
                batch = self.rows.map_rows(rows)
                yield self.extras.apply(batch, rows) if self.extras.active else batch


# Rows fetched per trip to the driver (a hand-off to aiosqlite's thread, or a network
# round trip), served as batches of the requested size: fewer trips, the same batches.
ROWS_PER_TRIP = 2_000


async def _driver_rows(
    conn: AsyncConnection, stmt: Any, bounds: dict[str, Any], size: int
) -> AsyncIterator[Sequence[Any]]:
    """The driver's own rows of a streamed statement, ``size`` at a time.

    Executed as usual (events, caching, binds) on a server-side cursor. SQLAlchemy
    reads its first row ahead, so the first rows come through its result (which empties
    that buffer); the rest straight from the cursor, whose ``fetchmany`` runs in
    SQLAlchemy's greenlet bridge as its own results' do.
    """
    trip = max(size, ROWS_PER_TRIP)
    result = await conn.run_sync(_stream, stmt, bounds)
    try:
        rows: Sequence[Any] = await conn.run_sync(_call, result.fetchmany, trip)
        for start in range(0, len(rows), size):
            yield rows[start : start + size]
        if len(rows) < trip:
            return  # the last rows (the result is closed already when there were none)
        fetch = result.cursor.fetchmany
        while rows := await conn.run_sync(_call, fetch, trip):
            for start in range(0, len(rows), size):
                yield rows[start : start + size]
    finally:
        await conn.run_sync(_call, result.close)


def _stream(conn: Connection, stmt: Any, bounds: dict[str, Any]) -> CursorResult[Any]:
    return conn.execution_options(stream_results=True).execute(stmt, bounds)


def _call(_: Connection, function: Callable[..., T], *args: Any) -> T:
    return function(*args)
