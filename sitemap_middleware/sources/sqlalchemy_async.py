"""SQLAlchemy ``select()`` sources on an ``AsyncEngine`` (needs ``greenlet``).

Same options and behaviour as :class:`~sitemap_middleware.sources.sqlalchemy.SQLAlchemySource`;
rows come through ``AsyncConnection.stream()``, a server-side cursor, because
``execute()`` would buffer the whole result (aiosqlite fetches everything).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ..entry import Batch
from ..validators import Summary
from .base import ALL, AsyncSource, Bucket, KeyRange
from .extras import extras_spec
from .sqlalchemy import LocSpec, LocTemplate, _Mapping

if TYPE_CHECKING:
    from .sqlalchemy import AnySelect, VersionSpec


class AsyncSQLAlchemySource(AsyncSource):
    """A ``select()`` on an :class:`~sqlalchemy.ext.asyncio.AsyncEngine` (same options)."""

    def __init__(
        self,
        stmt: AnySelect,
        engine: AsyncEngine,
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
        if not isinstance(engine, AsyncEngine):
            raise TypeError(
                f"source {name!r}: AsyncSQLAlchemySource needs an AsyncEngine; use "
                "SQLAlchemySource for a sync Engine"
            )
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
        self.shape = self.extras.shape
        self.extras.language_templates = [
            LocTemplate(template, columns).locs for template in self.extras.templates
        ]

    def fingerprint(self) -> str:
        return self.mapping._fingerprint + self.extras.fingerprint()

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

    async def summarize(self, keys: KeyRange, naive_timezone: tzinfo) -> Summary:
        async with self.engine.connect() as conn:
            version = await self._version(conn, keys)
            known = self.mapping.cached(version, keys, naive_timezone)
            if known is not None:
                return known
            mapping = self.mapping
            row = (await conn.execute(mapping.summary_stmt(keys), mapping.bounds(keys))).first()
        return self.mapping.summary(row, version, keys, naive_timezone)

    async def buckets(self, width: int, naive_timezone: tzinfo) -> list[Bucket]:
        stmt = self.mapping.buckets_stmt(width)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()  # one row per page: small
        return self.mapping.buckets(rows, naive_timezone)

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
