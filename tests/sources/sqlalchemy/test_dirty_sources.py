"""Dirty rows as real sites hold them, through both adapters, on SQLite and PostgreSQL.

Each backend stores values its type cannot convert (SQLite: any text in a
``DATETIME``, ``DATE`` or ``NUMERIC`` column; PostgreSQL: ``'infinity'`` and
BC dates, which neither psycopg nor asyncpg can load), keys below 0 and NULL
keys. Every document stays valid and served: a value that cannot be read is a
bad field (or, for a loc column, a bad row), never a 503 (finding 1); keys
below 0 or NULL never fail another document, and GET and HEAD agree (finding
4). Misconfigured sources fail at construction with a ConfigurationError that
starts with the option's name (finding 8).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Engine,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    ConfigurationError,
    IterableSource,
    Limits,
    News,
    SitemapApp,
    SQLAlchemySource,
)
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.core.validators import Summary
from sitemap_middleware.output.entry import Batch
from sitemap_middleware.sources.base import KeyRange, SyncSource
from sitemap_middleware.sources.sqlalchemy.change_counter import ChangeCounter

from ...adapters import call
from ...postgres import driver_url, schema_name, server_url
from ...support import NS, assert_valid_index, assert_valid_urlset, locs, statements

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
BACKENDS = ("sqlite", "aiosqlite", "psycopg", "asyncpg")

# What each backend stores that its driver or SQLAlchemy cannot convert.
BAD = {
    "sqlite": {"updated": "'yesterday'", "published": "'soon'", "rank": "'abc'"},
    "postgresql": {
        "updated": "'infinity'::timestamptz",
        "published": "'0044-03-15 BC'::date",
        "rank": "'NaN'::numeric",
    },
}


@dataclass
class Db:
    engine: Engine | AsyncEngine
    admin: Engine
    table: Table
    dialect: str

    def source(self, **options: Any) -> SQLAlchemySource | AsyncSQLAlchemySource:
        kind = AsyncSQLAlchemySource if isinstance(self.engine, AsyncEngine) else SQLAlchemySource
        options.setdefault("loc", "/p/{slug}")
        options.setdefault("lastmod", "updated")
        return kind(select(self.table), self.engine, name="products", **options)

    def insert(self, key: int, code: int | None, slug: str, **bad: bool) -> None:
        values = {
            "updated": "'2024-05-01 12:00:00'",
            "published": "'2024-05-01'",
            "rank": "0.5",
        }
        values.update({column: BAD[self.dialect][column] for column, on in bad.items() if on})
        code_sql = "NULL" if code is None else str(code)
        with self.admin.begin() as conn:
            conn.execute(
                text(
                    f"INSERT INTO {self.name} (id, code, slug, updated, published, rank, img) "
                    f"VALUES ({key}, {code_sql}, '{slug}', {values['updated']}, "
                    f"{values['published']}, {values['rank']}, '/i/{slug}.png')"
                )
            )

    @property
    def name(self) -> str:
        schema = self.table.schema
        return f"{schema}.{self.table.name}" if schema else self.table.name


def products(metadata: MetaData) -> Table:
    return Table(
        "products",
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column("code", Integer, nullable=True, unique=True),
        Column("slug", String),
        Column("updated", DateTime(timezone=True)),
        Column("published", Date),
        Column("rank", Numeric(4, 2)),
        Column("img", String),
    )


@pytest.fixture(params=BACKENDS)
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Db]:
    backend = request.param
    if backend in ("sqlite", "aiosqlite"):
        path = tmp_path / "shop.sqlite3"
        admin = create_engine(f"sqlite:///{path}")
        metadata = MetaData()
        # Async engines without a pool: the WSGI adapter runs them on its own event loop.
        engine: Engine | AsyncEngine = admin
        if backend == "aiosqlite":
            engine = create_async_engine(f"sqlite+aiosqlite:///{path}", poolclass=NullPool)
        schema = None
        dialect = "sqlite"
    else:
        url = server_url()
        admin = create_engine(driver_url(url, "psycopg"))
        schema = schema_name()
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        metadata = MetaData(schema=schema)
        engine = (
            create_engine(driver_url(url, "psycopg"))
            if backend == "psycopg"
            else create_async_engine(driver_url(url, "asyncpg"), poolclass=NullPool)
        )
        dialect = "postgresql"
    table = products(metadata)
    metadata.create_all(admin)
    try:
        yield Db(engine, admin, table, dialect)
    finally:
        if isinstance(engine, AsyncEngine):
            await engine.dispose()
        elif engine is not admin:
            engine.dispose()
        if schema is not None:
            with admin.begin() as conn:
                conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


# --- finding 1: a value that cannot be converted is a bad field ------------------------


def loc_with_published(row: Any) -> str:
    return f"/p/{row.slug}/{row.published}"


def images_when_published(row: Any) -> list[str]:
    return [f"/i/{row.slug}.png"] if row.published else []


def news_of(row: Any) -> News:
    return News("Shop", "en", row.published, row.slug)


def no_videos(row: Any) -> tuple[()]:
    return ()


ALL_ROWS = ["a", "b", "c", "d"]
WITHOUT_C = ["a", "b", "d"]  # row c's published cannot be read: a loc built from it cannot
OPTIONS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "template": ({}, ALL_ROWS),
    "constants": ({"changefreq": "daily", "priority": 0.4}, ALL_ROWS),
    "priority-column": ({"priority_column": "rank"}, ALL_ROWS),
    "images-column": ({"images": "img"}, ALL_ROWS),
    "images-function": ({"images": images_when_published}, ALL_ROWS),
    "languages": ({"languages": ["en", "de"], "x_default": "en", "loc": "/{lang}/p/{slug}"}, []),
    "news": ({"news": news_of}, ALL_ROWS),
    "videos": ({"videos": no_videos, "priority_column": "rank"}, ALL_ROWS),
    "loc-template-field": ({"loc": "/p/{slug}/{published}"}, WITHOUT_C),
    "loc-function": ({"loc": loc_with_published}, WITHOUT_C),
}


def expected_locs(options: dict[str, Any], slugs: list[str]) -> list[str]:
    if "languages" in options:
        return [BASE + f"{lang}/p/{s}" for s in ALL_ROWS for lang in ("en", "de")]
    loc = options.get("loc")
    if loc is None:
        return [BASE + f"p/{s}" for s in slugs]
    return [BASE + f"p/{s}/2024-05-01" for s in slugs]


@pytest.mark.parametrize("option", OPTIONS)
async def test_unconvertible_values_are_bad_fields_never_a_503(
    db: Db,
    make_app: Callable[..., Any],
    option: str,
    sitemap_schema: etree.XMLSchema,
    caplog: pytest.LogCaptureFixture,
) -> None:
    db.insert(1, 1, "a")
    db.insert(2, 2, "b", updated=True)
    db.insert(3, 3, "c", published=True)
    db.insert(4, 4, "d", rank=True)
    options, slugs = OPTIONS[option]
    app = make_app(sources=db.source(**options), base_url=BASE, index="always")
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    for method in ("HEAD", "GET"):
        index = await call(app, method)
        page = await call(app, method, path="/sitemap-products-1.xml")
        assert (index.status, page.status) == (200, 200), (index.body, page.body)
    assert_valid_index(index.body)
    urls = assert_valid_urlset(page.body, sitemap_schema)
    assert locs(urls) == expected_locs(options, slugs)
    lastmods = {url.findtext(f"{NS}loc"): url.findtext(f"{NS}lastmod") for url in urls}
    for loc, lastmod in lastmods.items():
        assert (lastmod is None) == ("/p/b" in loc), loc  # row b's lastmod cannot be read
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert re.search(r"row \(?2\b[^:]*: lastmod dropped: stored lastmod .* cannot be read", logged)
    if slugs == WITHOUT_C:
        assert "row 3: row skipped: loc cannot be built" in logged
    if "priority_column" in options:
        assert "row 4: priority dropped" in logged


async def test_the_fast_path_reads_no_column_it_does_not_use(db: Db) -> None:
    """A column no option reads is not sent: its stored junk cannot matter."""
    db.insert(1, 1, "a")
    engine = db.engine.sync_engine if isinstance(db.engine, AsyncEngine) else db.engine
    ran = statements(engine)
    served = await call(SitemapApp(sources=db.source(), base_url=BASE))
    assert served.status == 200, served.error
    (read,) = [sql for sql in ran if " ORDER BY " in sql and "count(" not in sql.lower()]
    assert "NULL AS published" in read and "NULL AS rank" in read


# --- finding 4: keys below 0 and NULL keys -------------------------------------------


async def pages_of(app: Any, schema: etree.XMLSchema) -> list[str]:
    """Every loc of every page the index lists; GET and HEAD agree on every document."""
    head, index = await call(app, "HEAD"), await call(app)
    assert head.status == index.status == 200
    seen: list[str] = []
    for child, _ in assert_valid_index(index.body):
        path = "/" + child.removeprefix(BASE)
        head, page = await call(app, "HEAD", path=path), await call(app, path=path)
        assert head.status == page.status == 200
        assert head.headers["etag"] == page.headers["etag"]
        seen += locs(assert_valid_urlset(page.body, schema))
    return seen


@pytest.mark.parametrize("several", [False, True], ids=["one-source", "two-sources"])
async def test_keys_below_zero_and_null_keys_never_fail_a_document(
    db: Db,
    make_app: Callable[..., Any],
    several: bool,
    sitemap_schema: etree.XMLSchema,
    caplog: pytest.LogCaptureFixture,
) -> None:
    codes = {"m3": -3, "m1": -1, "null": None, "z": 0, "p2": 2, "p5": 5, "p7": 7, "p8": 8}
    for key, (slug, code) in enumerate(codes.items()):
        db.insert(key, code, slug)
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    source = db.source(key="code")
    sources: Any = [source, IterableSource(["/", "/about"], name="pages")] if several else source
    app = make_app(sources=sources, base_url=BASE, limits=Limits(max_urls=3))
    valid = [BASE + f"p/{slug}" for slug, code in codes.items() if code is not None]
    seen = await pages_of(app, sitemap_schema)
    products_seen = [loc for loc in seen if "/p/" in loc]
    assert products_seen == valid  # each once, in key order, the NULL key's row left out
    assert any("NULL key" in r.getMessage() for r in caplog.records)
    # The keys below 0 gone, pages are fixed key ranges again: still every row once.
    with db.admin.begin() as conn:
        conn.execute(db.table.delete().where(db.table.c.code < 0))
    seen = await pages_of(app, sitemap_schema)
    assert [loc for loc in seen if "/p/" in loc] == valid[2:]


async def test_one_page_lists_keys_below_zero_and_skips_null_keys(
    db: Db, make_app: Callable[..., Any], sitemap_schema: etree.XMLSchema
) -> None:
    for key, code in enumerate((-5, None, 3)):
        db.insert(key, code, f"s{key}")
    app = make_app(sources=db.source(key="code"), base_url=BASE)
    head, page = await call(app, "HEAD"), await call(app)
    assert head.status == page.status == 200
    assert locs(assert_valid_urlset(page.body, sitemap_schema)) == [BASE + "p/s0", BASE + "p/s2"]


class Unsplittable(SyncSource):
    """A source of ``rows`` numbers that cannot be split into pages."""

    pageable = False
    name = "numbers"

    def __init__(self, rows: int) -> None:
        self.rows = rows

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        return Summary(None, self.rows, f"rows-{self.rows}")

    def batches(self, keys: KeyRange, size: int) -> Iterator[Batch]:
        yield Batch.of([(i, f"/n/{i}", None, None, None) for i in range(self.rows)])


async def test_an_unpageable_source_is_reported_once(
    make_app: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    sources = [Unsplittable(5), IterableSource(["/"], name="pages")]
    app = make_app(sources=sources, base_url=BASE, limits=Limits(max_urls=3))
    caplog.set_level(logging.ERROR, "sitemap_middleware")
    for _ in range(3):
        head, get = await call(app, "HEAD"), await call(app)
        assert head.status == get.status == 500
    reports = [r for r in caplog.records if "cannot be split into pages" in r.getMessage()]
    assert len(reports) == 1 and "'numbers'" in reports[0].getMessage()
    assert "split it into several sources" in reports[0].getMessage()


# --- finding 8: misconfigurations ------------------------------------------------------


def sqlite_source(**options: Any) -> SQLAlchemySource:
    engine = create_engine("sqlite://")
    table = products(MetaData())
    options.setdefault("name", "products")
    options.setdefault("loc", "/p/{slug}")
    return SQLAlchemySource(options.pop("stmt", select(table)), engine, **options)


MISCONFIGURED: dict[str, tuple[Callable[[], object], str]] = {
    "template field": (lambda: sqlite_source(loc="/p/{nope}"), "loc: "),
    "template spec": (lambda: sqlite_source(loc="/p/{slug!r}"), "loc: "),
    "loc kind": (lambda: sqlite_source(loc=5), "loc: "),
    "source name": (lambda: sqlite_source(name="Bad Name"), "name: "),
    "changefreq": (lambda: sqlite_source(changefreq="sometimes"), "changefreq: "),
    "priority": (lambda: sqlite_source(priority=7), "priority: "),
    "both changefreqs": (
        lambda: sqlite_source(changefreq="daily", changefreq_column="slug"),
        "changefreq: ",
    ),
    "both priorities": (lambda: sqlite_source(priority=0.5, priority_column="rank"), "priority: "),
    "lastmod column": (lambda: sqlite_source(lastmod="nope"), "lastmod: "),
    "key column": (lambda: sqlite_source(key="nope"), "key: "),
    "stmt kind": (lambda: sqlite_source(stmt="SELECT 1"), "stmt: "),
    "version kind": (lambda: sqlite_source(version=5), "version: "),
    "engine kind": (
        lambda: AsyncSQLAlchemySource(
            select(products(MetaData())), create_engine("sqlite://"), name="p", loc="/{slug}"
        ),
        "engine: ",
    ),
    "unknown option": (lambda: sqlite_source(imgaes="img"), "imgaes: "),
    "languages": (lambda: sqlite_source(languages="en", loc="/{lang}/{slug}"), "languages: "),
    "languages loc": (lambda: sqlite_source(languages=["en"]), "languages: "),
    "x_default": (
        lambda: sqlite_source(languages=["en"], loc="/{lang}/{slug}", x_default="de"),
        "x_default: ",
    ),
    "images column": (lambda: sqlite_source(images="nope"), "images: "),
    "images kind": (lambda: sqlite_source(images=5), "images: "),
    "news kind": (lambda: sqlite_source(news="title"), "news: "),
    "max_images": (lambda: sqlite_source(images=images_when_published, max_images=0), "max_"),
    "iterable shape": (lambda: IterableSource(lambda: [], images=-1), "images: "),
    "iterable items": (lambda: IterableSource(iter(["/"])), "items: "),
    "iterable version": (lambda: IterableSource(lambda: [], version="v1"), "version: "),
    "change counter key": (lambda: ChangeCounter(products(MetaData()), key="nope"), "key: "),
}


@pytest.mark.parametrize("case", MISCONFIGURED)
def test_misconfigured_sources_raise_configuration_errors(case: str) -> None:
    build, prefix = MISCONFIGURED[case]
    with pytest.raises(ConfigurationError) as raised:
        build()
    assert str(raised.value).startswith(prefix), str(raised.value)
    assert isinstance(raised.value, ValueError)
