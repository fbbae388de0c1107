"""Lastmods read as stored text (SQLite): the same bytes as the values SQLAlchemy parses.

The renderer copies the digits of stored text only once it has proved their layout,
and finds plain locs column-wise; both shortcuts must give exactly what the full
rules give for the parsed values, whatever the stored text is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import AsyncSQLAlchemySource, Limits, SitemapApp, SQLAlchemySource
from sitemap_middleware.core.dates import Unreadable
from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.columns import PLAIN_PATH, not_plain, stored_layout
from sitemap_middleware.output.entry import Batch, EntryRules, RawEntry
from sitemap_middleware.output.fast_path import Renderer
from sitemap_middleware.output.xml import url_element
from sitemap_middleware.sources.sqlalchemy import async_source as sqlalchemy_async
from sitemap_middleware.sources.sqlalchemy.source import LocTemplate
from sitemap_middleware.sources.sqlalchemy.stored_dates import parse_column, text_parser

from ...adapters import call
from ...conftest import examples
from ...postgres import driver_url, schema_name, server_url
from ...support import assert_valid_urlset, statements

SITE = Site.build("https://example.com/", "/sitemap.xml")
BASE = "https://example.com/"


def slow(rules: EntryRules, rows: list[RawEntry]) -> list[str]:
    return [url_element(u) for raw in rows if (u := rules.check("s", raw)) is not None]


def render(
    texts: list[Any], parser: Callable[[str], Any], naive: Any = UTC, changefreq: Any = "daily"
) -> tuple[list[str], list[str]]:
    """(renderer with the stored texts, full rules on the parsed values) for one batch."""
    values = parse_column(texts, parser)
    rows: list[RawEntry] = [(i, f"/p/{i}", v, changefreq, None) for i, v in enumerate(values)]
    plain = Batch.of(rows)
    batch = Batch(
        plain.keys, plain.locs, plain.lastmods, plain.changefreqs, plain.priorities, texts
    )
    fast = Renderer(EntryRules(SITE, naive)).elements("s", batch)
    return fast, slow(EntryRules(SITE, naive), rows)


# --- the layout of stored text -----------------------------------------------------------

moments = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))
LAYOUTS = [
    "%Y-%m-%d %H:%M:%S.%f",  # SQLAlchemy's storage format
    "%Y-%m-%d %H:%M:%S",  # SQLite's datetime('now')
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%dx%H:%M:%S",  # fromisoformat takes any separator
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S.%f+02:00",
    "%Y-%m-%d %H:%M:%SZ",
    "%Y-%m-%d",
    "%Y%m%dT%H%M%S",
]


def stored(moment: datetime, layout: str) -> str:
    # strftime pads years below 1000 inconsistently across platforms: pad by hand.
    return moment.strftime(layout.replace("%Y", f"{moment.year:04d}"))


odd_texts = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=30),
    st.sampled_from(
        [
            "2024-02-30 00:00:00.000000",
            "2024-01-01 24:00:00",
            "2024-01-01 24:00:00.000000",
            "2023-12-31T24:00:00",
            "2024-01-01 23:59:60",
            "2024-01-01 00:00:00.0-0100",  # 26 characters, yet a zone
            "2024-01-01T00:00:00-01",
            "2024-01-01 00:00:00.1",
            "2024-01-01 00:00:00.1234567",
            "\uff12\uff10\uff12\uff14-01-01 00:00:00",
            "2024-01-01\x0000:00:00",
            "",
            "soon",
        ]
    ),
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(LAYOUTS),
    st.lists(moments, min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(0, 29), odd_texts), max_size=3),
    st.sampled_from([UTC, ZoneInfo("Asia/Kolkata")]),
)
def test_stored_datetimes_give_the_bytes_of_the_parsed_values(
    layout: str, values: list[datetime], odd: list[tuple[int, Any]], naive: Any
) -> None:
    texts: list[Any] = [stored(v, layout) for v in values]
    for at, value in odd:
        texts[at % len(texts)] = value
    fast, rules = render(texts, datetime.fromisoformat, naive)
    assert fast == rules


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.dates(), min_size=1, max_size=30), st.lists(odd_texts, max_size=2))
def test_stored_dates_give_the_bytes_of_the_parsed_values(
    values: list[date], odd: list[Any]
) -> None:
    texts: list[Any] = [f"{v.year:04d}-{v.month:02d}-{v.day:02d}" for v in values] + odd
    fast, rules = render(texts, date.fromisoformat)
    assert fast == rules


def test_the_layout_is_proved_before_digits_are_copied() -> None:
    assert stored_layout(["2024-01-02 03:04:05.678901", "2024-01-02 03:04:06.000000"], 2) == 26
    assert stored_layout(["2024-01-02T03:04:05"], 1) == 19
    assert stored_layout(["2024-01-02"], 1) == 10
    for texts in (
        ["2024-01-02 03:04:05", "2024-01-02T03:04:05"],  # mixed separators
        ["2024-01-02x03:04:05"],
        ["2024-01-02 24:00:00"],  # some Pythons read it as the next midnight
        ["2024-01-02 03:04:05", "2024-01-02 03:04:05.000000"],  # mixed lengths
        ["2024-01-02 03:04:05.67890", "2024-01-02 03:04:05.6789012"],  # 25 + 27 = 2 * 26
        ["2024-01-02 03:04:05.6789012", "2024-01-02 03:04:05.67890"],
        ["2024-01-02 03:04:05.678901", "2024-01-02\n03:04:05.67890"],
        ["2024-01-02 03:04:0", "2024-01-02 03:04:050"],
        ["2024-01-02 03:04:05.12345+"],
        ["2024-01-02 03:04:05.0-0100"],  # a zone in 26 characters
        ["2024-01-02 03:04:05.0000-1"],
        ["2024-01-02 25:04:05"],
        ["2024-01-02 03:04"],
        ["2024-01-02 03:04:05", None],
        ["\uff12\uff10\uff12\uff14-01-02"],
        None,
    ):
        assert stored_layout(texts, 1 if texts is None else len(texts)) == 0, texts


def test_unreadable_stored_values_drop_the_field() -> None:
    texts: list[Any] = ["2024-01-02 03:04:05.000000", "2024-02-30 00:00:00.000000", 7, None]
    values = parse_column(texts, datetime.fromisoformat)
    assert values[0] == datetime(2024, 1, 2, 3, 4, 5) and values[3] is None
    assert isinstance(values[1], Unreadable) and isinstance(values[2], Unreadable)
    rules = EntryRules(SITE, UTC)
    fast, _ = render(texts, datetime.fromisoformat)
    assert fast == [
        "<url><loc>https://example.com/p/0</loc><lastmod>2024-01-02T03:04:05+00:00</lastmod>"
        "<changefreq>daily</changefreq></url>\n",
        "<url><loc>https://example.com/p/1</loc><changefreq>daily</changefreq></url>\n",
        "<url><loc>https://example.com/p/2</loc><changefreq>daily</changefreq></url>\n",
        "<url><loc>https://example.com/p/3</loc><changefreq>daily</changefreq></url>\n",
    ]
    rules.check("s", (1, "/p/1", values[1], None, None))
    assert rules.stats["s"].fields_dropped == 1


# --- plain locs, column-wise -------------------------------------------------------------

loc_values = st.one_of(
    st.from_regex(r"/[A-Za-z0-9._~/-]{0,20}", fullmatch=True),
    st.from_regex(r"/catalog/[a-z0-9/-]{0,10}", fullmatch=True),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=12).map(lambda t: "/" + t),
    st.text(max_size=12),
    st.sampled_from(["//evil/x", "/", "", "/a\nb", "/a b", "/é", "/a&b", "\n/a", "/\ud800"]),
    st.none(),
    st.integers(),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(loc_values, min_size=1, max_size=40), st.sampled_from(["/", "/catalog/"]))
def test_plain_locs_found_column_wise_as_one_by_one(locs: list[Any], scope: str) -> None:
    site = Site.build("https://example.com/", scope + "sitemap.xml")
    renderer = Renderer(EntryRules(site, UTC))
    found = not_plain(locs, renderer.bad_starts)
    expected = [
        at
        for at, loc in enumerate(locs)
        if type(loc) is not str or not (PLAIN_PATH.fullmatch(loc) and loc.startswith(scope))
    ]
    assert found is None or found == expected
    odd_characters = sum(
        len(re.sub(r"[A-Za-z0-9._~/-]", "", loc)) for loc in locs if type(loc) is str
    )
    if (
        all(type(loc) is str and loc.isascii() and loc.startswith(scope) for loc in locs)
        and not any("\n" in loc or loc.startswith("//") or "/." in loc for loc in locs)
        and odd_characters <= 8
    ):
        # The column-wise answer is given, not declined (a segment starting with a dot may be
        # "..": those are checked one by one).
        assert found == expected


# --- the sources: SQLite text read directly against SQLAlchemy's own parsing --------------

metadata = MetaData()
posts = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("updated_at", DateTime),
    Column("published_on", Date),
    Column("score", Numeric(3, 2)),  # SQLAlchemy converts it (to Decimal) on SQLite
)

# Stored text SQLAlchemy itself can read (fromisoformat), in many spellings.
READABLE: list[str | None] = [
    "2024-05-01 12:00:00.000000",
    "2024-05-01 12:00:01.999999",
    "2024-05-01 12:00:02",
    "2024-05-01T12:00:03",
    "2024-05-01T12:00:04.5",
    "2024-05-01",
    "2024-05-01 12:00:05+02:00",
    "2024-05-01T12:00:06Z",
    "2024-05-01 12:00:07.000000-05:30",
    None,
]
# Stored values SQLAlchemy's conversion rejects (it would fail the whole response).
UNREADABLE: list[Any] = ["2024-02-30 00:00:00.000000", "soon", "", 20240501, 1.5, "2024-13-01"]


def seed_posts(path: Path, updated: list[Any], slugs: list[Any] | None = None) -> None:
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    with engine.begin() as conn:
        for i, value in enumerate(updated, 1):
            slug = f"post-{i}" if slugs is None else slugs[(i - 1) % len(slugs)]
            conn.execute(insert(posts).values(id=i, slug=slug))
            # Raw SQL: the stored value exactly as given, whatever its type.
            conn.execute(
                text(
                    "UPDATE posts SET updated_at = :v, published_on = :d, score = :s WHERE id = :i"
                ),
                {"v": value, "i": i, "d": f"2024-04-{i % 28 + 1:02d}", "s": (i % 11) / 10},
            )
    engine.dispose()


def post_source(engine: Any, loc: Any = "/posts/{slug}", **options: Any) -> Any:
    kind = AsyncSQLAlchemySource if isinstance(engine, AsyncEngine) else SQLAlchemySource
    return kind(
        select(posts.c.id, posts.c.slug, posts.c.updated_at, posts.c.published_on, posts.c.score),
        engine,
        name="posts",
        loc=loc,
        **{"lastmod": "updated_at", **options},
    )


TEMPLATE = LocTemplate("/posts/{slug}", ["id", "slug", "updated_at", "published_on", "score"])


def by_row(row: Any) -> str | None:
    """The template's locs through a callable: the general path, SQLAlchemy's own values."""
    return TEMPLATE(row)


@pytest.mark.anyio
@pytest.mark.parametrize("lastmod", ["updated_at", "published_on"])
@pytest.mark.parametrize("priority_column", [None, "score"])
async def test_sqlite_text_gives_the_bytes_of_sqlalchemys_values(
    tmp_path: Path, sitemap_schema: etree.XMLSchema, lastmod: str, priority_column: str | None
) -> None:
    path = tmp_path / "posts.sqlite3"
    odd = ["a", "b c", "é", "x&y", None, "it's", "d\x01", "q?x", "/"]
    # Each slug once (a loc is listed once per document): odd ones, numbered.
    slugs = [s if s is None else f"{s}-{n}" for n in range(40) for s in odd]
    seed_posts(path, READABLE * 40, slugs)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:  # odd stored types: a blob and a number in the text column
        conn.execute(text("UPDATE posts SET slug = X'2F61' WHERE id = 3"))
        conn.execute(text("UPDATE posts SET slug = 42 WHERE id = 4"))
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    options = {"base_url": BASE, "limits": Limits(batch_size=37, chunk_bytes=2048)}
    try:
        columns = {"lastmod": lastmod, "priority_column": priority_column}
        fast = post_source(engine, **columns)
        assert fast.read_plan.lastmods_as_text and f"AS {lastmod}" in str(fast.read_plan.stmt)
        # pysqlite's own tuples stand in for SQLAlchemy's rows unless a column is converted.
        assert fast.read_plan.driver_rows == (priority_column is None)
        general = post_source(engine, loc=by_row, **columns)
        assert not general.read_plan.lastmods_as_text and not general.read_plan.driver_rows
        # aiosqlite's server-side cursor too (the first rows through SQLAlchemy's result).
        fast_async = post_source(async_engine, **columns)
        assert fast_async.read_plan.driver_rows == (priority_column is None)
        bodies = []
        for source in (
            fast,
            general,
            fast_async,
            post_source(async_engine, loc=by_row, **columns),
        ):
            exchange = await call(SitemapApp(sources=[source], **options))
            assert exchange.status == 200, exchange.error
            bodies.append(exchange.body)
        assert bodies[0] == bodies[1] == bodies[2] == bodies[3]
        assert (b"<priority>0.5</priority>" in bodies[0]) == (priority_column is not None)
        assert_valid_urlset(bodies[0], sitemap_schema)
        assert (
            b"<lastmod>2024-05-01T12:00:01+00:00</lastmod>" in bodies[0] or lastmod != "updated_at"
        )
        assert (
            b"<lastmod>2024-05-01T12:00:05+02:00</lastmod>" in bodies[0] or lastmod != "updated_at"
        )
    finally:
        engine.dispose()
        await async_engine.dispose()


@pytest.mark.anyio
async def test_unreadable_stored_dates_drop_the_field_and_are_reported(
    tmp_path: Path, sitemap_schema: etree.XMLSchema, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "posts.sqlite3"
    stored_values: list[Any] = [*READABLE, *UNREADABLE]
    seed_posts(path, stored_values)
    engine = create_engine(f"sqlite:///{path}")
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    try:
        for source in (post_source(engine), post_source(async_engine)):
            app = SitemapApp(sources=[source], base_url=BASE, limits=Limits(batch_size=4))
            exchange = await call(app)
            assert exchange.status == 200, exchange.error
            urls = assert_valid_urlset(exchange.body, sitemap_schema)
            assert len(urls) == len(stored_values)  # every row listed
            lastmods = [
                url.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}lastmod") for url in urls
            ]
            assert lastmods[len(READABLE) :] == [None] * len(UNREADABLE)
            assert lastmods[0] == "2024-05-01T12:00:00+00:00"
            assert app.stats["posts"].fields_dropped == len(UNREADABLE)
            # The newest stored texts ("soon", "2024-13-01") cannot be read; they do not hide
            # the newest one served, 12:00:07-05:30.
            assert exchange.headers["last-modified"] == "Wed, 01 May 2024 17:30:07 GMT"
            head = await call(app, "HEAD")
            assert head.headers["etag"] == exchange.headers["etag"]
        assert any("'soon'" in r.getMessage() for r in caplog.records)
        # Pages and the index read the same text the same way.
        paged = SitemapApp(sources=[post_source(engine)], base_url=BASE, index="always")
        index = await call(paged)
        assert index.status == 200 and b"sitemap-posts-1.xml" in index.body
    finally:
        engine.dispose()
        await async_engine.dispose()


def test_the_text_reading_is_chosen_per_dialect_and_column() -> None:
    updated, published, slug = posts.c.updated_at, posts.c.published_on, posts.c.slug
    lite = sqlite.dialect()
    assert text_parser(updated, lite) == datetime.fromisoformat
    assert text_parser(published, lite) == date.fromisoformat
    assert text_parser(slug, lite) is None
    custom = Column("t", sqlite.DATETIME(regexp=r"(\d+)/(\d+)/(\d+)"))
    assert text_parser(custom, lite) is None  # its own parser: SQLAlchemy reads it
    for dialect in (postgresql.psycopg.dialect(), postgresql.asyncpg.dialect()):
        # Both drivers fail a whole fetch on 'infinity' or year 10000: read as text.
        assert text_parser(updated, dialect) == datetime.fromisoformat
        assert text_parser(published, dialect) == date.fromisoformat
        assert text_parser(slug, dialect) is None


@pytest.mark.anyio
async def test_postgresql_sources_read_dates_as_text() -> None:
    url = driver_url(server_url(), "psycopg")
    schema = schema_name()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(insert(posts).values(id=1, slug="a", updated_at=datetime(2024, 5, 1)))
        ran = statements(engine)
        served = await call(SitemapApp(sources=[post_source(engine)], base_url=BASE))
        assert served.status == 200, served.error
        assert b"<lastmod>2024-05-01T00:00:00+00:00</lastmod>" in served.body
        assert any("CAST(posts.updated_at AS TEXT) AS updated_at" in sql for sql in ran)
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def test_timezones_other_than_utc_use_the_values() -> None:
    texts: list[Any] = [f"2024-03-{d:02d} 01:30:00.000000" for d in range(1, 29)]
    fast, rules = render(texts, datetime.fromisoformat, ZoneInfo("America/New_York"))
    assert fast == rules and "-05:00" in fast[0] and "-04:00" in fast[-1]
    aware: list[Any] = ["2024-01-01 00:00:00.000000+05:30"] * 3
    fast, rules = render(aware, datetime.fromisoformat)
    assert fast == rules and "<lastmod>2024-01-01T00:00:00+05:30</lastmod>" in fast[0]


@pytest.mark.anyio
async def test_extension_functions_see_sqlalchemys_rows(tmp_path: Path) -> None:
    """With extension options the rows go to functions: they keep SQLAlchemy's values."""
    path = tmp_path / "posts.sqlite3"
    seed_posts(path, ["2024-05-01 12:00:00.000000"] * 5)
    engine = create_engine(f"sqlite:///{path}")

    def images(row: Any) -> list[str]:
        return [f"/img/{row.updated_at:%Y-%m}/{row.id}.png"]  # a datetime, not stored text

    try:
        source = post_source(engine, images=images)
        assert not source.read_plan.lastmods_as_text and not source.read_plan.driver_rows
        exchange = await call(SitemapApp(sources=[source], base_url=BASE))
        assert exchange.status == 200, exchange.error
        assert b"<image:loc>https://example.com/img/2024-05/3.png</image:loc>" in exchange.body
        assert b"<lastmod>2024-05-01T12:00:00+00:00</lastmod>" in exchange.body
    finally:
        engine.dispose()


@pytest.mark.anyio
async def test_driver_rows_stop_and_return_the_connection_on_disconnect(tmp_path: Path) -> None:
    path = tmp_path / "posts.sqlite3"
    seed_posts(path, ["2024-05-01 12:00:00.000000"] * 1200)
    engine = create_engine(f"sqlite:///{path}")
    stepped: list[int] = []

    @event.listens_for(engine, "connect")
    def register(dbapi_connection: Any, _: Any) -> None:
        dbapi_connection.create_function("step", 1, lambda key: stepped.append(key) or key)

    stmt = select(posts.c.id, posts.c.slug, posts.c.updated_at, func.step(posts.c.id).label("s"))
    source = SQLAlchemySource(stmt, engine, name="posts", loc="/posts/{slug}", lastmod="updated_at")
    assert source.read_plan.driver_rows
    app = SitemapApp(
        sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096)
    )
    try:
        response = await call(app, disconnect_after=2)
        assert response.error is None and not response.complete
        assert 0 < len(stepped) < 400  # far from the 1,200 rows
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    finally:
        engine.dispose()


@pytest.mark.anyio
@pytest.mark.parametrize("rows", [0, 1, 49, 50, 51, 149, 150, 151, 299, 300, 301, 1200])
async def test_async_driver_rows_read_every_row_and_return_the_connection(
    tmp_path: Path, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aiosqlite's own tuples: no row lost around SQLAlchemy's first buffered row, whatever
    the count against the batch size and the rows fetched per trip (150 here); every batch
    holds the asked-for size; a disconnect stops the reading and returns the connection."""
    monkeypatch.setattr(sqlalchemy_async, "ROWS_PER_TRIP", 150)
    path = tmp_path / "posts.sqlite3"
    seed_posts(path, ["2024-05-01 12:00:00.000000"] * rows)
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    stepped: list[int] = []

    @event.listens_for(engine.sync_engine, "connect")
    def register(dbapi_connection: Any, _: Any) -> None:
        dbapi_connection.create_function("step", 1, lambda key: stepped.append(key) or key)

    stmt = select(posts.c.id, posts.c.slug, posts.c.updated_at, func.step(posts.c.id).label("s"))
    source = AsyncSQLAlchemySource(
        stmt, engine, name="posts", loc="/posts/{slug}", lastmod="updated_at"
    )
    assert source.read_plan.driver_rows
    try:
        batches = [b async for b in source.batches(size=50)]
        read = [key for batch in batches for key in batch.keys]
        assert read == list(range(1, rows + 1))
        assert all(len(batch) == 50 for batch in batches[:-1]) and len(batches) == -(-rows // 50)
        if rows == 1200:
            stepped.clear()
            app = SitemapApp(
                sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096)
            )
            response = await call(app, disconnect_after=2)
            assert response.error is None and not response.complete
            assert 0 < len(stepped) < 400  # far from the 1,200 rows
        assert engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    finally:
        await engine.dispose()
