"""Concurrent reads of the same aggregates share a query that started after they arrived."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import anyio.to_thread
import pytest
from sqlalchemy import Engine, event

from sitemap_middleware import SitemapApp
from sitemap_middleware.state.coalesce import AsyncCoalescer, ThreadCoalescer

from ..adapters import call
from ..support import article_source

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"


async def test_a_burst_costs_two_queries_and_no_one_gets_older_data() -> None:
    coalescer = AsyncCoalescer()
    release = [anyio.Event(), anyio.Event()]
    started: list[int] = []

    async def query() -> int:
        round_number = len(started)
        started.append(round_number)
        await release[round_number].wait()
        return round_number

    results: dict[str, int] = {}

    async def ask(name: str) -> None:
        results[name] = await coalescer.run("k", query)

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "first")
        await anyio.wait_all_tasks_blocked()
        assert started == [0]  # the first request's query is running
        for i in range(20):  # these arrive while it runs: they must not take its result
            group.start_soon(ask, f"later-{i}")
        await anyio.wait_all_tasks_blocked()
        assert started == [0]  # they wait for a round of their own
        release[0].set()
        await anyio.wait_all_tasks_blocked()
        assert started == [0, 1]  # one more query, started after all of them arrived
        release[1].set()
    assert results.pop("first") == 0
    assert set(results.values()) == {1}


async def test_an_error_reaches_every_request_of_its_round_and_the_next_round_retries() -> None:
    coalescer = AsyncCoalescer()
    calls = 0
    gate = anyio.Event()

    async def failing() -> int:
        nonlocal calls
        calls += 1
        await gate.wait()
        raise RuntimeError("database down")

    errors: list[BaseException] = []

    async def ask() -> None:
        try:
            await coalescer.run("k", failing)
        except RuntimeError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        gate.set()
    assert len(errors) == 5 and calls <= 2

    async def works() -> int:
        return 7

    assert await coalescer.run("k", works) == 7  # nothing left behind


async def test_a_request_that_leaves_before_its_round_starts_strands_no_one() -> None:
    """The request that opened the waiting round goes away (a disconnect) while the running
    query still runs: those that joined its round run one of their own, and later requests
    for the key are answered (none waits for a round nobody will run)."""
    coalescer = AsyncCoalescer()
    release = anyio.Event()
    started: list[int] = []

    async def query() -> int:
        started.append(len(started))
        if len(started) == 1:
            await release.wait()
        return len(started)

    results: dict[str, int] = {}

    async def ask(name: str) -> None:
        results[name] = await coalescer.run("k", query)

    leaving = anyio.CancelScope()

    async def opener() -> None:
        with leaving:
            await coalescer.run("k", query)

    with anyio.fail_after(10):  # a stranded request would wait for ever
        async with anyio.create_task_group() as group:
            group.start_soon(ask, "running")
            await anyio.wait_all_tasks_blocked()
            group.start_soon(opener)  # opens the waiting round
            await anyio.wait_all_tasks_blocked()
            group.start_soon(ask, "joined")
            await anyio.wait_all_tasks_blocked()
            leaving.cancel()  # the opener of the waiting round goes away
            await anyio.wait_all_tasks_blocked()
            release.set()
    assert results == {"running": 1, "joined": 2}
    with anyio.fail_after(5):
        assert await coalescer.run("k", query) == 3  # the key answers again


def test_a_thread_that_leaves_before_its_round_starts_strands_no_one() -> None:
    """As above, for threads: the opener of the waiting round fails while it waits."""
    coalescer = ThreadCoalescer()
    release = threading.Event()
    running = threading.Event()

    def query() -> str:
        running.set()
        assert release.wait(10)
        return "read"

    first = threading.Thread(target=coalescer.run, args=("k", query))
    first.start()
    assert running.wait(10)
    rounds = coalescer._rounds  # the waiting round's opener leaves: as a KeyboardInterrupt
    part = rounds.take_part("k", threading.Event)
    with coalescer._lock:
        waited = next(part)
    assert waited is rounds._running["k"].done
    with coalescer._lock:
        part.close()
    release.set()
    first.join(10)
    got: list[str] = []
    asker = threading.Thread(target=lambda: got.append(coalescer.run("k", lambda: "again")))
    asker.start()
    asker.join(5)
    assert got == ["again"]


def test_threads_share_rounds_the_same_way() -> None:
    coalescer = ThreadCoalescer()
    calls: list[float] = []
    lock = threading.Lock()

    def query() -> int:
        with lock:
            calls.append(time.monotonic())
        time.sleep(0.2)
        return len(calls)

    results: list[int] = []
    ready = threading.Barrier(32)  # all ask at once, however slowly the threads start

    def ask() -> None:
        ready.wait()
        results.append(coalescer.run("k", query))

    threads = [threading.Thread(target=ask) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(results) == 32
    assert len(calls) <= 3  # not one query per thread


async def test_a_burst_of_304s_shares_summary_queries(engine: Engine) -> None:
    app = SitemapApp(sources=[article_source(engine)], base_url=BASE)
    etag = (await call(app, "HEAD")).headers["etag"]
    seen: list[str] = []

    def slow_statement(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)
        # A database under load: the burst piles up behind it. Half a second: on a machine
        # busy with other work, a burst's requests took more than 0.2 s to all arrive, and
        # those after the first query's end asked again.
        time.sleep(0.5)

    # The worker threads the burst's requests hop through, started beforehand: on a loaded
    # machine, starting 30 threads takes longer than a query, and the burst would arrive
    # in waves instead of piling up.
    async with anyio.create_task_group() as group:
        for _ in range(30):
            group.start_soon(anyio.to_thread.run_sync, time.sleep, 0.05)
    event.listen(engine, "before_cursor_execute", slow_statement)
    statuses: list[int] = []

    async def revalidate() -> None:
        statuses.append((await call(app, headers={"if-none-match": etag})).status)

    async with anyio.create_task_group() as group:
        for _ in range(30):
            group.start_soon(revalidate)
    assert statuses == [304] * 30
    assert len(seen) <= 3  # instead of 30
