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
from ..base import ALL, AsyncSource, Changes, KeyRange, Mark, Page
from .queries import arun
from .source import SQLSourceBase

T = TypeVar("T")


class AsyncSQLAlchemySource(SQLSourceBase, AsyncSource):
    """A ``select()`` on an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (same options)."""

    engine_type = AsyncEngine
    wrong_engine = (
        "AsyncSQLAlchemySource needs an AsyncEngine; use SQLAlchemySource for a sync Engine"
    )
    engine: AsyncEngine

    async def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        return await arun(self.engine, self.summary_read(keys, as_of))

    async def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        return await arun(self.engine, self.pages_read(page_size, as_of))

    async def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        return await arun(self.engine, self.changed_read(since, as_of, limit))

    async def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        return await arun(self.engine, self.changes_read(after, as_of, limit))

    async def push_start(self, as_of: AsOf) -> Mark:
        return await arun(self.engine, self.push_start_read(as_of))

    async def batches(self, keys: KeyRange = ALL, size: int = 500) -> AsyncGenerator[Batch, None]:
        stmt, bounds = self.rows_read(keys)
        mapped = self.mapped
        if self.read_plan.driver_rows:
            async with self.engine.connect() as conn:
                async for rows in _driver_rows(conn, stmt, bounds, size):
                    yield mapped(rows)
            return
        options = {"yield_per": max(size, ROWS_PER_TRIP)}
        async with (
            self.engine.connect() as conn,
            conn.stream(stmt, bounds, execution_options=options) as result,
        ):
            async for rows in result.partitions(size):
                yield mapped(rows)


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
