"""A read written once (``queries.Read``) runs the same under a sync ``Engine`` and an
``AsyncEngine``: the same replies, a failing statement raised where the read asked for it."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import create_engine, literal_column, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware.sources.sqlalchemy import queries
from sitemap_middleware.sources.sqlalchemy.queries import CallVersion, Execute, Read


def _read(version: Any) -> Read[list[Any]]:
    seen: list[Any] = []
    seen.append((yield Execute(select(literal_column("7")), None, "scalar")))
    seen.append((yield Execute(text("SELECT :a, :b"), {"a": 1, "b": 2}, "one")))
    seen.append((yield Execute(text("SELECT 1 WHERE 0"), None, "first")))
    seen.append((yield Execute(text("SELECT 3 UNION ALL SELECT 4"), None, "all")))
    seen.append((yield CallVersion(version)))
    try:
        yield Execute(text("SELECT * FROM no_such_table"), None, "all")
    except OperationalError:
        seen.append("raised into the read")
    return [tuple(value) if isinstance(value, tuple) else value for value in seen]


EXPECTED = [7, (1, 2), None, [(3,), (4,)], "v1", "raised into the read"]


def test_a_read_on_a_sync_engine() -> None:
    engine = create_engine("sqlite://")
    try:
        assert queries.run(engine, _read(lambda: "v1")) == EXPECTED
    finally:
        engine.dispose()


def test_the_same_read_on_an_async_engine_awaits_an_async_version() -> None:
    async def version() -> str:
        return "v1"

    async def main() -> list[Any]:
        engine = create_async_engine("sqlite+aiosqlite://")
        try:
            return await queries.arun(engine, _read(version))
        finally:
            await engine.dispose()

    assert asyncio.run(main()) == EXPECTED
