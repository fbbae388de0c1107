"""Faults: a slow database does not stop other requests, and a transfer cancelled at
shutdown gives its connection and its generation place back."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware import AsyncSQLAlchemySource, Limits, SitemapApp, SQLAlchemySource

from ..adapters import call
from ..support import articles

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"


def held_loc(gate: threading.Event, reached: threading.Event) -> Any:
    """A loc function that stalls the row stream at row 100 until ``gate`` opens."""

    def loc(row: Any) -> str:
        if row.id == 100:
            reached.set()
            gate.wait(20)
        return f"/articles/{row.slug}"

    return loc


async def test_a_stalled_sync_stream_does_not_stop_other_requests(engine: Engine) -> None:
    gate, reached = threading.Event(), threading.Event()
    slow = SQLAlchemySource(
        select(articles.c.id, articles.c.slug),
        engine,
        name="slow",
        loc=held_loc(gate, reached),
    )
    fast = SQLAlchemySource(
        select(articles.c.id, articles.c.slug), engine, name="fast", loc="/a/{slug}"
    )
    app = SitemapApp(
        sources={"slow": slow, "fast": fast},
        base_url=BASE,
        limits=Limits(batch_size=50, chunk_bytes=1024),
    )
    results: dict[str, Any] = {}

    async def stalled() -> None:
        results["slow"] = await call(app, path="/sitemap-slow-1.xml")

    async with anyio.create_task_group() as group:
        group.start_soon(stalled)
        assert await anyio.to_thread.run_sync(reached.wait, 10)
        # The slow page holds a worker thread; the event loop still answers everything else.
        for path in ("/sitemap-fast-1.xml", "/sitemap.xml", "/sitemap-fast-1.xml.gz"):
            assert (await call(app, path=path)).status == 200
        head = await call(app, "HEAD", path="/sitemap-slow-1.xml")
        assert head.status == 200
        assert "slow" not in results
        gate.set()
    assert results["slow"].status == 200 and results["slow"].complete
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_cancellation_at_shutdown_returns_the_connection(
    kind: str, engine: Engine, db_path: Path
) -> None:
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")
    stmt = select(articles.c.id, articles.c.slug)
    source: Any = (
        SQLAlchemySource(stmt, engine, name="a", loc="/articles/{slug}")
        if kind == "sync"
        else AsyncSQLAlchemySource(stmt, async_engine, name="a", loc="/articles/{slug}")
    )
    pool = engine.pool if kind == "sync" else async_engine.pool
    app = SitemapApp(
        sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=1024)
    )
    writing = anyio.Event()
    bodies: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            bodies.append(message["body"])
            writing.set()
            await anyio.sleep_forever()  # a slow client: the write never completes

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/sitemap.xml",
        "root_path": "",
        "headers": [],
        "query_string": b"",
    }
    async with anyio.create_task_group() as group:
        group.start_soon(app, scope, receive, send)
        await writing.wait()
        assert pool.checkedout() == 1  # type: ignore[attr-defined]
        group.cancel_scope.cancel()  # what a server does to requests still running at shutdown
    assert len(bodies) == 1 and b"</urlset>" not in bodies[0]
    assert pool.checkedout() == 0  # type: ignore[attr-defined]
    assert app.sitemap.slots.running == 0
    await async_engine.dispose()
