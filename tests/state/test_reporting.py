"""What the middleware reports about bad rows and failures: statistics and log lines.

Statistics count rows and the URLs they give (one per language), are read on
the source objects, with ``bad_row_stats()`` or ``middleware.stats``, under
Starlette's ``add_middleware`` and under a threaded WSGI server alike. Logs
name the document served, log a lasting failure's traceback once, and cut
long values.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, create_engine, insert
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    BadRow,
    BadRowStats,
    Freshness,
    Limits,
    Load,
    SitemapAborted,
    SitemapMiddleware,
    SitemapWSGIMiddleware,
    SQLAlchemySource,
    bad_row_stats,
)
from sitemap_middleware.output.entry import EntryRules

from ..adapters import call, call_wsgi
from ..output.test_entry_and_xml import SITE
from ..servers.test_behaviour import boom_stmt
from ..support import article_source, assert_valid_urlset, dispose, seed

pytestmark = pytest.mark.anyio
MakeApp = Callable[..., Any]
LANGUAGES = ["en", "de", "fr"]

metadata = MetaData()
products = Table(
    "products",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("prio", String),
)


@pytest.fixture
def product_engine(tmp_path: Path) -> Iterator[Engine]:
    """40 products; #5 has a slug XML forbids (skipped), #6 and #7 a bad priority (dropped)."""
    engine = create_engine(f"sqlite:///{tmp_path / 'p.sqlite3'}")
    metadata.create_all(engine)
    rows = [{"id": i, "slug": f"p{i}", "prio": "0.5"} for i in range(1, 41)]
    rows[4]["slug"] = "bad\x01slug"
    rows[5]["prio"] = "7"
    rows[6]["prio"] = "high"
    with engine.begin() as conn:
        conn.execute(insert(products), rows)
    yield engine
    dispose(engine)


def product_source(engine: Engine) -> SQLAlchemySource:
    return SQLAlchemySource(
        products.select(),
        engine,
        name="products",
        loc="/{lang}/p/{slug}",
        languages=LANGUAGES,
        priority_column="prio",
    )


def per_get(times: int) -> tuple[int, int, int, int]:
    """Rows skipped, their URLs, rows with fields dropped, their URLs, after ``times`` GETs."""
    return (times, 3 * times, 2 * times, 6 * times)


def counts(stats: BadRowStats) -> tuple[int, int, int, int]:
    return (
        stats.rows_skipped,
        stats.urls_skipped,
        stats.rows_with_fields_dropped,
        stats.urls_with_fields_dropped,
    )


# --- statistics -----------------------------------------------------------------------------


def test_statistics_under_starlette_add_middleware(
    product_engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    source = product_source(product_engine)
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("home"))])
    base = "https://stats-starlette.example/"
    app.add_middleware(SitemapMiddleware, sources=[source], base_url=base)
    assert source.bad_rows == BadRowStats()  # readable before the middleware exists
    with TestClient(app) as client:
        assert client.get("/").text == "home"
        for times in (1, 2):
            response = client.get("/sitemap.xml")
            assert response.status_code == 200
            urls = assert_valid_urlset(response.content, sitemap_schema)
            assert len(urls) == 3 * 39  # the skipped row's three URLs are missing
            assert counts(source.bad_rows) == per_get(times)
    stats = source.bad_rows
    assert stats.skipped == 2 and stats.fields_dropped == 4  # the older names: rows
    assert bad_row_stats()[base + "sitemap.xml"] == {"products": stats}
    # The last few problems, distinct, newest last; a GET again repeats them, not adds.
    assert [problem.key for problem in stats.recent] == [
        *(f"(5, '{lang}')" for lang in LANGUAGES),
        *(f"(6, '{lang}')" for lang in LANGUAGES),
        *(f"(7, '{lang}')" for lang in LANGUAGES),
    ]
    assert stats.recent[0].reason.startswith("row skipped: ")
    assert "priority dropped" in stats.recent[-1].reason


def test_statistics_under_a_threaded_wsgi_server(product_engine: Engine) -> None:
    """Concurrent requests in threads: every row counted once per document, none lost."""
    source = product_source(product_engine)

    def inner(environ: Any, start_response: Any) -> list[bytes]:
        start_response("200 OK", [("content-type", "text/plain")])
        return [b"home"]

    app = SitemapWSGIMiddleware(
        inner,
        sources=[source],
        base_url="https://stats-wsgi.example/",
        limits=Limits(batch_size=7),
        load=Load(max_generations=None),  # every request generates: none is refused as busy
    )
    requests = 24
    with ThreadPoolExecutor(8) as pool:
        exchanges = list(pool.map(lambda _: call_wsgi(app), range(requests)))
    assert {exchange.status for exchange in exchanges} == {200}
    assert counts(source.bad_rows) == per_get(requests)
    assert app.stats == {"products": source.bad_rows}
    assert len(source.bad_rows.recent) == 9


def test_recent_problems_are_bounded_and_keys_cut() -> None:
    rules = EntryRules(SITE, UTC)
    for key in range(25):
        rules.check("s", (key, "https://elsewhere.example/x", None, None, None))
    long_key = "k" * 3_000
    rules.check("s", (long_key, "/fine", "not a date", None, None))
    stats = rules.stats["s"]
    assert (stats.rows_skipped, stats.rows_with_fields_dropped) == (25, 1)
    assert len(stats.recent) == 10
    assert [problem.key for problem in stats.recent[:9]] == [str(k) for k in range(16, 25)]
    last = stats.recent[-1]
    assert isinstance(last, BadRow) and len(last.key) < 250
    assert last.key.startswith("'kkk") and "2,802 more characters" in last.key


# --- logs -------------------------------------------------------------------------------------


def test_long_keys_and_values_are_cut_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    rules = EntryRules(SITE, UTC)
    rules.check("s", ("k" * 3_000, "/fine", None, None, "9" * 3_000))
    (record,) = caplog.records
    message = record.getMessage()
    assert len(message) < 700
    assert "more characters]" in message and "priority dropped" in message


async def test_an_aborted_page_is_logged_by_its_own_path(
    make_app: MakeApp,
    engine: Engine,
    failing_engine: Callable[[int], Engine],
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = failing_engine(900)  # on page 2 of 500-row pages
    source = article_source(broken, stmt=boom_stmt())
    app = make_app(
        sources=[source],
        base_url="https://example.com/",
        limits=Limits(max_urls=500, batch_size=100, chunk_bytes=4096),
    )
    caplog.set_level(logging.ERROR, "sitemap_middleware")
    response = await call(app, path="/sitemap-articles-2.xml")
    assert response.status == 200 and isinstance(response.error, SitemapAborted)
    assert "/sitemap-articles-2.xml" in str(response.error)
    (record,) = caplog.records
    assert record.getMessage() == "sitemap /sitemap-articles-2.xml: aborting the transfer"
    assert record.exc_info is not None


async def test_an_async_source_failure_names_the_document(
    make_app: MakeApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A database without the table: every summary query fails.
    # No pool: the adapters read an AsyncEngine on an event loop of their own (WSGI, Django),
    # and a connection kept in a pool belongs to the loop that opened it, which the test's
    # dispose() cannot close from its own.
    empty = create_async_engine(f"sqlite+aiosqlite:///{tmp_path}/empty.sqlite3", poolclass=NullPool)
    source = AsyncSQLAlchemySource(products.select(), empty, name="products", loc="/p/{slug}")
    app = make_app(sources=[source], base_url="https://example.com/")
    caplog.set_level(logging.ERROR, "sitemap_middleware")
    for path in ("/sitemap.xml", "/sitemap-products-1.xml.gz"):
        assert (await call(app, path=path)).status == 503
    messages = [record.getMessage() for record in caplog.records]
    assert messages[0] == "sitemap /sitemap.xml: a source failed before the response"
    assert messages[1].startswith("sitemap /sitemap-products-1.xml.gz: a source failed")
    assert not any("Target(" in message for message in messages)
    await empty.dispose()


async def test_a_lasting_failure_logs_its_traceback_once_then_counts(
    make_app: MakeApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "later"
    down = create_engine(f"sqlite:///{directory}/db.sqlite3")
    app = make_app(sources=[article_source(down)], base_url="https://example.com/")
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    for _ in range(3):
        assert (await call(app)).status == 503
    first, second, third = caplog.records
    assert first.exc_info is not None
    assert second.exc_info is None and third.exc_info is None
    assert "2 failed requests" in second.getMessage()
    assert "3 failed requests" in third.getMessage() and "OperationalError" in third.getMessage()
    assert "\n" not in third.getMessage()
    caplog.clear()
    directory.mkdir()
    seed(down, 20)
    assert (await call(app)).status == 200
    (recovered,) = caplog.records
    assert recovered.levelno == logging.WARNING
    assert "answer again, after 3 failed requests" in recovered.getMessage()
    assert (await call(app)).status == 200
    assert len(caplog.records) == 1  # recovery is said once
    dispose(down)


async def test_recovery_is_said_once_the_failed_sources_answer(
    make_app: MakeApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A request that read only other sources (a list beside the database) says nothing
    while the database is down, and does not restart the episode (no second traceback)."""
    directory = tmp_path / "later"
    down = create_engine(f"sqlite:///{directory}/db.sqlite3")
    app = make_app(
        sources={"articles": article_source(down), "static": ["/a", "/b"]},
        base_url="https://example.com/",
        index="always",
    )
    caplog.set_level(logging.WARNING, "sitemap_middleware")

    def requests_said() -> list[logging.LogRecord]:
        """What the requests said of the failure (a page's first request also starts a
        recount in the background, which says its own failure)."""
        return [record for record in caplog.records if record.module == "failures"]

    assert (await call(app)).status == 503
    assert (await call(app, path="/sitemap-static-1.xml")).status == 200
    assert (await call(app, path="/sitemap-articles-1.xml")).status == 503
    assert [record.exc_info is not None for record in requests_said()] == [True, False]
    assert not [r for r in requests_said() if "answer again" in r.getMessage()]
    caplog.clear()
    directory.mkdir()
    seed(down, 20)
    assert (await call(app, path="/sitemap-static-1.xml")).status == 200
    assert not requests_said()  # the articles have not been read yet
    assert (await call(app, path="/sitemap-articles-1.xml")).status == 200
    (recovered,) = requests_said()
    assert "answer again, after 2 failed requests" in recovered.getMessage()
    dispose(down)


async def test_a_304_from_pages_in_memory_is_no_recovery(
    make_app: MakeApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the default freshness a conditional request is answered from the pages kept
    current, without a read: while the database is down it says nothing of recovery."""
    directory = tmp_path / "up"
    directory.mkdir()
    engine = create_engine(f"sqlite:///{directory}/db.sqlite3")
    seed(engine, 20)
    # The index's pages are kept in memory; twenty rows are kept only with exact_rows=0 (a
    # smaller source is read on every request).
    app = make_app(
        sources=[article_source(engine)],
        base_url="https://example.com/",
        index="always",
        freshness=Freshness(exact_rows=0),
    )
    first = await call(app)
    assert first.status == 200
    etag = dict(first.headers)["etag"]
    dispose(engine)
    directory.rename(tmp_path / "gone")  # the database is down
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    page = "/sitemap-articles-1.xml"
    assert (await call(app, path=page)).status == 503  # the rows cannot be read
    assert caplog.records and caplog.records[0].levelno == logging.ERROR
    for _ in range(2):
        assert (await call(app, headers={"If-None-Match": etag})).status == 304
    assert not [r for r in caplog.records if "answer again" in r.getMessage()]
    (tmp_path / "gone").rename(directory)
    assert (await call(app, path=page)).status == 200
    assert "answer again, after 1 failed requests" in caplog.records[-1].getMessage()
    dispose(engine)
