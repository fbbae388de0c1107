"""SQLAlchemy ``select()`` sources on an ``AsyncEngine`` (needs ``greenlet``).

Same options and behaviour as :class:`~sitemap_middleware.sources.sqlalchemy.SQLAlchemySource`;
rows come through ``AsyncConnection.stream()``, a server-side cursor, because
``execute()`` would buffer the whole result (aiosqlite fetches everything).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ..entry import Batch
from ..validators import Summary, default_horizon
from .base import ALL, AsyncSource, Bucket, KeyRange
from .sqlalchemy import _Options

if TYPE_CHECKING:
    pass


class AsyncSQLAlchemySource(_Options, AsyncSource):
    """A ``select()`` on an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (same options)."""

    engine_type = AsyncEngine
    wrong_engine = (
        "AsyncSQLAlchemySource needs an AsyncEngine; use SQLAlchemySource for a sync Engine"
    )
    engine: AsyncEngine

    async def _version(self, conn: AsyncConnection, keys: KeyRange) -> Any:
        mapping = self.mapping
        if mapping.version is None:
            return None
        stmt = mapping.version_stmt(keys)
        if stmt is not None:
            return mapping.version_of(await conn.scalar(stmt, mapping.version_bounds(keys)))
        assert callable(mapping.version)
        value = mapping.version()
        if hasattr(value, "__await__"):
            value = await value
        return value

    async def summarize(
        self, keys: KeyRange, naive_timezone: tzinfo, horizon: datetime | None = None
    ) -> Summary:
        horizon = horizon or default_horizon()
        mapping = self.mapping
        async with self.engine.connect() as conn:
            version = await self._version(conn, keys)
            known = mapping.cached(version, keys, naive_timezone, horizon)
            if known is not None:
                return known
            bounds = {**mapping.bounds(keys), **mapping.horizon_bounds(horizon, naive_timezone)}
            row = (await conn.execute(mapping.summary_stmt(keys), bounds)).first()
        return mapping.summary(row, version, keys, naive_timezone, horizon)

    async def buckets(
        self, width: int, naive_timezone: tzinfo, horizon: datetime | None = None
    ) -> list[Bucket]:
        horizon = horizon or default_horizon()
        mapping = self.mapping
        stmt, bounds = mapping.buckets_stmt(width), mapping.horizon_bounds(horizon, naive_timezone)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt, bounds)).all()  # one row per page: small
        return mapping.buckets(rows, naive_timezone, horizon)

    async def batches(self, keys: KeyRange = ALL, size: int = 500) -> AsyncIterator[Batch]:
        mapping = self.mapping
        stmt, bounds = mapping.rows_stmt(keys), mapping.bounds(keys)
        options = {"yield_per": size}
        async with (
            self.engine.connect() as conn,
            conn.stream(stmt, bounds, execution_options=options) as result,
        ):
            async for rows in result.partitions(size):
                batch = mapping.map_rows(rows)
                yield self.extras.apply(batch, rows) if self.extras.active else batch
