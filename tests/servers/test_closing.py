"""Closing an app lets the jobs of pages kept current that run in the background end first:
their connections are back in the pool before the application disposes of its engine.

A source's reads wait at a gate the test holds shut while a refresh runs in the
background; the app is closed as each adapter is (the ASGI lifespan's shutdown, ``close()``
under WSGI, Django's middleware's ``close()`` or ``aclose()``), and the gate opens a moment
later, from another thread: the close returns only once the job has ended."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest
from sqlalchemy import Engine

from sitemap_middleware import Freshness, Limits, SitemapMiddleware, SQLAlchemySource
from sitemap_middleware.servers.types import Message, Receive, Scope, Send
from sitemap_middleware.testing import with_lifespan

from ..adapters import call
from ..clock import Clock, drive
from ..support import article_source

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
SETTINGS = {"base_url": BASE, "limits": Limits(max_urls=500), "freshness": Freshness(exact_rows=0)}


class Gate:
    """Shut: a read that reaches it holds its connection and waits until it opens."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.reached = threading.Event()

    def shut(self) -> None:
        self.open.clear()
        self.reached.clear()

    def pass_through(self, engine: Engine) -> None:
        if self.open.is_set():
            return
        with engine.connect():  # as a read holds its connection while the database works
            self.reached.set()
            assert self.open.wait(10), "the gate never opened"

    def open_later(self, seconds: float = 0.3) -> None:
        threading.Timer(seconds, self.open.set).start()


def gated_source(engine: Engine, gate: Gate) -> SQLAlchemySource:
    source = article_source(engine)
    changed = source.changed

    def gated_changed(*args: Any, **kwargs: Any) -> Any:
        gate.pass_through(engine)
        return changed(*args, **kwargs)

    source.changed = gated_changed  # type: ignore[method-assign]
    return source


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.open.set()


async def start_a_refresh(app: Any, clock: Clock, gate: Gate) -> None:
    """Serve the index once, then start a refresh in the background that waits at the gate."""
    assert (await call(app)).status == 200
    gate.shut()
    clock.advance(1.5)  # a refresh is due, within its bound: it runs in the background
    assert (await call(app)).status == 200
    assert await anyio.to_thread.run_sync(gate.reached.wait, 10), "no refresh started"
    assert engine_of(app).pool.checkedout() == 1  # type: ignore[attr-defined]


def engine_of(app: Any) -> Engine:
    (source,) = app.sitemap.sources
    engine: Engine = source.engine
    return engine


def jobs_ended(app: Any) -> bool:
    return all(live.idle.is_set() for live in app.sitemap.current_pages.values())


async def test_closing_lets_the_job_in_the_background_end(
    make_app: Any, engine: Engine, gate: Gate, request: pytest.FixtureRequest
) -> None:
    clock = Clock()
    app = make_app(sources=[gated_source(engine, gate)], clock=clock, **SETTINGS)
    await start_a_refresh(app, clock, gate)
    adapter = request.node.callspec.params["make_app"]
    gate.open_later()
    if adapter == "asgi":  # the lifespan's shutdown
        await with_lifespan(app, BASE, lambda client: anyio.lowlevel.checkpoint())
    elif adapter == "django-asgi":
        await app.middleware.aclose()
    else:  # a WSGI server's thread
        await anyio.to_thread.run_sync(app.close)
    assert jobs_ended(app)
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_the_applications_shutdown_runs_once_the_jobs_have_ended(
    engine: Engine, gate: Gate
) -> None:
    """The middleware hands the lifespan's shutdown to the application it wraps only once its
    jobs have ended: an application that disposes of its engine then loses no connection."""
    seen: dict[str, Any] = {}

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "lifespan"
        while True:
            message: Message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                seen["checked out"] = engine.pool.checkedout()  # type: ignore[attr-defined]
                seen["jobs ended"] = jobs_ended(middleware)
                engine.dispose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    middleware = SitemapMiddleware(application, sources=[gated_source(engine, gate)], **SETTINGS)
    clock = Clock()
    drive(middleware, clock)

    async def work(client: Any) -> None:
        await start_a_refresh(middleware, clock, gate)
        gate.open_later()

    await with_lifespan(middleware, BASE, work)
    assert seen == {"checked out": 0, "jobs ended": True}
