"""SQLAlchemy sources against a real PostgreSQL server.

``SQLAlchemySource`` runs on psycopg 3 (``postgresql+psycopg``), ``AsyncSQLAlchemySource``
on asyncpg (``postgresql+asyncpg``). Each test gets a schema of its own, runs with both
drivers unless it compares them, and ends with every connection of the engine under test
back in its pool. How the server is found (or the tests skipped): ``tests/postgres.py``.
"""

from __future__ import annotations

import gzip
import random
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import (
    URL,
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Uuid,
    create_engine,
    delete,
    event,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import (
    ALL,
    AsyncSQLAlchemySource,
    Freshness,
    Headers,
    Limits,
    SitemapAborted,
    SitemapApp,
    SQLAlchemySource,
)

from ...adapters import call
from ...postgres import (
    DRIVERS,
    REQUIRE_VARIABLE,
    URL_VARIABLE,
    driver_url,
    require_drivers,
    schema_name,
    server_url,
)
from ...support import BASE_TIME, NS, assert_valid_index, assert_valid_urlset, free_port, locs

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
PAGE_SIZE = 500
PAGED: dict[str, Any] = {
    "limits": Limits(max_urls=PAGE_SIZE)
}  # page n holds the keys (n - 1) * 500 .. n * 500 - 1

AnyEngine = Engine | AsyncEngine
AnySQLSource = SQLAlchemySource | AsyncSQLAlchemySource


@pytest.fixture(scope="session")
def pg_url() -> URL:
    return server_url()


@pytest.fixture(scope="session")
def admin(pg_url: URL) -> Iterator[Engine]:
    """The tests' own connection for setup and writes, never the engine under test."""
    engine = create_engine(driver_url(pg_url, "psycopg"))
    yield engine
    engine.dispose()


def make_engine(url: URL, driver: str, application_name: str, **connect_args: Any) -> AnyEngine:
    """The engine under test; its server sessions carry ``application_name``."""
    if driver == "psycopg":
        return create_engine(
            driver_url(url, driver),
            connect_args={
                "application_name": application_name,
                "connect_timeout": 5,
                **connect_args,
            },
        )
    return create_async_engine(
        driver_url(url, driver),
        connect_args={
            "server_settings": {"application_name": application_name},
            "timeout": 5,
            **connect_args,
        },
    )


async def dispose(engine: AnyEngine) -> None:
    if isinstance(engine, AsyncEngine):
        await engine.dispose()
    else:
        engine.dispose()


def sync_engine(engine: AnyEngine) -> Engine:
    return engine.sync_engine if isinstance(engine, AsyncEngine) else engine


def checked_out(engine: AnyEngine) -> int:
    count: int = sync_engine(engine).pool.checkedout()  # type: ignore[attr-defined]
    return count


def updated(key: int) -> datetime:
    return BASE_TIME + timedelta(minutes=key)


def slug(key: int) -> str:
    return f"article-{key}"


def key_of(loc: str) -> int:
    return int(loc.rsplit("-", 1)[1])


@dataclass
class Db:
    """One test's schema, its ``articles`` table and the engine under test."""

    driver: str
    engine: AnyEngine
    admin: Engine
    table: Table
    schema: str

    def seed(self, keys: Iterable[int]) -> None:
        rows = [{"id": k, "slug": slug(k), "updated_at": updated(k)} for k in keys]
        with self.admin.begin() as conn:
            conn.execute(insert(self.table), rows)

    def write(self, *statements: Any) -> None:
        with self.admin.begin() as conn:
            for statement in statements:
                conn.execute(statement)

    def source(self, stmt: Any = None, engine: AnyEngine | None = None, **options: Any) -> Any:
        engine = engine or self.engine
        t = self.table
        options.setdefault("loc", "/articles/{slug}")
        options.setdefault("lastmod", "updated_at")
        if stmt is None:
            stmt = select(t.c.id, t.c.slug, t.c.updated_at)
        if isinstance(engine, AsyncEngine):
            return AsyncSQLAlchemySource(stmt, engine, name="articles", **options)
        return SQLAlchemySource(stmt, engine, name="articles", **options)

    def app(self, source: AnySQLSource | None = None, **settings: Any) -> SitemapApp:
        return SitemapApp(sources=[source or self.source()], base_url=BASE, **settings)

    def statements(self) -> list[str]:
        """Every SQL statement the engine under test sends from now on."""
        seen: list[str] = []

        def remember(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            seen.append(statement)

        event.listen(sync_engine(self.engine), "before_cursor_execute", remember)
        return seen

    def sessions(self) -> list[str]:
        """The state of each server session of the engine under test (``idle``, ...)."""
        with self.admin.connect() as conn:
            return list(
                conn.scalars(
                    text("SELECT state FROM pg_stat_activity WHERE application_name = :name"),
                    {"name": self.schema},
                )
            )

    def terminate_sessions(self) -> int:
        """End the server sessions of the engine under test, waiting (5 s at most) until
        they are gone; how many there were."""
        with self.admin.connect() as conn:
            return len(
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                        "WHERE application_name = :name"
                    ),
                    {"name": self.schema},
                ).all()
            )


def articles_table(schema: str) -> Table:
    return Table(
        "articles",
        MetaData(schema=schema),
        Column("id", Integer, primary_key=True),
        Column("slug", String, nullable=True),
        Column("updated_at", DateTime, index=True),
    )


@pytest.fixture(params=DRIVERS)
async def db(request: pytest.FixtureRequest, pg_url: URL, admin: Engine) -> AsyncIterator[Db]:
    schema = schema_name()
    table = articles_table(schema)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        table.metadata.create_all(conn)
    driver: str = request.param
    db = Db(driver, make_engine(pg_url, driver, schema), admin, table, schema)
    yield db
    left = checked_out(db.engine)
    await dispose(db.engine)
    # A connection never returned would keep its transaction (and locks) open: end it first.
    db.terminate_sessions()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    assert left == 0, f"{driver}: {left} connection(s) never returned to the pool"


# --- streaming ------------------------------------------------------------------------------


async def test_rows_stream_through_a_server_side_cursor(db: Db) -> None:
    """Mid-stream, the streaming connection holds an open cursor on the server
    (psycopg: a DECLAREd cursor; asyncpg: a protocol-level portal) that has sent one batch."""
    db.seed(range(1, 1201))
    source = db.source()
    connections: list[Any] = []

    def remember(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "ORDER BY" in statement:
            connections.append(conn.connection.driver_connection)

    event.listen(sync_engine(db.engine), "after_cursor_execute", remember)
    query = "SELECT name, statement FROM pg_cursors"
    if isinstance(source, SQLAlchemySource):
        batches = source.batches(ALL, 100)
        first = next(batches)
        cursors = [tuple(row) for row in connections[0].execute(query).fetchall()]
        rest = [key for batch in batches for key in batch.keys]
    else:
        async_batches = source.batches(ALL, 100)
        first = await anext(async_batches)
        cursors = [tuple(row) for row in await connections[0].fetch(query)]
        rest = [key async for batch in async_batches for key in batch.keys]

    assert len(connections) == 1
    streaming = [statement for _, statement in cursors if "ORDER BY" in statement]
    assert len(streaming) == 1, cursors
    assert f"FROM {db.schema}.articles ORDER BY {db.schema}.articles.id" in streaming[0]
    assert list(first.keys) == list(range(1, 101))  # one batch so far, in key order
    assert list(first.keys) + rest == list(range(1, 1201))
    # The cursor's transaction ended with the stream: no session is left "idle in transaction".
    assert db.sessions() and set(db.sessions()) == {"idle"}


async def test_urlset_in_key_order_whatever_the_table_order(
    db: Db, sitemap_schema: etree.XMLSchema
) -> None:
    keys = list(range(1, 1201))
    random.Random(7).shuffle(keys)
    db.seed(keys)
    t = db.table
    # Updated rows get new versions at the end of the heap: the table is far from key order.
    db.write(update(t).where(t.c.id % 7 == 0).values(slug=t.c.slug + "-edited"))
    with db.admin.connect() as conn:
        stored = list(conn.scalars(text(f"SELECT id FROM {db.schema}.articles")))
    assert stored != sorted(stored)

    exchange = await call(db.app(limits=Limits(batch_size=100, chunk_bytes=4096)))
    assert exchange.status == 200 and exchange.complete and exchange.error is None
    assert len(exchange.bodies) > 10  # streamed in chunks
    urls = assert_valid_urlset(exchange.body, sitemap_schema)
    assert locs(urls) == [
        BASE + "articles/" + slug(k) + ("-edited" if k % 7 == 0 else "") for k in range(1, 1201)
    ]
    assert urls[0].findtext(f"{NS}lastmod") == "2024-05-01T12:01:00+00:00"
    assert exchange.headers["last-modified"] == "Thu, 02 May 2024 08:00:00 GMT"


# --- pages of the index ---------------------------------------------------------------------


async def test_index_and_pages_list_every_row_exactly_once(
    db: Db, sitemap_schema: etree.XMLSchema
) -> None:
    rng = random.Random(3)
    edges = {0, 1, 2, 498, 499, 500, 501, 998, 999, 1000, 1001, 1499, 2000, 2999}
    keys = sorted((edges | set(rng.sample(range(3000), 900))) - set(range(1500, 2000)))
    shuffled = keys[:]
    rng.shuffle(shuffled)
    db.seed(shuffled)
    app = db.app(limits=Limits(max_urls=PAGE_SIZE, batch_size=64, chunk_bytes=8192))
    seen = db.statements()

    children = assert_valid_index((await call(app)).body)
    pages = (1, 2, 3, 5, 6)  # keys 1500..1999 are empty: no page 4
    assert [loc for loc, _ in children] == [BASE + f"sitemap-articles-{n}.xml" for n in pages]
    listed: list[int] = []
    bodies = {}
    for n, (_, lastmod) in zip(pages, children, strict=True):
        page = await call(app, path=f"/sitemap-articles-{n}.xml")
        assert page.status == 200 and page.complete
        urls = assert_valid_urlset(page.body, sitemap_schema)
        on_page = [key_of(loc) for loc in locs(urls)]
        assert on_page == [k for k in keys if (n - 1) * PAGE_SIZE <= k < n * PAGE_SIZE]
        assert lastmod == max(url.findtext(f"{NS}lastmod") or "" for url in urls)
        listed += on_page
        bodies[n] = page.body
    assert listed == keys  # nothing lost, nothing doubled, in key order
    for n in (4, 7):
        assert (await call(app, path=f"/sitemap-articles-{n}.xml")).status == 404

    # Keyset ranges, never OFFSET: one range read per page.
    assert not any("OFFSET" in statement.upper() for statement in seen)
    reads = [s for s in seen if "ORDER BY" in s and "GROUP BY" not in s]
    assert len(reads) == len(pages)
    assert all("articles.id >" in s and "articles.id <=" in s for s in reads)

    # Rows added to and removed from page 1 move nothing on the other pages.
    t = db.table
    db.write(delete(t).where(t.c.id.in_([0, 1, 499])))
    db.seed([k for k in range(PAGE_SIZE) if k not in keys][:3])
    for n in pages[1:]:
        assert (await call(app, path=f"/sitemap-articles-{n}.xml")).body == bodies[n]


async def test_text_and_uuid_keys_are_cut_every_width_keys(
    db: Db, sitemap_schema: etree.XMLSchema
) -> None:
    """Keys that are not integers: pages are cut at every page_size-th key (window functions)."""
    table = Table(
        "tokens",
        MetaData(schema=db.schema),
        Column("token", Uuid, primary_key=True),
        Column("updated_at", DateTime),
    )
    with db.admin.begin() as conn:
        table.metadata.create_all(conn)
    rng = random.Random(5)
    tokens = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(1_234)]
    with db.admin.begin() as conn:
        conn.execute(
            insert(table),
            [{"token": token, "updated_at": updated(i)} for i, token in enumerate(tokens)],
        )
    source_class = AsyncSQLAlchemySource if isinstance(db.engine, AsyncEngine) else SQLAlchemySource
    source = source_class(
        select(table.c.token, table.c.updated_at),
        db.engine,  # type: ignore[arg-type]
        name="tokens",
        loc="/t/{token}",
        lastmod="updated_at",
    )
    app = SitemapApp(sources=[source], base_url=BASE, limits=Limits(max_urls=500), index="always")
    seen = db.statements()
    children = assert_valid_index((await call(app)).body)
    assert len(children) == 3
    listed: list[str] = []
    for n in (1, 2, 3):
        urls = assert_valid_urlset(
            (await call(app, path=f"/sitemap-tokens-{n}.xml")).body, sitemap_schema
        )
        listed += [loc.rsplit("/", 1)[1] for loc in locs(urls)]
    assert listed == [str(token) for token in sorted(tokens)]  # every key once, in key order
    assert not any("OFFSET" in statement.upper() for statement in seen)
    assert sum("row_number" in statement for statement in seen) == 1  # cut once


# --- conditional requests -------------------------------------------------------------------


async def test_304_costs_one_aggregate_statement(db: Db) -> None:
    db.seed(range(0, 1400))
    app = db.app(
        **PAGED, freshness=Freshness(mode="exact")
    )  # the exact mode's statements (see test_live_pages)
    seen = db.statements()
    for path in ("/sitemap.xml", "/sitemap-articles-2.xml"):
        seen.clear()
        full = await call(app, path=path)
        assert full.status == 200
        assert len(seen) == 2  # the aggregate, then the rows (the index: the page aggregate)
        for headers in (
            {"if-none-match": full.headers["etag"]},
            {"if-modified-since": full.headers["last-modified"]},
        ):
            seen.clear()
            cached = await call(app, path=path, headers=headers)
            assert cached.status == 304 and cached.body == b"" and cached.complete
            assert cached.headers["etag"] == full.headers["etag"]
            assert len(seen) == 1, seen
            assert "count(" in seen[0] and "ORDER BY" not in seen[0] and "GROUP BY" not in seen[0]


def rows_read(plan: Any) -> int:
    """Rows an ``EXPLAIN (ANALYZE, FORMAT JSON)`` plan produced or filtered out, all nodes."""
    node = plan.get("Plan", plan)
    own = node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
    own += node.get("Rows Removed by Filter", 0) * node.get("Actual Loops", 1)
    return int(own) + sum(rows_read(child) for child in node.get("Plans", []))


@pytest.mark.parametrize("db", ["psycopg"], indirect=True)
async def test_a_page_summary_reads_only_the_rows_of_its_page(db: Db) -> None:
    """lastmod grows with the key (so it does in most tables). PostgreSQL's shortcut for
    max(lastmod) walks the lastmod index from the newest row and drops the rows of every
    later page first; page 1's 304 must not read the table."""
    db.seed(range(0, 20_000))
    with db.admin.begin() as conn:
        conn.execute(text(f"ANALYZE {db.schema}.articles"))
    app = db.app(
        **PAGED, freshness=Freshness(mode="exact")
    )  # the page summary alone, no recount beside it
    executed: list[tuple[str, Any]] = []

    def remember(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        executed.append((statement, parameters))

    event.listen(sync_engine(db.engine), "before_cursor_execute", remember)
    head = await call(app, "HEAD", "/sitemap-articles-1.xml")
    assert head.status == 200 and len(executed) == 1
    statement, parameters = executed[0]
    with db.admin.connect() as conn:
        plan = conn.exec_driver_sql(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters
        ).scalar_one()
    assert rows_read(plan[0]) <= 3 * PAGE_SIZE, plan


async def test_validators_follow_inserts_edits_and_deletes_of_their_page(db: Db) -> None:
    db.seed(range(0, 1400))
    t = db.table

    async def tags(app: SitemapApp | None = None) -> list[str]:
        app = app or db.app(**PAGED)  # a new app each time: another replica, or a restart
        paths = ["/sitemap.xml"] + [f"/sitemap-articles-{n}.xml" for n in (1, 2, 3)]
        return [(await call(app, "HEAD", path)).headers["etag"] for path in paths]

    app = db.app(**PAGED)
    before = await tags(app)
    assert len(set(before)) == 4 and await tags() == before == await tags(app)

    db.write(update(t).where(t.c.id == 700).values(slug="edited", updated_at=datetime(2025, 1, 1)))
    edited = await tags(app)
    assert edited[0] != before[0] and edited[2] != before[2]
    assert (edited[1], edited[3]) == (before[1], before[3])
    index = assert_valid_index((await call(app)).body)
    assert index[1][1] == "2025-01-01T00:00:00+00:00"  # page 2's lastmod follows the edit

    db.write(delete(t).where(t.c.id == 3))  # not the newest row of page 1: only count and keys
    deleted = await tags(app)
    assert deleted[0] != edited[0] and deleted[1] != edited[1]
    assert deleted[2:] == edited[2:]

    db.seed([1450])  # an insert on page 3, older than its newest row
    inserted = await tags(app)
    assert inserted[0] != deleted[0] and inserted[3] != deleted[3]
    assert inserted[1:3] == deleted[1:3]
    assert await tags() == inserted


@pytest.mark.parametrize("db", ["psycopg"], indirect=True)
async def test_psycopg_and_asyncpg_give_the_same_bytes_and_tags(db: Db, pg_url: URL) -> None:
    db.seed(range(0, 1400, 3))
    async_engine = make_engine(pg_url, "asyncpg", db.schema)
    try:
        sync_app = db.app(**PAGED)
        async_app = db.app(db.source(engine=async_engine), **PAGED)
        for path in ["/sitemap.xml"] + [f"/sitemap-articles-{n}.xml" for n in (1, 2, 3)]:
            for headers in ({}, {"accept-encoding": "gzip"}):
                a = await call(sync_app, path=path, headers=headers)
                b = await call(async_app, path=path, headers=headers)
                assert a.status == b.status == 200
                assert a.body == b.body
                # Equal but for the Date, each response's own clock reading.
                assert {**a.headers, "date": ""} == {**b.headers, "date": ""}
        assert b.headers["content-encoding"] == "gzip" and gzip.decompress(b.body)
        assert checked_out(async_engine) == 0
    finally:
        await dispose(async_engine)


@pytest.mark.parametrize("db", ["psycopg"], indirect=True)
async def test_timestamptz_lastmods_do_not_depend_on_the_session_timezone(
    db: Db, pg_url: URL, sitemap_schema: etree.XMLSchema
) -> None:
    """A timestamptz has no offset of its own: psycopg gives it in the session's TimeZone,
    asyncpg in UTC. Both must write the same bytes."""
    events = Table(
        "events",
        MetaData(schema=db.schema),
        Column("id", Integer, primary_key=True),
        Column("happened_at", DateTime(timezone=True)),
    )
    with db.admin.begin() as conn:
        events.create(conn)
        start = datetime(2024, 3, 30, 22, 0, tzinfo=UTC)  # across a daylight saving change
        conn.execute(
            insert(events),
            [{"id": i, "happened_at": start + timedelta(hours=i)} for i in range(48)],
        )
    stmt = select(events.c.id, events.c.happened_at)
    berlin = make_engine(pg_url, "psycopg", db.schema, options="-c timezone=Europe/Berlin")
    asyncpg = make_engine(pg_url, "asyncpg", db.schema)
    try:
        bodies = []
        for engine in (berlin, asyncpg):
            source = db.source(stmt, engine, loc="/events/{id}", lastmod="happened_at")
            exchange = await call(db.app(source))
            assert exchange.status == 200
            bodies.append(exchange.body)
        urls = assert_valid_urlset(bodies[0], sitemap_schema)
        assert urls[0].findtext(f"{NS}lastmod") == "2024-03-30T22:00:00+00:00"
        assert bodies[0] == bodies[1]
    finally:
        await dispose(berlin)
        await dispose(asyncpg)


# --- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
async def test_unreachable_database_is_503_with_retry_after(driver: str) -> None:
    require_drivers()
    nowhere = URL.create("postgresql", "sitemap", "sitemap", "127.0.0.1", free_port(), "none")
    engine = make_engine(nowhere, driver, "unreachable")
    t = articles_table("public")
    stmt = select(t.c.id, t.c.slug)
    source: AnySQLSource
    if isinstance(engine, AsyncEngine):
        source = AsyncSQLAlchemySource(stmt, engine, name="articles", loc="/articles/{slug}")
    else:
        source = SQLAlchemySource(stmt, engine, name="articles", loc="/articles/{slug}")
    app = SitemapApp(sources=[source], base_url=BASE, headers=Headers(retry_after=30), **PAGED)
    try:
        for method in ("GET", "HEAD"):
            for path in ("/sitemap.xml", "/sitemap-articles-1.xml"):
                response = await call(app, method, path)
                assert response.status == 503 and response.headers["retry-after"] == "30"
                assert response.complete and b"<" not in response.body
        assert checked_out(engine) == 0
    finally:
        await dispose(engine)


def dividing_stmt(db: Db, fail_at: int) -> Any:
    """Every row computes ``1 / (id - fail_at)``: PostgreSQL fails on row ``fail_at``
    (division_by_zero) when the cursor reaches it. The summary never computes the column."""
    t = db.table
    ok = (1 // (t.c.id - fail_at)).label("ok")
    return select(t.c.id, t.c.slug, t.c.updated_at, ok)


async def test_failure_in_the_first_batch_is_503(db: Db) -> None:
    db.seed(range(1, 1201))
    source = db.source(dividing_stmt(db, fail_at=3))
    response = await call(db.app(source, limits=Limits(batch_size=50, chunk_bytes=4096)))
    assert response.status == 503 and "retry-after" in response.headers
    assert b"urlset" not in response.body


async def test_failure_mid_stream_aborts_the_transfer(db: Db) -> None:
    """Row 900 fails only when the cursor reaches it, after the first chunks went out: the
    transfer is cut (with a buffered cursor it would fail before the first byte)."""
    db.seed(range(1, 1201))
    source = db.source(dividing_stmt(db, fail_at=900))
    response = await call(db.app(source, limits=Limits(batch_size=50, chunk_bytes=4096)))
    assert response.status == 200 and len(response.bodies) > 3
    assert isinstance(response.error, SitemapAborted)
    assert not response.complete and b"</urlset>" not in response.body


async def test_connection_killed_mid_stream_aborts_the_transfer(db: Db) -> None:
    db.seed(range(1, 1201))
    killed: list[int] = []

    def loc(row: Any) -> str:
        if row.id == 600 and not killed:
            killed.append(db.terminate_sessions())  # the server ends the streaming session
        return f"/articles/{row.slug}"

    response = await call(
        db.app(db.source(loc=loc), limits=Limits(batch_size=50, chunk_bytes=4096))
    )
    assert killed == [1]
    assert response.status == 200 and isinstance(response.error, SitemapAborted)
    assert not response.complete and b"</urlset>" not in response.body
    assert checked_out(db.engine) == 0 and db.sessions() == []


async def test_client_disconnect_closes_cursor_and_transaction(db: Db) -> None:
    db.seed(range(1, 3001))
    fetched: list[int] = []

    def loc(row: Any) -> str:
        fetched.append(row.id)
        return f"/articles/{row.slug}"

    app = db.app(
        db.source(loc=loc), limits=Limits(batch_size=50, chunk_bytes=4096, max_loc_length=150)
    )
    response = await call(app, disconnect_after=2)
    assert response.status == 200 and not response.complete and response.error is None
    assert len(fetched) < 1000  # far from the 3,000 rows
    assert checked_out(db.engine) == 0
    assert set(db.sessions()) == {"idle"}  # rolled back: no snapshot held open


def test_a_missing_server_skips_and_fails_when_required() -> None:
    require_drivers()
    environ = {URL_VARIABLE: f"postgresql://u:p@127.0.0.1:{free_port()}/db"}
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL server answers"):
        server_url(environ)
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_VARIABLE}=1"):
        server_url({**environ, REQUIRE_VARIABLE: "1"})


@pytest.mark.parametrize("key", ["id", "slug"])
async def test_validators_follow_every_edit_and_ignore_future_lastmods(db: Db, key: str) -> None:
    """An edit below a page's newest lastmod, two rows trading lastmods: the tag changes.
    A lastmod in 9999 is served nowhere and leaves Last-Modified at the newest served."""
    t = db.table
    db.seed(range(1, 40))
    db.write(update(t).where(t.c.id == 39).values(updated_at=datetime(9999, 12, 31)))
    app = db.app(db.source(key=key), limits=Limits(max_urls=10), index="always")
    paths = ["/sitemap.xml", "/sitemap-articles-1.xml"]

    async def tags() -> list[str]:
        return [(await call(app, path=path)).headers["etag"] for path in paths]

    # Page 1: ids 1-9, or the slugs article-1, article-10 ... article-18.
    newest, lowered_id, pair = (9, 5, (3, 4)) if key == "id" else (18, 15, (11, 12))
    first = await tags()
    page = await call(app, path="/sitemap-articles-1.xml")
    assert page.headers["last-modified"] == f"Wed, 01 May 2024 12:{newest:02d}:00 GMT"
    since = {"if-modified-since": page.headers["last-modified"]}
    assert (await call(app, path="/sitemap-articles-1.xml", headers=since)).status == 304
    index = assert_valid_index((await call(app)).body)
    assert all(lastmod is not None and lastmod < "2025" for _, lastmod in index)
    for n in (1, 2, 3, 4):
        body = (await call(app, path=f"/sitemap-articles-{n}.xml")).body
        assert b"9999" not in body
    db.write(update(t).where(t.c.id == lowered_id).values(updated_at=datetime(2020, 1, 1)))
    lowered = await tags()
    assert lowered[0] != first[0] and lowered[1] != first[1]
    db.write(
        update(t).where(t.c.id == pair[0]).values(updated_at=updated(pair[1])),
        update(t).where(t.c.id == pair[1]).values(updated_at=updated(pair[0])),
    )
    swapped = await tags()
    assert swapped[0] != lowered[0] and swapped[1] != lowered[1]
