"""Validators follow the bytes: any edit of a shown column changes the ETag; a future
lastmod is never served nor Last-Modified, and cannot freeze a page's validators."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from lxml import etree
from sqlalchemy import Column, DateTime, Engine, Float, Integer, MetaData, String, Table, select
from sqlalchemy import text as sql
from sqlalchemy.ext.asyncio import AsyncEngine

from sitemap_middleware import AsyncSQLAlchemySource, Freshness, Lastmods, Limits, SQLAlchemySource
from sitemap_middleware.settings import ConfigurationError, make_settings

from ..adapters import call
from ..support import assert_valid_index, assert_valid_urlset

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
FUTURE = "9999-12-31 00:00:00.000000"

items = Table(
    "items",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("updated_at", DateTime, index=True),
    Column("freq", String),
    Column("prio", Float),
)


def seed_items(engine: Engine, rows: int = 30) -> None:
    items.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            items.insert(),
            [
                {
                    "id": i,
                    "slug": f"item-{i}",
                    "updated_at": datetime(2024, 5, 1) + timedelta(hours=i),
                    "freq": "daily",
                    "prio": 0.5,
                }
                for i in range(rows)
            ],
        )


def write(engine: Engine, statement: str) -> None:
    with engine.begin() as conn:
        conn.execute(sql(statement))


def source(engine: Engine | AsyncEngine, **options: Any) -> Any:
    kind = AsyncSQLAlchemySource if isinstance(engine, AsyncEngine) else SQLAlchemySource
    options.setdefault("changefreq_column", "freq")
    options.setdefault("priority_column", "prio")
    return kind(
        select(items), engine, name="items", loc="/items/{slug}", lastmod="updated_at", **options
    )


@pytest.fixture(params=["sync", "async"])
def engines(request: pytest.FixtureRequest, engine: Engine, async_engine: AsyncEngine) -> Any:
    seed_items(engine)
    return engine, (engine if request.param == "sync" else async_engine)


def lastmods(body: bytes, schema: etree.XMLSchema) -> dict[str, str | None]:
    return {
        url.findtext(f"{NS}loc"): url.findtext(f"{NS}lastmod")
        for url in assert_valid_urlset(body, schema)
    }


EDITS = [
    # below the page's newest lastmod: max(lastmod) stays
    "UPDATE items SET updated_at = '2020-01-01 00:00:00.000000' WHERE id = 3",
    # two rows trade their lastmods: count, sums of keys and of epochs all stay
    "UPDATE items SET updated_at = CASE id WHEN 4 THEN '2024-05-01 05:00:00.000000' "
    "ELSE '2024-05-01 04:00:00.000000' END WHERE id IN (4, 5)",
    "UPDATE items SET freq = 'weekly' WHERE id = 7",
    "UPDATE items SET freq = 'dayly' WHERE id = 7",  # a bad value: the field is dropped
    "UPDATE items SET prio = 0.8 WHERE id = 8",
    "UPDATE items SET prio = 7 WHERE id = 8",
    "UPDATE items SET prio = NULL WHERE id = 9",
    "DELETE FROM items WHERE id = 12",
    "INSERT INTO items VALUES (12, 'item-12', '2024-05-01 12:00:00.000000', 'daily', 0.5)",
]


@pytest.mark.parametrize("paged", [False, True], ids=["urlset", "cut-pages"])
async def test_every_edit_of_a_shown_column_changes_the_etag(
    make_app: Any, engines: Any, sitemap_schema: etree.XMLSchema, paged: bool
) -> None:
    writer, engine = engines
    options: dict[str, Any] = {"key": "slug"} if paged else {}
    settings: dict[str, Any] = {"limits": Limits(max_urls=10), "index": "always"} if paged else {}
    app = make_app(sources=[source(engine, **options)], base_url=BASE, **settings)
    # In slug order, page 3 holds item-27 ... item-29, item-3 ... item-9.
    path = "/sitemap-items-3.xml" if paged else "/sitemap.xml"
    before = await call(app, path=path)
    for edit in EDITS:
        write(writer, edit)
        after = await call(app, path=path)
        assert after.status == 200
        assert_valid_urlset(after.body, sitemap_schema)
        if after.body != before.body:
            assert after.headers["etag"] != before.headers["etag"], edit
            revalidated = await call(
                app, path=path, headers={"if-none-match": before.headers["etag"]}
            )
            assert revalidated.status == 200, edit
        before = after


async def test_a_future_lastmod_is_never_served_and_never_freezes_the_validators(
    make_app: Any, engines: Any, sitemap_schema: etree.XMLSchema
) -> None:
    writer, engine = engines
    write(writer, f"UPDATE items SET updated_at = '{FUTURE}' WHERE id = 29")
    app = make_app(sources=[source(engine)], base_url=BASE)
    first = await call(app)
    served = lastmods(first.body, sitemap_schema)
    assert served["https://example.com/items/item-29"] is None  # listed, without the lastmod
    assert "9999" not in first.body.decode()
    # Last-Modified is the newest lastmod served, and If-Modified-Since gets its 304.
    assert first.headers["last-modified"] == "Thu, 02 May 2024 04:00:00 GMT"
    since = await call(app, headers={"if-modified-since": first.headers["last-modified"]})
    assert since.status == 304
    assert app.stats["items"].fields_dropped >= 1
    # An edit below the future row's lastmod still changes the validators.
    write(writer, "UPDATE items SET updated_at = '2024-05-03 00:00:00.000000' WHERE id = 1")
    second = await call(app)
    assert second.headers["etag"] != first.headers["etag"]
    assert second.headers["last-modified"] == "Fri, 03 May 2024 00:00:00 GMT"
    # The index lists no future lastmod either.
    paged = make_app(
        sources=[source(engine)], base_url=BASE, index="always", limits=Limits(max_urls=10)
    )
    index = await call(paged)
    assert all(lastmod is None or lastmod < "2025" for _, lastmod in assert_valid_index(index.body))
    page = await call(paged, path="/sitemap-items-3.xml")
    assert "9999" not in page.body.decode()


@pytest.mark.parametrize("remembered", ["summary_ttl", "version"])
async def test_a_remembered_summary_expires_when_the_clock_reaches_a_future_lastmod(
    make_app: Any, engines: Any, sitemap_schema: etree.XMLSchema, remembered: str
) -> None:
    writer, engine = engines
    soon = datetime.now(UTC).replace(tzinfo=None, microsecond=0) + timedelta(seconds=2)
    write(writer, f"UPDATE items SET updated_at = '{soon.isoformat(' ')}.000000' WHERE id = 0")
    options: dict[str, Any] = {"version": lambda: "v1"} if remembered == "version" else {}
    settings: dict[str, Any] = (
        {"freshness": Freshness(summary_ttl=600)} if remembered == "summary_ttl" else {}
    )
    app = make_app(
        sources=[source(engine, **options)],
        base_url=BASE,
        lastmods=Lastmods(tolerance=0),
        **settings,
    )
    first = await call(app)
    assert lastmods(first.body, sitemap_schema)["https://example.com/items/item-0"] is None
    await anyio.sleep((soon - datetime.now(UTC).replace(tzinfo=None)).total_seconds() + 0.1)
    later = await call(app)
    assert lastmods(later.body, sitemap_schema)["https://example.com/items/item-0"] is not None
    assert later.headers["etag"] != first.headers["etag"]
    assert later.headers["last-modified"] != first.headers["last-modified"]
    stale = await call(app, headers={"if-none-match": first.headers["etag"]})
    assert stale.status == 200


def test_lastmod_tolerance_is_a_checked_setting() -> None:
    assert make_settings({"base_url": BASE}).lastmods.tolerance == 60
    with pytest.raises(ConfigurationError, match=r"^lastmods\.tolerance: "):
        make_settings({"base_url": BASE, "lastmods": {"tolerance": -1}})


async def test_a_stored_number_is_no_lastmod_to_the_validators(
    make_app: Any, engine: Engine
) -> None:
    """SQLite reads a number as a Julian day; the renderer reads it as no date (a bad field):
    the validators follow the renderer, so a number never becomes Last-Modified."""
    items.metadata.create_all(engine)
    write(engine, "INSERT INTO items (id, slug, updated_at) VALUES (1, 'a', NULL)")
    write(engine, "INSERT INTO items (id, slug, updated_at) VALUES (2, 'b', 1721426)")
    write(engine, "INSERT INTO items (id, slug, updated_at) VALUES (3, 'c', 2460000.5)")
    app = make_app(sources=[source(engine)], base_url=BASE)
    response = await call(app)
    assert response.status == 200 and b"<lastmod>" not in response.body
    assert "last-modified" not in response.headers
