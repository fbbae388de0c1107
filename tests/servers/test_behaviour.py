"""Behaviour every adapter shares, run through the ASGI and the WSGI adapter alike.

Each test takes ``make_app`` (see conftest) and runs once per adapter; the
driver records both as the same messages, so every check reads the same.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import Engine, create_engine, delete, event, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    ConfigurationError,
    Entry,
    Freshness,
    Gzip,
    Headers,
    Limits,
    SitemapAborted,
)
from sitemap_middleware.core import planning
from sitemap_middleware.output.gzip import GzipStream
from sitemap_middleware.sources.sqlalchemy import async_source as sqlalchemy_async

from ..adapters import call
from ..support import (
    BASE_TIME,
    article_source,
    articles,
    assert_valid_index,
    assert_valid_urlset,
    locs,
    statements,
)

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
MakeApp = Callable[..., Any]


def setting(name: str) -> str:
    """An error naming the setting ``name`` (``group.field`` in a group) first; Django's as
    SITEMAP_MIDDLEWARE's key (``['group']['field']``)."""
    keys = "".join(rf"\['{part}'\]" for part in name.split("."))
    return rf"^({re.escape(name)}|SITEMAP_MIDDLEWARE{keys}): "


async def test_list_of_urls_and_entries(make_app: MakeApp, sitemap_schema: etree.XMLSchema) -> None:
    app = make_app(
        sources=["/", Entry("/about", date(2024, 1, 2), "monthly", 0.3), {"loc": "/contact"}],
        base_url=BASE,
    )
    response = await call(app)
    assert response.status == 200
    urls = assert_valid_urlset(response.body, sitemap_schema)
    assert locs(urls) == [BASE, BASE + "about", BASE + "contact"]
    assert etree.tostring(urls[1]).count(b"<priority>0.3</priority>") == 1


async def test_sync_and_async_generator_functions(
    make_app: MakeApp, sitemap_schema: etree.XMLSchema
) -> None:
    def pages() -> Iterator[str]:
        yield from ("/one", "/two")

    async def posts() -> AsyncIterator[Entry]:
        for i in range(3):
            await asyncio.sleep(0)
            yield Entry(f"/posts/{i}", datetime(2024, 1, i + 1, 8))

    app = make_app(sources={"pages": pages, "posts": posts}, base_url=BASE)
    first = await call(app)
    second = await call(app)
    children = assert_valid_index(first.body)
    assert children == [
        (BASE + "sitemap-pages-1.xml", None),
        (BASE + "sitemap-posts-1.xml", "2024-01-03T08:00:00+00:00"),
    ]
    assert first.body == second.body
    assert first.headers["last-modified"] == "Wed, 03 Jan 2024 08:00:00 GMT"
    pages_doc = await call(app, path="/sitemap-pages-1.xml")
    posts_doc = await call(app, path="/sitemap-posts-1.xml")
    assert locs(assert_valid_urlset(pages_doc.body, sitemap_schema)) == [
        BASE + "one",
        BASE + "two",
    ]
    assert locs(assert_valid_urlset(posts_doc.body, sitemap_schema)) == [
        BASE + f"posts/{i}" for i in range(3)
    ]


async def test_sync_sqlalchemy_streams_every_row_in_chunks(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(batch_size=100, chunk_bytes=4096),
    )
    exchange = await call(app)
    assert exchange.error is None and exchange.status == 200 and exchange.complete
    assert len(exchange.bodies) >= 12  # 1,200 rows, 100 a batch: streamed, never one message
    assert max(len(b) for b in exchange.bodies) < 100 * 200
    urls = assert_valid_urlset(exchange.body, sitemap_schema)
    assert locs(urls) == [BASE + f"articles/article-{i}" for i in range(1, 1201)]
    assert urls[0].findtext("{*}lastmod") == "2024-05-01T12:01:00+00:00"
    assert exchange.headers["last-modified"] == "Thu, 02 May 2024 08:00:00 GMT"
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_async_sqlalchemy_gives_the_same_bytes_and_validators(
    make_app: MakeApp, engine: Engine, async_engine: AsyncEngine
) -> None:
    stmt = select(articles.c.id, articles.c.slug, articles.c.updated_at)
    sync_app = make_app(sources=[article_source(engine)], base_url=BASE)
    async_app = make_app(
        sources=[
            AsyncSQLAlchemySource(
                stmt,
                async_engine,
                name="articles",
                loc="/articles/{slug}",
                lastmod="updated_at",
                changefreq="weekly",
            )
        ],
        base_url=BASE,
    )
    a, b = await call(sync_app), await call(async_app)
    assert a.status == b.status == 200
    assert a.body == b.body
    assert a.headers["etag"] == b.headers["etag"]
    assert async_engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_etag_is_stable_across_instances_and_changes_with_rows(
    make_app: MakeApp, engine: Engine
) -> None:
    async def etag() -> str:
        # A new middleware each time: a restart or another replica.
        return (
            await call(make_app(sources=[article_source(engine)], base_url=BASE), "HEAD")
        ).headers["etag"]

    first = await etag()
    assert await etag() == first
    with engine.begin() as conn:  # delete a row whose lastmod is not the newest
        conn.execute(delete(articles).where(articles.c.id == 500))
    after_delete = await etag()
    assert after_delete != first
    with engine.begin() as conn:  # add a row with an old lastmod
        conn.execute(insert(articles).values(id=5000, slug="late", updated_at=BASE_TIME))
    after_insert = await etag()
    assert after_insert not in (first, after_delete)
    with engine.begin() as conn:  # one row out, one in: same count, same newest lastmod
        conn.execute(delete(articles).where(articles.c.id == 600))
        conn.execute(insert(articles).values(id=5001, slug="swap", updated_at=BASE_TIME))
    after_swap = await etag()
    assert after_swap not in (first, after_delete, after_insert)
    with engine.begin() as conn:
        conn.execute(
            update(articles).where(articles.c.id == 3).values(updated_at=datetime(2030, 1, 1))
        )
    assert await etag() != after_swap


@pytest.mark.parametrize("kept", [3, 4096])
async def test_a_long_running_app_tags_every_document_as_a_restarted_one_does(
    make_app: MakeApp, engine: Engine, monkeypatch: pytest.MonkeyPatch, kept: int
) -> None:
    """Tags a planner remembers (at most ``planning._TAGS_KEPT``: all of them, or so few
    that it forgets too) are the tags a fresh replica makes, for every document and coding."""
    monkeypatch.setattr(planning, "_TAGS_KEPT", kept)
    options: dict[str, Any] = {
        "base_url": BASE,
        "limits": Limits(max_urls=400),
        "gzip": Gzip(index_files=True),
        "freshness": Freshness(mode="exact"),
        "html": True,  # every change is seen at once: each step changes some tag
    }
    running = make_app(sources=[article_source(engine)], **options)
    paths = ["/sitemap.xml", "/sitemap.xml.gz", "/sitemap.html"] + [
        f"/sitemap-articles-{page}.xml" for page in (1, 2, 3)
    ]
    codings = [{}, {"accept-encoding": "gzip"}]

    async def tags(app: Any) -> list[str | None]:
        return [
            (await call(app, "HEAD", path, headers)).headers.get("etag")
            for path in paths
            for headers in codings
            if not (path.endswith(".gz") and headers)  # a .gz file has one representation
        ]

    changes = [
        delete(articles).where(articles.c.id == 500),
        insert(articles).values(id=5000, slug="late", updated_at=BASE_TIME),
        update(articles).where(articles.c.id == 3).values(updated_at=datetime(2025, 1, 1)),
        update(articles).where(articles.c.id == 7).values(updated_at=BASE_TIME),
    ]
    seen: set[tuple[str | None, ...]] = set()
    for change in [None, *changes]:
        if change is not None:
            with engine.begin() as conn:
                conn.execute(change)
        served = await tags(running)
        assert served == await tags(running)  # remembered
        fresh = make_app(sources=[article_source(engine)], **options)
        assert served == await tags(fresh)
        assert None not in served and len(set(served)) == len(served)  # one per representation
        assert tuple(served) not in seen, change
        seen.add(tuple(served))


async def test_304_reads_no_rows(make_app: MakeApp, engine: Engine) -> None:
    app = make_app(sources=[article_source(engine)], base_url=BASE)
    full = await call(app)
    seen = statements(engine)
    for headers in (
        {"if-none-match": full.headers["etag"]},
        {"if-modified-since": full.headers["last-modified"]},
        {"if-none-match": f'"other", {full.headers["etag"]}'},
    ):
        seen.clear()
        cached = await call(app, headers=headers)
        assert cached.status == 304 and cached.body == b"" and cached.complete
        assert {k: v for k, v in cached.headers.items() if k != "date"} == {
            k: v for k, v in full.headers.items() if k not in ("content-type", "date")
        }
        assert len(seen) == 1 and "count(" in seen[0] and "ORDER BY articles.id" not in seen[0]
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_if_none_match_mismatch_ignores_if_modified_since(
    make_app: MakeApp, engine: Engine
) -> None:
    app = make_app(sources=[article_source(engine)], base_url=BASE)
    full = await call(app, "HEAD")
    response = await call(
        app,
        headers={"if-none-match": '"stale"', "if-modified-since": full.headers["last-modified"]},
    )
    assert response.status == 200


async def test_head_sends_get_headers_without_reading_rows(
    make_app: MakeApp, engine: Engine
) -> None:
    app = make_app(sources=[article_source(engine)], base_url=BASE)
    get = await call(app)
    seen = statements(engine)
    head = await call(app, "HEAD")
    assert head.status == 200 and head.body == b""
    # The same header fields (the Date follows the clock: a second may have passed).
    assert {**head.headers, "date": ""} == {**get.headers, "date": ""}
    assert len(seen) == 1 and "ORDER BY articles.id" not in seen[0]  # no rows


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_other_methods_get_405(make_app: MakeApp, method: str) -> None:
    app = make_app(sources=["/"], base_url=BASE)
    response = await call(app, method)
    assert response.status == 405 and response.headers["allow"] == "GET, HEAD"


async def test_version_token_spares_the_aggregates(make_app: MakeApp, engine: Engine) -> None:
    version = {"value": 1}
    app = make_app(
        sources=[article_source(engine, version=lambda: version["value"])], base_url=BASE
    )
    seen = statements(engine)
    first = await call(app, "HEAD")
    assert len(seen) == 1 and "count(" in seen[0]
    seen.clear()
    assert (await call(app, "HEAD")).headers["etag"] == first.headers["etag"]
    assert seen == []  # while the version stands, nothing is read
    version["value"] = 2
    assert (await call(app, "HEAD")).headers["etag"] != first.headers["etag"]
    assert len(seen) == 1


async def test_bad_rows_are_skipped_counted_and_logged(
    make_app: MakeApp,
    engine: Engine,
    sitemap_schema: etree.XMLSchema,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with engine.begin() as conn:
        conn.execute(update(articles).where(articles.c.id == 7).values(slug=None))
        conn.execute(update(articles).where(articles.c.id == 8).values(slug="bad\x01slug"))
        conn.execute(update(articles).where(articles.c.id == 9).values(slug="café & crème"))
    app = make_app(sources=[article_source(engine)], base_url=BASE)
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    exchange = await call(app)
    urls = locs(assert_valid_urlset(exchange.body, sitemap_schema))
    assert len(urls) == 1198
    assert BASE + "articles/caf%C3%A9%20&%20cr%C3%A8me" in urls
    assert app.stats["articles"].skipped == 2
    assert any("row 8" in r.getMessage() and "U+0001" in r.getMessage() for r in caplog.records)
    await call(app)
    assert app.stats["articles"].skipped == 4
    assert sum("row 8" in r.getMessage() for r in caplog.records) == 1  # logged once


async def test_strict_mode_aborts_on_a_bad_row(make_app: MakeApp, engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(update(articles).where(articles.c.id == 1100).values(slug=None))
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        strict=True,
        limits=Limits(chunk_bytes=4096),
    )
    exchange = await call(app)
    assert isinstance(exchange.error, SitemapAborted)
    assert not exchange.complete and b"</urlset>" not in exchange.body
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_empty_sources_answer_404_not_an_empty_urlset(
    make_app: MakeApp, engine: Engine
) -> None:
    assert (await call(make_app(sources=lambda: [], base_url=BASE))).status == 404
    with engine.begin() as conn:
        conn.execute(update(articles).values(slug=None))
    all_bad = await call(make_app(sources=[article_source(engine)], base_url=BASE))
    assert all_bad.status == 404 and b"urlset" not in all_bad.body
    with engine.begin() as conn:
        conn.execute(delete(articles))
    none = await call(make_app(sources=[article_source(engine)], base_url=BASE))
    assert none.status == 404


async def test_database_down_before_the_first_byte_is_503(
    make_app: MakeApp, tmp_path: Path
) -> None:
    missing = create_engine(f"sqlite:///{tmp_path}/no/such/dir/db.sqlite3")
    app = make_app(
        sources=[article_source(missing)], base_url=BASE, headers=Headers(retry_after=30)
    )
    for method in ("GET", "HEAD"):
        response = await call(app, method)
        assert response.status == 503 and response.headers["retry-after"] == "30"
        assert b"<" not in response.body
        assert missing.pool.checkedout() == 0  # type: ignore[attr-defined]


def boom_stmt() -> Any:
    # boom() runs per streamed row only; the summary's aggregates never evaluate it.
    return select(
        articles.c.id, articles.c.slug, articles.c.updated_at, func.boom(articles.c.id).label("ok")
    )


async def test_failure_in_the_first_batch_is_503(
    make_app: MakeApp, engine: Engine, failing_engine: Callable[[int], Engine]
) -> None:
    broken = failing_engine(3)
    source = article_source(broken, stmt=boom_stmt())
    response = await call(make_app(sources=[source], base_url=BASE))
    assert response.status == 503 and b"urlset" not in response.body
    assert broken.pool.checkedout() == 0  # type: ignore[attr-defined]


CODINGS = [{}, {"accept-encoding": "gzip"}]


def inflated(response: Any) -> bytes:
    """A body as sent, inflated as far as it goes when it is gzip-coded (a body aborted
    is a truncated gzip stream)."""
    if response.headers.get("content-encoding") != "gzip":
        return bytes(response.body)
    return zlib.decompressobj(31).decompress(response.body)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_gzip_coded_urlset_is_its_plain_chunks_through_one_stream(
    make_app: MakeApp, engine: Engine, async_engine: AsyncEngine, kind: str
) -> None:
    """However an adapter compresses (the ASGI ones in a worker thread, beside the rendering
    of the next chunk), the coded body is the plain body's chunks through one gzip stream, in
    order and one message each: every adapter and replica serves the same bytes under one
    tag."""
    stmt = select(articles.c.id, articles.c.slug, articles.c.updated_at)
    source = (
        article_source(engine)
        if kind == "sync"
        else AsyncSQLAlchemySource(
            stmt, async_engine, name="articles", loc="/articles/{slug}", lastmod="updated_at"
        )
    )
    app = make_app(sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096))
    plain = await call(app)
    coded = await call(app, headers={"accept-encoding": "gzip"})
    chunks = [chunk for chunk in plain.bodies if chunk]
    assert len(chunks) > 10 and coded.complete
    stream = GzipStream()
    expected = [*map(stream.chunk, chunks[:-1]), stream.finish(chunks[-1])]
    assert [chunk for chunk in coded.bodies if chunk] == expected
    assert coded.headers["etag"] != plain.headers["etag"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_asgi_compresses_a_chunk_while_the_next_is_rendered(
    make_app: MakeApp,
    engine: Engine,
    async_engine: AsyncEngine,
    kind: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under ASGI, a chunk's compression runs beside the rendering of the next chunk, not
    after it: each compression here waits until the source has yielded the batch after
    the one that completed its chunk, which a compression run in turn would wait for in
    vain. (WSGI compresses inline, in the request's thread.)"""
    if "asgi" not in request.node.callspec.params["make_app"]:
        pytest.skip("WSGI compresses each chunk in the request's thread")
    yielded: list[threading.Event] = [threading.Event() for _ in range(100)]
    late: list[int] = []
    compressed = 0
    chunk = GzipStream.chunk

    def waiting_chunk(self: GzipStream, data: bytes) -> bytes:
        nonlocal compressed
        compressed += 1
        # Batches of 50 URLs make a 4,096-byte chunk each: chunk n ends with batch n, and
        # the 1,200 rows make 24 batches.
        if compressed < 24 and not late and not yielded[compressed + 1].wait(5):
            late.append(compressed)
        return chunk(self, data)

    monkeypatch.setattr(GzipStream, "chunk", waiting_chunk)
    stmt = select(articles.c.id, articles.c.slug, articles.c.updated_at)
    if kind == "sync":
        source: Any = article_source(engine)
        batches = source.batches

        def counted(keys: Any, size: int) -> Iterator[Any]:
            for number, batch in enumerate(batches(keys, size), 1):
                yielded[min(number, 99)].set()
                yield batch

        monkeypatch.setattr(source, "batches", counted)
    else:
        source = AsyncSQLAlchemySource(
            stmt, async_engine, name="articles", loc="/articles/{slug}", lastmod="updated_at"
        )
        abatches = source.batches

        async def acounted(keys: Any, size: int) -> AsyncIterator[Any]:
            number = 0
            async for batch in abatches(keys, size):
                number += 1
                yielded[min(number, 99)].set()
                yield batch

        monkeypatch.setattr(source, "batches", acounted)
    app = make_app(sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096))
    coded = await call(app, headers={"accept-encoding": "gzip"})
    assert coded.complete and compressed == 24
    assert late == []


@pytest.mark.parametrize("headers", CODINGS)
async def test_failure_mid_stream_aborts_the_transfer(
    make_app: MakeApp,
    engine: Engine,
    failing_engine: Callable[[int], Engine],
    headers: dict[str, str],
) -> None:
    broken = failing_engine(900)
    source = article_source(broken, stmt=boom_stmt())
    response = await call(
        make_app(sources=[source], base_url=BASE, limits=Limits(batch_size=100, chunk_bytes=4096)),
        headers=headers,
    )
    assert response.status == 200
    assert isinstance(response.error, SitemapAborted)
    assert not response.complete  # no final empty message: the server cuts the connection
    sent = inflated(response)
    assert b"<url>" in sent and b"</urlset>" not in sent
    assert broken.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("headers", CODINGS)
async def test_client_disconnect_stops_the_query(
    make_app: MakeApp, engine: Engine, headers: dict[str, str]
) -> None:
    fetched: list[int] = []

    def loc(row: Any) -> str:
        fetched.append(row.id)
        return f"/articles/{row.slug}"

    app = make_app(
        sources=[article_source(engine, loc=loc)],
        base_url=BASE,
        limits=Limits(batch_size=50, chunk_bytes=4096),
    )
    response = await call(app, headers=headers, disconnect_after=2)
    assert response.error is None and not response.complete
    assert len(fetched) < 400  # far from the 1,200 rows
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("headers", CODINGS)
async def test_async_disconnect_and_failure_return_connections(
    make_app: MakeApp,
    db_path: Path,
    async_engine: AsyncEngine,
    monkeypatch: pytest.MonkeyPatch,
    headers: dict[str, str],
) -> None:
    # Trips of 100 rows: the failure at row 700 comes after the first bytes (a late one).
    monkeypatch.setattr(sqlalchemy_async, "ROWS_PER_TRIP", 100)
    stmt = select(articles.c.id, articles.c.slug, articles.c.updated_at)
    source = AsyncSQLAlchemySource(
        stmt, async_engine, name="articles", loc="/articles/{slug}", lastmod="updated_at"
    )
    app = make_app(sources=[source], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096))
    response = await call(app, headers=headers, disconnect_after=2)
    assert not response.complete
    assert async_engine.pool.checkedout() == 0  # type: ignore[attr-defined]

    broken = create_async_engine(f"sqlite+aiosqlite:///{db_path}")

    @event.listens_for(broken.sync_engine, "connect")
    def register(dbapi_connection: Any, _: Any) -> None:
        def boom(value: int) -> int:
            if value == 700:
                raise RuntimeError("connection reset")
            return value

        dbapi_connection.create_function("boom", 1, boom)

    failing = AsyncSQLAlchemySource(boom_stmt(), broken, name="articles", loc="/articles/{slug}")
    aborted = await call(
        make_app(sources=[failing], base_url=BASE, limits=Limits(batch_size=50, chunk_bytes=4096)),
        headers=headers,
    )
    assert isinstance(aborted.error, SitemapAborted) and not aborted.complete
    assert b"</urlset>" not in inflated(aborted)
    assert broken.pool.checkedout() == 0  # type: ignore[attr-defined]
    await broken.dispose()


async def test_pages_split_by_key_ranges_and_list_every_row_once(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    app = make_app(sources=[article_source(engine)], base_url=BASE, limits=Limits(max_urls=500))
    index = await call(app)
    children = assert_valid_index(index.body)
    assert [loc for loc, _ in children] == [BASE + f"sitemap-articles-{n}.xml" for n in (1, 2, 3)]
    seen: list[str] = []
    for n, (_, lastmod) in enumerate(children, 1):
        page = await call(app, path=f"/sitemap-articles-{n}.xml")
        urls = assert_valid_urlset(page.body, sitemap_schema)
        seen += locs(urls)
        # The child's lastmod is the newest lastmod of its own rows.
        assert lastmod == max(url.findtext("{*}lastmod") or "" for url in urls)
    assert seen == [BASE + f"articles/article-{i}" for i in range(1, 1201)]
    for missing in ("0", "4", "-1", "01", "x", "1.0"):
        assert (await call(app, path=f"/sitemap-articles-{missing}.xml")).status == 404
    assert (await call(app, path="/sitemap-nope-1.xml")).status == 404
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_urls_never_come_from_the_host_header_by_default(make_app: MakeApp) -> None:
    app = make_app(sources={"pages": ["/", "/a"], "more": ["/b"]}, base_url=BASE)
    poisoned = {"host": "evil.example", "x-forwarded-host": "evil.example"}
    for path in ("/sitemap.xml", "/sitemap-pages-1.xml"):
        response = await call(app, path=path, headers=poisoned)
        assert response.status == 200
        assert b"evil" not in response.body and b"https://example.com/" in response.body
        assert all("evil" not in value for value in response.headers.values())


async def test_allowed_hosts_give_host_derived_urls_and_refuse_others(
    make_app: MakeApp, sitemap_schema: etree.XMLSchema
) -> None:
    app = make_app(
        sources={"pages": ["/", "/a", "https://example.com/only-canonical"], "more": ["/b"]},
        base_url=BASE,
        allowed_hosts=["example.org", "www.example.org:8443"],
    )
    index = await call(app, headers={"host": "EXAMPLE.org:443"})
    assert [loc for loc, _ in assert_valid_index(index.body)] == [
        "https://example.org/sitemap-pages-1.xml",
        "https://example.org/sitemap-more-1.xml",
    ]
    page = await call(app, path="/sitemap-pages-1.xml", headers={"host": "www.example.org:8443"})
    assert locs(assert_valid_urlset(page.body, sitemap_schema)) == [
        "https://www.example.org:8443/",
        "https://www.example.org:8443/a",
    ]  # an absolute loc on another host is out of this host's scope: skipped
    canonical = await call(app, path="/sitemap-pages-1.xml", headers={"host": "example.com"})
    assert len(assert_valid_urlset(canonical.body, sitemap_schema)) == 3
    assert canonical.headers["etag"] != page.headers["etag"]
    no_host = await call(app, path="/sitemap-pages-1.xml")
    assert no_host.body == canonical.body
    for host in ("evil.example", "example.org.evil.example", "example.org:80", "ex ample.org"):
        for method in ("GET", "HEAD"):
            refused = await call(app, method, headers={"host": host, "if-none-match": "*"})
            assert refused.status == 400, host
            assert b"evil" not in refused.body and b"<" not in refused.body
            assert all("evil" not in value for value in refused.headers.values())


def test_allowed_hosts_are_checked_at_construction(make_app: MakeApp) -> None:
    for bad in ("example.org", ["*.example.org"], ["exa mple.org"], [42]):
        with pytest.raises(ConfigurationError, match=setting("allowed_hosts")):
            make_app(sources=["/"], base_url=BASE, allowed_hosts=bad)


async def test_http_1_0_gets_the_whole_document_or_a_503(
    make_app: MakeApp,
    engine: Engine,
    failing_engine: Callable[[int], Engine],
    sitemap_schema: etree.XMLSchema,
) -> None:
    """Without chunked framing a cut transfer would look complete: HTTP/1.0 clients get the
    document only once it is whole, with its Content-Length."""
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(batch_size=100, chunk_bytes=4096),
    )
    whole = await call(app, http_version="1.0")
    assert whole.status == 200 and whole.complete
    assert whole.headers["content-length"] == str(len(whole.body))
    assert len(assert_valid_urlset(whole.body, sitemap_schema)) == 1200
    assert whole.body == (await call(app)).body
    # Spooled, a gzip-coded body is compressed as it is rendered; streamed, it may be
    # compressed beside the rendering (ASGI): the same bytes either way.
    coded = await call(app, headers={"accept-encoding": "gzip"}, http_version="1.0")
    assert coded.complete and coded.headers["content-length"] == str(len(coded.body))
    assert coded.body == (await call(app, headers={"accept-encoding": "gzip"})).body
    broken = failing_engine(900)
    failing = make_app(
        sources=[article_source(broken, stmt=boom_stmt())],
        base_url=BASE,
        limits=Limits(batch_size=100, chunk_bytes=4096),
    )
    refused = await call(failing, http_version="1.0")
    assert refused.status == 503 and b"<" not in refused.body
    assert broken.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert failing.sitemap.slots.running == 0


async def test_summary_ttl_spares_the_database_for_a_few_seconds(
    make_app: MakeApp, engine: Engine
) -> None:
    # The summaries it keeps are those read exactly (not those of the pages kept current).
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        freshness=Freshness(summary_ttl=3600, mode="exact"),
    )
    seen = statements(engine)
    first = await call(app, "HEAD")
    assert len(seen) == 1
    with engine.begin() as conn:
        conn.execute(delete(articles).where(articles.c.id == 5))
    seen.clear()
    cached = await call(app, headers={"if-none-match": first.headers["etag"]})
    assert cached.status == 304 and seen == []  # within the ttl: no statement at all
    fresh = make_app(sources=[article_source(engine)], base_url=BASE)
    assert (await call(fresh, "HEAD")).headers["etag"] != first.headers["etag"]
    with pytest.raises(ConfigurationError, match=setting("freshness.summary_ttl")):
        make_app(sources=["/"], base_url=BASE, freshness=Freshness(summary_ttl=-1))
