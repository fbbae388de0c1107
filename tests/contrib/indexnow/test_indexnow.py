"""IndexNow pushing against a real endpoint on 127.0.0.1 (tests/indexnow_endpoint.py),
which checks every submission's key by fetching the key file from the site under test
(served by uvicorn): sync and async sources, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, event, insert, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import SingletonThreadPool

from sitemap_middleware import IndexNowSettings, SitemapApp, SQLAlchemySource
from sitemap_middleware.contrib.indexnow import IndexNow, Round, install, queue_urls
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.servers.async_effects import AsyncEffectRunner
from sitemap_middleware.sources.base import Changes, Mark

from ... import indexnow_site
from ...indexnow_endpoint import Endpoint, running, serve_site
from ...postgres import driver_url, schema_name, server_url
from ...support import free_port
from ...uvicorn_process import pythonpath

KEY = "test-key-0123"
ROOT = Path(__file__).resolve().parents[3]
BACKENDS = ("sqlite", "sqlite+aiosqlite", "postgresql+psycopg", "postgresql+asyncpg")


@dataclass
class Site:
    """The database, the site served on 127.0.0.1 and the endpoint of one test."""

    url: str
    schema: str | None
    writer: Engine
    engine: Any
    endpoint: Endpoint
    base: str

    def app(self, engine: Any = None, **options: Any) -> SitemapApp:
        return SitemapApp(
            sources=[indexnow_site.source(engine or self.engine)],
            base_url=self.base,
            indexnow=IndexNowSettings(key=KEY, endpoint=self.endpoint.url),
            **options,
        )

    def pusher(self, engine: Any = None, **options: Any) -> IndexNow:
        settings = {"first_delay": 0.01, "max_delay": 0.05, **options}
        return IndexNow(self.app(engine), **settings)

    def touch(self, ids: range | list[int]) -> None:
        """A new lastmod for these rows, one after another (so in this order)."""
        with self.writer.begin() as conn:
            for i in ids:
                now = datetime.now(UTC)
                conn.execute(
                    update(indexnow_site.pages)
                    .where(indexnow_site.pages.c.id == i)
                    .values(updated_at=now)
                )
                while datetime.now(UTC) == now:
                    pass

    def url_of(self, i: int) -> str:
        return f"{self.base}pages/p{i}"

    def environ(self) -> dict[str, str]:
        env = {
            "INDEXNOW_TEST_DB": str(self.writer.url.render_as_string(hide_password=False)),
            "INDEXNOW_TEST_BASE": self.base,
            "INDEXNOW_TEST_ENDPOINT": self.endpoint.url,
            "INDEXNOW_TEST_KEY": KEY,
            "PYTHONPATH": pythonpath(),
        }
        if self.schema is not None:
            env["INDEXNOW_TEST_SCHEMA"] = self.schema
        return env


def _database(backend: str, tmp_path: Path) -> tuple[str, str | None, Engine]:
    """The database URL for ``backend``, its schema (PostgreSQL), and a sync writer."""
    if backend.startswith("sqlite"):
        path = tmp_path / "site.sqlite3"
        return f"{backend}:///{path}", None, create_engine(f"sqlite:///{path}")
    url = server_url()
    schema = schema_name()
    admin = create_engine(driver_url(url, "psycopg"))
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    admin.dispose()
    sync_url = driver_url(url, "psycopg").render_as_string(hide_password=False)
    writer = create_engine(sync_url, connect_args=indexnow_site.connect_args(sync_url, schema))
    full = driver_url(url, backend.partition("+")[2]).render_as_string(hide_password=False)
    return full, schema, writer


def make_engine(url: str, schema: str | None) -> Any:
    maker = create_async_engine if "aio" in url or "asyncpg" in url else create_engine
    return maker(url, connect_args=indexnow_site.connect_args(url, schema))


@pytest.fixture(params=BACKENDS)
async def site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    async with _site(request.param, tmp_path) as made:
        yield made


@asynccontextmanager
async def _site(backend: str, tmp_path: Path) -> AsyncIterator[Site]:
    url, schema, writer = _database(backend, tmp_path)
    indexnow_site.metadata.create_all(writer)
    install(writer)
    with writer.begin() as conn:
        conn.execute(
            insert(indexnow_site.pages),
            [
                {"id": i, "slug": f"p{i}", "updated_at": datetime(2024, 1, 1, tzinfo=UTC)}
                for i in range(1, 61)
            ],
        )
    engine = make_engine(url, schema)
    port = free_port()
    with running(Endpoint()) as endpoint:
        made = Site(url, schema, writer, engine, endpoint, f"http://127.0.0.1:{port}/")
        with serve_site(made.app(), port):
            yield made
    if hasattr(engine, "sync_engine"):
        await engine.dispose()
    else:
        engine.dispose()
    if schema is not None:
        with writer.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    writer.dispose()


def only(result: Round) -> Any:
    """The source's report (the queue's is the second)."""
    assert not result.failed, result
    return result.reports[0]


@pytest.mark.anyio
async def test_changes_are_pushed_once_in_lastmod_order(site: Site) -> None:
    pusher = site.pusher()
    first = await pusher.push()
    assert only(first).started and site.endpoint.received == []  # nothing old is pushed
    site.touch([7, 3, 5])
    report = only(await pusher.push())
    assert (report.posts, report.urls, report.rows) == (1, 3, 3)
    assert site.endpoint.accepted_urls == [site.url_of(7), site.url_of(3), site.url_of(5)]
    body = site.endpoint.received[0].body
    assert body is not None and body["host"] == "127.0.0.1"
    assert body["keyLocation"] == f"{site.base}{KEY}.txt"
    assert site.endpoint.received[0].content_type == "application/json; charset=utf-8"
    assert only(await pusher.push()).posts == 0  # the mark moved: nothing again
    site.touch([3])
    assert only(await pusher.push()).urls == 1
    assert site.endpoint.accepted_urls[-1] == site.url_of(3)


@pytest.mark.anyio
async def test_posts_hold_at_most_max_urls(site: Site) -> None:
    pusher = site.pusher(max_urls=10)
    await pusher.push()
    site.touch(range(1, 26))
    report = only(await pusher.push())
    assert (report.posts, report.urls) == (3, 25)
    assert [len(r.body["urlList"]) for r in site.endpoint.received if r.body] == [10, 10, 5]
    assert site.endpoint.accepted_urls == [site.url_of(i) for i in range(1, 26)]


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 403, 422])
async def test_refusals_stop_with_the_reason_and_keep_the_mark(site: Site, status: int) -> None:
    pusher = site.pusher()
    await pusher.push()
    site.touch([1, 2])
    site.endpoint.script = [status]
    result = await pusher.push()
    assert result.failed
    error = result.reports[0].error
    assert error is not None and f"({status})" in error and "rejected 2 URLs" in error
    report = only(await pusher.push())  # the endpoint accepts now: the same rows go
    assert report.urls == 2
    assert site.endpoint.accepted_urls == [site.url_of(1), site.url_of(2)]


@pytest.mark.anyio
async def test_a_key_the_site_does_not_serve_is_a_403_that_says_so(site: Site) -> None:
    # The site serves its own key, not this one.
    pusher = IndexNow(
        SitemapApp(
            sources=[indexnow_site.source(site.engine)],
            base_url=site.base,
            indexnow=IndexNowSettings(key="not-the-served-key", endpoint=site.endpoint.url),
        )
    )
    await pusher.push()
    site.touch([4])
    result = await pusher.push()
    error = result.reports[0].error
    assert error is not None and "key not valid (403)" in error
    assert [r.status for r in site.endpoint.received] == [403]


@pytest.mark.anyio
async def test_a_429_storm_backs_off_then_goes_on(site: Site) -> None:
    pusher = site.pusher(max_retries=6)
    await pusher.push()
    site.touch([9, 8])
    site.endpoint.script = [(429, "0"), (429, "0"), 503, (429, "0"), 202]
    report = only(await pusher.push())
    assert (report.retries, report.urls) == (4, 2)
    assert [r.status for r in site.endpoint.received] == [429, 429, 503, 429, 202]
    assert site.endpoint.accepted_urls == [site.url_of(9), site.url_of(8)]
    # A storm longer than the retries: the round gives up, the mark stays.
    site.touch([10])
    site.endpoint.script = [(429, "0")] * 20
    storm = site.pusher(max_retries=2)
    result = await storm.push()
    assert result.failed and "gave up after 3 attempts" in str(result.reports[0].error)
    site.endpoint.script = []
    assert only(await storm.push()).urls == 1
    assert site.endpoint.accepted_urls[-1] == site.url_of(10)


@pytest.mark.anyio
async def test_a_network_error_keeps_the_mark(site: Site) -> None:
    closed = f"http://127.0.0.1:{free_port()}/indexnow"
    app = site.app()
    pusher = IndexNow(
        SitemapApp(
            sources=app.sitemap.sources,
            base_url=site.base,
            indexnow=IndexNowSettings(key=KEY, endpoint=closed),
        ),
        first_delay=0.01,
        max_retries=1,
    )
    await pusher.push()
    site.touch([11])
    result = await pusher.push()
    assert result.failed and "network error" in str(result.reports[0].error)
    assert only(await site.pusher().push()).urls == 1  # the real endpoint gets it


@pytest.mark.anyio
async def test_queued_urls_of_deleted_rows_are_pushed_after_their_commit(site: Site) -> None:
    pusher = site.pusher()
    await pusher.push()
    with site.writer.begin() as conn:
        conn.execute(indexnow_site.pages.delete().where(indexnow_site.pages.c.id == 12))
        queue_urls(conn, ["/pages/p12", "https://elsewhere.org/x"])
    with site.writer.connect() as conn:  # rolled back: never pushed
        queue_urls(conn, ["/pages/p13"])
        conn.rollback()
    result = await pusher.push()
    assert not result.failed
    assert result.reports[1].urls == 1
    assert site.endpoint.accepted_urls == [site.url_of(12)]
    assert (await pusher.push()).reports[1].urls == 0  # dequeued once accepted


@pytest.mark.anyio
async def test_two_pushers_at_once_push_each_change_once(site: Site) -> None:
    # Two replicas: their own engines and middleware, one database.
    other = make_engine(site.url, site.schema)
    pushers = [site.pusher(max_urls=5), site.pusher(other, max_urls=5)]
    await pushers[0].push()
    site.touch(range(20, 50))
    site.endpoint.delay = 0.05
    results: list[Round] = []

    async def push(pusher: IndexNow) -> None:
        results.append(await pusher.push())

    async with anyio.create_task_group() as group:
        for pusher in pushers:
            group.start_soon(push, pusher)
    assert not any(r.failed for r in results)
    accepted = site.endpoint.accepted_urls
    assert sorted(accepted) == sorted(site.url_of(i) for i in range(20, 50))
    assert len(accepted) == len(set(accepted)) == 30
    if hasattr(other, "sync_engine"):
        await other.dispose()
    else:
        other.dispose()


def _run(site: Site, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sitemap_middleware.cli", "indexnow"]
    return subprocess.run(
        [*command, "--app", "tests.indexnow_site:app", *args],
        cwd=ROOT,
        env={**os.environ, **site.environ(), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


async def _cli(site: Site, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``sitemap-middleware indexnow --app tests.indexnow_site:app ARGS`` in a process."""
    return await anyio.to_thread.run_sync(lambda: _run(site, *args, **env))


def _killed_at_second_post(site: Site) -> int:
    """Run a push of posts of 5 URLs that is killed once its second post is out; its
    status."""
    pids: list[int] = []

    def crash(number: int) -> None:
        if number == 2:  # the second post is out: the process dies before its commit
            os.kill(pids[0], signal.SIGKILL)
            time.sleep(0.5)

    site.endpoint.on_post = crash
    command = [sys.executable, "-m", "sitemap_middleware.cli", "indexnow"]
    process = subprocess.Popen(
        [*command, "--app", "tests.indexnow_site:app", "--once", "--max-urls", "5"],
        cwd=ROOT,
        env={**os.environ, **site.environ()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids.append(process.pid)
    try:
        status = process.wait(timeout=60)
    finally:
        site.endpoint.on_post = None
    # The endpoint still answers the killed post (to no one): let it record it before
    # the next push posts, so that ``received`` is in the order the posts were sent.
    deadline = time.monotonic() + 30
    while len(site.endpoint.received) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return status


@pytest.fixture(params=("sqlite", "postgresql+psycopg"))
async def sync_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    """A site the command line can load: it reads with a sync engine."""
    async with _site(request.param, tmp_path) as made:
        yield made


@pytest.fixture
async def sqlite_site(tmp_path: Path) -> AsyncIterator[Site]:
    """The command line is the same for every database (the crash test runs both)."""
    async with _site("sqlite", tmp_path) as made:
        yield made


@pytest.mark.anyio
async def test_a_crash_between_post_and_commit_pushes_that_batch_again(sync_site: Site) -> None:
    site = sync_site
    assert (await _cli(site, "--once")).returncode == 0  # starts from now
    site.touch(range(30, 42))
    killed = await anyio.to_thread.run_sync(_killed_at_second_post, site)
    assert killed == -signal.SIGKILL
    done = await _cli(site, "--once", "--max-urls", "5")
    assert done.returncode == 0, done.stderr
    lists = [r.body["urlList"] for r in site.endpoint.received if r.body]
    ids = [[int(u.rsplit("p", 1)[1]) for u in urls] for urls in lists]
    # Post 2 went out, the crash lost its commit: it goes again, and only it.
    assert ids == [[30, 31, 32, 33, 34], [35, 36, 37, 38, 39], [35, 36, 37, 38, 39], [40, 41]]


@pytest.mark.anyio
async def test_the_command_line_s_exit_statuses_and_dry_run(sqlite_site: Site) -> None:
    site = sqlite_site
    assert (await _cli(site, "--once")).returncode == 0
    site.touch([1, 2])
    dry = await _cli(site, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would push 2 URLs (2 rows) in 1 post" in dry.stdout
    assert f'"urlList": ["{site.url_of(1)}", "{site.url_of(2)}"]' in dry.stdout
    assert site.endpoint.received == []  # nothing posted
    site.endpoint.script = [422]
    refused = await _cli(site, "--once")
    assert refused.returncode == 1 and "unprocessable (422)" in refused.stdout
    done = await _cli(site, "--once")
    assert done.returncode == 0 and "pushed 2 URLs (2 rows) in 1 post" in done.stdout
    # No IndexNow configured, or the tables missing: a usage error that says the fix.
    unset = await _cli(site, INDEXNOW_TEST_KEY="")
    assert unset.returncode == 2 and "indexnow.key" in unset.stderr
    with site.writer.begin() as conn:
        conn.execute(text("DROP TABLE sitemap_indexnow_queue"))
    missing = await _cli(site, "--once")
    assert missing.returncode == 2 and "install(engine)" in missing.stderr


@pytest.mark.anyio
async def test_the_lifespan_task_pushes_while_the_site_runs(site: Site) -> None:
    import uvicorn

    port = free_port()
    app = SitemapApp(
        sources=[indexnow_site.source(site.engine)],
        base_url=site.base,
        indexnow=IndexNowSettings(key=KEY, endpoint=site.endpoint.url, every=1),
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        await anyio.sleep(1.5)  # the first round starts from now
        site.touch([21, 22])
        with anyio.fail_after(15):
            while len(site.endpoint.accepted_urls) < 2:  # noqa: ASYNC110 (a thread records them)
                await anyio.sleep(0.1)
        server.should_exit = True
    assert site.endpoint.accepted_urls == [site.url_of(21), site.url_of(22)]


class OwnThreadSource(SQLAlchemySource):
    """A sync source whose reads belong to one thread of its own, as a Django source's do:
    reading it anywhere else is an error."""

    thread_bound = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.thread = ThreadPoolExecutor(1)
        self.read_in = self.thread.submit(threading.current_thread).result()

    async def in_thread(self, call: Callable[[], Any]) -> Any:
        return await asyncio.wrap_future(self.thread.submit(call))

    def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        assert threading.current_thread() is self.read_in
        return super().changes(after, as_of, limit)

    def push_start(self, as_of: AsOf) -> Mark:
        assert threading.current_thread() is self.read_in
        return super().push_start(as_of)


@pytest.mark.anyio
async def test_a_sync_engine_s_feed_connection_stays_in_one_thread_per_push(
    sqlite_site: Site,
) -> None:
    """One connection per thread (``SingletonThreadPool``): a feed action run in another
    thread than its claim's would find another connection, outside the claim's
    transaction. Each push holds one thread of its own for its feed, and reads its
    source where the source's reads belong."""
    site = sqlite_site
    engine = create_engine(site.url, poolclass=SingletonThreadPool)
    source = OwnThreadSource(
        select(indexnow_site.pages),
        engine,
        name="pages",
        loc="/pages/{slug}",
        lastmod="updated_at",
    )
    events: list[tuple[int, str, threading.Thread, str]] = []  # connection, what, where
    held: list[Any] = []  # each connection kept, so that no two share an id

    def record(what: str) -> Callable[..., None]:
        def listener(conn: Any, *args: Any) -> None:
            held.append(conn)
            found = " ".join(map(str, args[:3])) if what == "execute" else ""
            events.append((id(conn), what, threading.current_thread(), found))

        return listener

    for name, what in [
        ("engine_connect", "connect"),
        ("before_cursor_execute", "execute"),
        ("commit", "commit"),
        ("rollback", "rollback"),
    ]:
        event.listen(engine, name, record(what))
    app = SitemapApp(
        sources=[source],
        base_url=site.base,
        indexnow=IndexNowSettings(key=KEY, endpoint=site.endpoint.url),
    )
    pusher = IndexNow(app, max_urls=2)
    try:
        assert only(await pusher.push()).started
        site.touch([4, 5, 6, 7, 8])
        events.clear()
        report = only(await pusher.push())
        assert (report.posts, report.urls, report.busy) == (3, 5, False)
        assert site.endpoint.accepted_urls == [site.url_of(i) for i in range(4, 9)]
    finally:
        source.thread.shutdown()
        engine.dispose()
    feeds = {c for c, _, _, found in events if "sitemap_indexnow" in found}
    jobs: dict[str, set[threading.Thread]] = {"pages": set(), "queue": set()}
    connections: dict[int, set[threading.Thread]] = {}
    for conn, _, thread, _ in events:
        if conn in feeds:
            connections.setdefault(conn, set()).add(thread)
    for conn, threads in connections.items():
        assert len(threads) == 1  # connect, statements, commit or rollback: one thread
        queue = any(c == conn and "~queue" in found for c, _, _, found in events)
        jobs["queue" if queue else "pages"] |= threads
    assert len(connections) >= 4  # pages: the claims of three posts and the last
    assert len(jobs["pages"]) == len(jobs["queue"]) == 1
    assert jobs["pages"].isdisjoint(jobs["queue"])  # a thread of its own per push
    loop_thread = threading.current_thread()
    assert not jobs["pages"] & {loop_thread, source.read_in}
    reads = {thread for c, _, thread, _ in events if c not in feeds}
    assert reads == {source.read_in}  # the source's reads: in its thread only


@pytest.mark.anyio
async def test_indexnow_reads_through_the_asgi_adapter_s_effect_runner(site: Site) -> None:
    app = site.app()
    pusher = site.pusher()
    assert pusher.runner is not app.reads  # another middleware: its own
    pusher = IndexNow(app, first_delay=0.01, max_delay=0.05)
    assert pusher.runner is app.reads
    calls: list[str] = []
    call = app.reads.call

    async def recorded(source: Any, method: str, *args: Any) -> Any:
        calls.append(method)
        return await call(source, method, *args)

    app.reads.call = recorded  # type: ignore[method-assign]
    assert only(await pusher.push()).started
    site.touch([2])
    assert only(await pusher.push()).urls == 1
    assert calls == ["push_start", "changes", "changes"]
    # A bare Sitemap (or a WSGI middleware): a runner of its own.
    assert isinstance(IndexNow(app.sitemap).runner, AsyncEffectRunner)


@pytest.mark.anyio
async def test_a_push_cancelled_while_it_holds_its_feed_gives_the_connection_back(
    site: Site,
) -> None:
    pusher = site.pusher()
    await pusher.push()
    site.touch([6])
    site.endpoint.delay = 0.5
    with anyio.move_on_after(0.2):  # the post is out: the feed is claimed, locked
        await pusher.push()
    site.endpoint.delay = 0.0
    pool = (getattr(site.engine, "sync_engine", None) or site.engine).pool
    assert pool.checkedout() == 0  # rolled back and closed, none left to the collector
    report = only(await site.pusher().push())  # the lock is gone: the mark did not move
    assert (report.busy, report.urls) == (False, 1)


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("touch"), st.lists(st.integers(1, 30), min_size=1, max_size=8)),
        st.tuples(st.just("push"), st.lists(st.sampled_from([200, 202, 400, 429, 503]))),
    ),
    max_size=8,
)


@pytest.fixture(scope="module")
def shared_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One SQLite site for the property below (each example resets it)."""
    url, schema, writer = _database("sqlite", tmp_path_factory.mktemp("model"))
    indexnow_site.metadata.create_all(writer)
    install(writer)
    engine = make_engine(url, schema)
    port = free_port()
    with running(Endpoint()) as endpoint:
        made = Site(url, schema, writer, engine, endpoint, f"http://127.0.0.1:{port}/")
        with serve_site(made.app(), port):
            yield made
    engine.dispose()
    writer.dispose()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(OPERATIONS)
def test_every_change_is_pushed_once_whatever_the_answers(
    shared_site: Site, operations: list[tuple[str, list[Any]]]
) -> None:
    site = shared_site
    with site.writer.begin() as conn:
        conn.execute(indexnow_site.pages.delete())
        conn.execute(text("DELETE FROM sitemap_indexnow WHERE feed != '~queue'"))
        old = datetime(2024, 1, 1, tzinfo=UTC)
        rows = [{"id": i, "slug": f"p{i}", "updated_at": old} for i in range(1, 31)]
        conn.execute(insert(indexnow_site.pages), rows)
    site.endpoint.received.clear()
    site.endpoint.script = []
    pusher = site.pusher(max_urls=4, max_retries=1)
    assert only(pusher.push_sync()).started
    dirty: set[int] = set()  # rows changed since they were last accepted
    for operation, values in [*operations, ("push", [])]:
        if operation == "touch":
            site.touch(values)
            dirty |= set(values)
            continue
        site.endpoint.script = list(values)
        before = len(site.endpoint.accepted_urls)
        pusher.push_sync()
        pushed = [int(u.rsplit("p", 1)[1]) for u in site.endpoint.accepted_urls[before:]]
        assert len(pushed) == len(set(pushed))  # once each
        assert set(pushed) <= dirty  # nothing unchanged
        dirty -= set(pushed)
    assert dirty == set()  # the last push, answered 200, pushed every change left
