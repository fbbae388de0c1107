"""The sitemap index, its pages, per-document validators, limits and compression."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    insert,
    select,
    update,
)
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware

from sitemap_middleware import Freshness, Gzip, Limits, SitemapMiddleware, SQLAlchemySource

from ..adapters import call
from ..clock import settled
from ..support import (
    BASE_TIME,
    article_source,
    articles,
    assert_valid_index,
    assert_valid_urlset,
    dispose,
    locs,
    metadata,
    statements,
)

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
MakeApp = Callable[..., Any]


def paged_app(
    make_app: MakeApp, engine: Engine, sources_extra: dict[str, Any] | None = None, **settings: Any
) -> Any:
    source = SQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
    )
    options: dict[str, Any] = {"limits": Limits(max_urls=500, chunk_bytes=8192, batch_size=50)}
    options.update(settings)
    sources = {"pages": ["/", "/about"], "articles": source, **(sources_extra or {})}
    return make_app(sources=sources, base_url=BASE, **options)


async def test_index_lists_every_page_with_its_newest_lastmod(
    make_app: MakeApp, engine: Engine
) -> None:
    index = await call(paged_app(make_app, engine))
    assert index.status == 200
    assert assert_valid_index(index.body) == [
        (BASE + "sitemap-pages-1.xml", None),
        (BASE + "sitemap-articles-1.xml", "2024-05-01T20:19:00+00:00"),  # row 499
        (BASE + "sitemap-articles-2.xml", "2024-05-02T04:39:00+00:00"),  # row 999
        (BASE + "sitemap-articles-3.xml", "2024-05-02T08:00:00+00:00"),  # row 1200
    ]
    assert index.headers["last-modified"] == "Thu, 02 May 2024 08:00:00 GMT"


async def test_index_pages_are_read_once_per_data_version(
    make_app: MakeApp, engine: Engine
) -> None:
    # The exact mode's index: one summary per request, the pages only when it changed (in
    # the default mode the pages are kept current: test_live_pages.py).
    app = paged_app(make_app, engine, freshness=Freshness(mode="exact"))
    seen = statements(engine)
    first = await call(app)
    assert sum("GROUP BY" in s for s in seen) == 1
    seen.clear()
    again = await call(app)
    assert again.body == first.body
    assert not any("GROUP BY" in s for s in seen) and len(seen) == 1
    seen.clear()
    cached = await call(app, headers={"if-none-match": first.headers["etag"]})
    assert cached.status == 304 and len(seen) == 1 and "GROUP BY" not in seen[0]
    with engine.begin() as conn:
        conn.execute(delete(articles).where(articles.c.id == 10))
    seen.clear()
    changed = await call(app, headers={"if-none-match": first.headers["etag"]})
    assert changed.status == 200 and sum("GROUP BY" in s for s in seen) == 1


async def test_each_page_has_its_own_validators(make_app: MakeApp, engine: Engine) -> None:
    app = paged_app(make_app, engine)

    async def tags() -> list[str]:
        return [
            (await call(app, "HEAD", f"/sitemap-articles-{n}.xml")).headers["etag"]
            for n in (1, 2, 3)
        ]

    before = await tags()
    assert len(set(before)) == 3
    assert await tags() == before
    assert [
        (await call(paged_app(make_app, engine), "HEAD", f"/sitemap-articles-{n}.xml")).headers[
            "etag"
        ]
        for n in (1, 2, 3)
    ] == before  # another replica agrees
    with engine.begin() as conn:  # an edit on page 2 only (it bumps the row's lastmod)
        conn.execute(
            update(articles)
            .where(articles.c.id == 700)
            .values(slug="edited", updated_at=datetime(2025, 1, 1))
        )
    after_edit = await tags()
    assert after_edit[0] == before[0] and after_edit[2] == before[2]
    assert after_edit[1] != before[1]
    with engine.begin() as conn:  # a delete on page 1 moves no other row
        conn.execute(delete(articles).where(articles.c.id == 3))
    after_delete = await tags()
    assert after_delete[0] != after_edit[0] and after_delete[1:] == after_edit[1:]
    with engine.begin() as conn:  # an insert on page 3
        conn.execute(insert(articles).values(id=1300, slug="new", updated_at=BASE_TIME))
    after_insert = await tags()
    assert after_insert[:2] == after_delete[:2] and after_insert[2] != after_delete[2]


async def test_page_304_reads_no_rows(make_app: MakeApp, engine: Engine) -> None:
    app = paged_app(make_app, engine)
    page = await call(app, path="/sitemap-articles-2.xml")
    await settled(app)  # the recount its first request started in the background
    seen = statements(engine)
    for headers in (
        {"if-none-match": page.headers["etag"]},
        {"if-modified-since": page.headers["last-modified"]},
    ):
        seen.clear()
        cached = await call(app, path="/sitemap-articles-2.xml", headers=headers)
        assert cached.status == 304 and cached.body == b""
        assert len(seen) == 1 and "ORDER BY articles.id" not in seen[0]  # no rows


async def test_a_root_urlset_has_one_entity_tag_and_its_304s_read_nothing(
    make_app: MakeApp, engine: Engine
) -> None:
    """A root urlset of a source whose pages are kept current: its 200 reads the rows'
    validators before its head, its 304s answer from the pages kept current; both give
    the same entity tag for the same rows (RFC 9110 §15.4.5), so a crawler's
    ``If-None-Match`` matches without a statement."""
    app = make_app(
        sources=[article_source(engine)], base_url=BASE, freshness=Freshness(exact_rows=0)
    )
    first = await call(app)
    assert first.status == 200 and b"<urlset" in first.body
    etag = first.headers["etag"]
    seen = statements(engine)
    for headers in (
        {"if-none-match": etag},
        {"if-modified-since": first.headers["last-modified"]},
    ):
        seen.clear()
        cached = await call(app, headers=headers)
        assert (cached.status, cached.headers["etag"], seen) == (304, etag, [])
    head = await call(app, method="HEAD")
    again = await call(app)
    assert head.headers["etag"] == again.headers["etag"] == etag
    assert again.body == first.body


async def test_past_the_end_and_malformed_pages_are_404(make_app: MakeApp, engine: Engine) -> None:
    app = paged_app(make_app, engine)
    for path in (
        "/sitemap-articles-0.xml",
        "/sitemap-articles-4.xml",
        "/sitemap-articles--1.xml",
        "/sitemap-articles-01.xml",
        "/sitemap-articles-two.xml",
        "/sitemap-articles-4.xml.gz",
        "/sitemap-pages-2.xml",
        "/sitemap-unknown-1.xml",
        "/sitemap-articles-99999999999999.xml",
    ):
        response = await call(app, path=path, headers={"if-none-match": "*"})
        assert response.status == 404, path
        assert b"<" not in response.body


async def test_gzip_coding_is_deterministic_and_varies(make_app: MakeApp, engine: Engine) -> None:
    accept = {"accept-encoding": "gzip, deflate"}
    plain = await call(paged_app(make_app, engine), path="/sitemap-articles-2.xml")
    first = await call(paged_app(make_app, engine), path="/sitemap-articles-2.xml", headers=accept)
    second = await call(paged_app(make_app, engine), path="/sitemap-articles-2.xml", headers=accept)
    assert first.headers["content-encoding"] == "gzip"
    assert first.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert len(first.bodies) > 2  # streamed, chunk by chunk
    assert first.body == second.body  # no timestamp: identical on every replica
    assert first.body[4:8] == b"\0\0\0\0"
    assert gzip.decompress(first.body) == plain.body
    assert first.headers["etag"] != plain.headers["etag"]
    cached = await call(
        paged_app(make_app, engine),
        path="/sitemap-articles-2.xml",
        headers={**accept, "if-none-match": first.headers["etag"]},
    )
    assert cached.status == 304 and cached.headers["vary"] == "Accept-Encoding"
    index = await call(paged_app(make_app, engine), headers=accept)
    assert gzip.decompress(index.body) == (await call(paged_app(make_app, engine))).body


async def test_gz_files(make_app: MakeApp, engine: Engine) -> None:
    app = paged_app(make_app, engine, gzip=Gzip(index_files=True))
    index = await call(app, path="/sitemap.xml.gz", headers={"accept-encoding": "gzip"})
    assert index.headers["content-type"] == "application/gzip"
    assert "content-encoding" not in index.headers and "vary" not in index.headers
    children = assert_valid_index(gzip.decompress(index.body))
    assert children[1][0] == BASE + "sitemap-articles-1.xml.gz"
    page = await call(app, path="/sitemap-articles-1.xml.gz")
    plain = await call(app, path="/sitemap-articles-1.xml")
    assert page.headers["content-type"] == "application/gzip"
    assert gzip.decompress(page.body) == plain.body
    assert page.headers["etag"] not in (plain.headers["etag"],)


async def test_failure_mid_stream_with_gzip_is_a_broken_stream(
    make_app: MakeApp, engine: Engine, failing_engine: Callable[[int], Engine]
) -> None:
    from ..servers.test_behaviour import boom_stmt

    broken = failing_engine(900)
    source = SQLAlchemySource(boom_stmt(), broken, name="articles", loc="/articles/{slug}")
    app = make_app(sources=[source], base_url=BASE, limits=Limits(chunk_bytes=4096, batch_size=50))
    response = await call(app, headers={"accept-encoding": "gzip"})
    assert response.status == 200 and not response.complete and response.error is not None
    with pytest.raises((EOFError, OSError)):
        gzip.decompress(response.body)
    assert broken.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_nothing_is_compressed_twice_behind_gzip_middleware(engine: Engine) -> None:
    app = Starlette()
    app.add_middleware(
        SitemapMiddleware,
        sources={
            "articles": SQLAlchemySource(
                select(articles.c.id, articles.c.slug), engine, name="articles", loc="/a/{slug}"
            )
        },
        base_url=BASE,
        limits=Limits(max_urls=500),
    )
    app.add_middleware(GZipMiddleware, minimum_size=10)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        coded = await http.get("/sitemap-articles-1.xml", headers={"accept-encoding": "gzip"})
        assert coded.headers["content-encoding"] == "gzip"
        assert coded.content.startswith(b"<?xml")  # inflated once by httpx: plain XML
        file = await http.get("/sitemap-articles-1.xml.gz", headers={"accept-encoding": "gzip"})
        assert "content-encoding" not in file.headers
        assert gzip.decompress(file.content).startswith(b"<?xml")


async def test_no_page_passes_the_byte_limit_with_longest_urls(
    make_app: MakeApp, tmp_path: Path, sitemap_schema: etree.XMLSchema
) -> None:
    """Locs of 2,047 characters made of apostrophes (six bytes each once escaped)."""
    engine = create_engine(f"sqlite:///{tmp_path}/long.sqlite3")
    metadata.create_all(engine)
    room = 2047 - len(BASE) - len("articles/") - 6
    with engine.begin() as conn:
        conn.execute(
            insert(articles),
            [
                {"id": i, "slug": f"{i:06d}" + "'" * room, "updated_at": BASE_TIME}
                for i in range(1, 301)
            ],
        )
    max_bytes = 1_048_576
    source = SQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
        changefreq="monthly",
        priority=0.1234,
    )
    app = make_app(sources=[source], base_url=BASE, limits=Limits(max_bytes=max_bytes))
    children = assert_valid_index((await call(app)).body)
    assert len(children) >= 300 * 12_000 // max_bytes
    seen: list[str] = []
    for loc, _ in children:
        page = await call(app, path=loc.removeprefix(BASE[:-1]))
        assert len(page.body) <= max_bytes
        urls = locs(assert_valid_urlset(page.body, sitemap_schema))
        assert all(len(url) == 2047 for url in urls)
        seen += urls
    assert len(seen) == len(set(seen)) == 300
    dispose(engine)


async def test_limits_hold_at_the_protocol_maximum(tmp_path: Path) -> None:
    """With the defaults a page of maximal rows stays under 52,428,800 bytes."""
    from sitemap_middleware.core.spec import MAX_BYTES
    from sitemap_middleware.output.xml import URL_OVERHEAD, page_size_for

    rows = page_size_for(50_000, MAX_BYTES, 2047)
    worst_row = URL_OVERHEAD + 6 * 2047
    assert rows * worst_row + 200 <= MAX_BYTES < (rows + 1) * worst_row


async def test_a_text_keyed_source_is_cut_every_width_keys(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    tags = Table(
        "tags",
        MetaData(),
        Column("name", String, primary_key=True),
        Column("updated_at", DateTime),
    )
    tags.metadata.create_all(engine)
    names = [f"tag-{i:03d}" for i in range(0, 60, 2)]  # 30 tags, room for inserts between
    with engine.begin() as conn:
        conn.execute(
            insert(tags),
            [
                {"name": name, "updated_at": BASE_TIME + timedelta(hours=i)}
                for i, name in enumerate(reversed(names))  # newest first: not key order
            ],
        )
    source = SQLAlchemySource(
        select(tags.c.name, tags.c.updated_at),
        engine,
        name="tags",
        loc="/tags/{name}",
        lastmod="updated_at",
    )
    assert source.pageable and not source.fixed_ranges
    app = make_app(sources={"tags": source}, base_url=BASE, limits=Limits(max_urls=10))

    async def pages() -> tuple[list[tuple[str, str | None]], list[str]]:
        children = assert_valid_index((await call(app)).body)
        seen: list[str] = []
        for n, (loc, lastmod) in enumerate(children, 1):
            assert loc == BASE + f"sitemap-tags-{n}.xml"
            urls = assert_valid_urlset(
                (await call(app, path=f"/sitemap-tags-{n}.xml")).body, sitemap_schema
            )
            assert len(urls) <= 10
            assert lastmod == max(url.findtext("{*}lastmod") or "" for url in urls)
            seen += locs(urls)
        assert (await call(app, path=f"/sitemap-tags-{len(children) + 1}.xml")).status == 404
        return children, seen

    children, seen = await pages()
    assert len(children) == 3
    assert seen == [BASE + f"tags/{name}" for name in names]  # every row once, in key order
    page2 = await call(app, "HEAD", path="/sitemap-tags-2.xml")
    statements_seen = statements(engine)
    cached = await call(
        app, path="/sitemap-tags-2.xml", headers={"if-none-match": page2.headers["etag"]}
    )
    assert cached.status == 304
    assert len(statements_seen) == 1 and "row_number" not in statements_seen[0]  # no re-cut
    with engine.begin() as conn:  # an insert in page 1 shifts the cuts after it
        conn.execute(insert(tags).values(name="tag-001", updated_at=BASE_TIME))
    children, seen = await pages()
    assert len(children) == 4 and len(seen) == len(set(seen)) == 31
    assert seen == sorted(seen)
    moved = await call(
        app, path="/sitemap-tags-2.xml", headers={"if-none-match": page2.headers["etag"]}
    )
    assert moved.status == 200  # its rows changed: a new validator


async def test_a_composite_key_is_cut_too(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    pages_table = Table(
        "localized",
        MetaData(),
        Column("lang", String, primary_key=True),
        Column("slug", String, primary_key=True),
    )
    pages_table.metadata.create_all(engine)
    rows = [{"lang": lang, "slug": f"p{i}"} for lang in ("de", "en", "fr") for i in range(7)]
    with engine.begin() as conn:
        conn.execute(insert(pages_table), rows)
    source = SQLAlchemySource(
        select(pages_table.c.lang, pages_table.c.slug),
        engine,
        name="localized",
        loc="/{lang}/{slug}",
    )
    app = make_app(sources={"localized": source}, base_url=BASE, limits=Limits(max_urls=5))
    children = assert_valid_index((await call(app)).body)
    assert len(children) == 5  # 21 rows, 5 a page
    seen: list[str] = []
    for n in range(1, 6):
        page = await call(app, path=f"/sitemap-localized-{n}.xml")
        seen += locs(assert_valid_urlset(page.body, sitemap_schema))
    expected = sorted((row["lang"], row["slug"]) for row in rows)
    assert seen == [BASE + f"{lang}/{slug}" for lang, slug in expected]


async def test_a_negative_integer_key_cuts_the_source(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    """A key below 0 is listed: the source is cut into pages while such a key exists."""
    with engine.begin() as conn:
        conn.execute(insert(articles).values(id=-3, slug="minus", updated_at=BASE_TIME))
    app = paged_app(make_app, engine)
    index = await call(app)
    assert index.status == 200
    children = [loc for loc, _ in assert_valid_index(index.body)]
    assert children[1:] == [BASE + f"sitemap-articles-{n}.xml" for n in (1, 2, 3)]
    seen: list[str] = []
    for n in (1, 2, 3):
        head = await call(app, "HEAD", path=f"/sitemap-articles-{n}.xml")
        page = await call(app, path=f"/sitemap-articles-{n}.xml")
        assert head.status == page.status == 200
        seen += locs(assert_valid_urlset(page.body, sitemap_schema))
    assert len(seen) == len(set(seen)) == 1201 and seen[0] == BASE + "articles/minus"
    with engine.begin() as conn:  # the key gone, the pages are key ranges again
        conn.execute(articles.delete().where(articles.c.id == -3))
    page = await call(app, path="/sitemap-articles-1.xml")
    assert len(locs(assert_valid_urlset(page.body, sitemap_schema))) == 499
