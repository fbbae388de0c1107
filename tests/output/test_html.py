"""The human view: HTML siblings of every document, through both adapters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lxml import etree
from lxml import html as lxml_html
from sqlalchemy import Engine, select, update

from sitemap_middleware import Entry, Limits, SQLAlchemySource

from ..adapters import call
from ..support import articles, assert_valid_index, assert_valid_urlset, locs

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
MakeApp = Callable[..., Any]


def site(make_app: MakeApp, engine: Engine, **settings: Any) -> Any:
    source = SQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
        changefreq="weekly",
        priority=0.6,
    )
    options: dict[str, Any] = {"limits": Limits(max_urls=500, chunk_bytes=4096, batch_size=50)}
    options.update(settings)
    pages = ["/", Entry("/about", "2024-01-02", "monthly", 0.3)]
    return make_app(sources={"pages": pages, "articles": source}, base_url=BASE, **options)


def table(body: bytes) -> list[list[str]]:
    document = lxml_html.fromstring(body)
    return [[cell.text_content() for cell in row.findall("td")] for row in document.iter("tr")][
        1:
    ]  # without the header row


async def test_index_and_pages_show_what_crawlers_get(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    app = site(make_app, engine, html=True)
    index = await call(app, path="/sitemap.html")
    assert index.status == 200
    assert index.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src" not in index.headers["content-security-policy"]
    assert "default-src 'none'" in index.headers["content-security-policy"]
    assert index.headers["x-robots-tag"] == "noindex"
    rows = table(index.body)
    children = assert_valid_index((await call(app)).body)
    assert [row[4] for row in rows] == [loc for loc, _ in children]
    assert [row[3] or None for row in rows] == [lastmod for _, lastmod in children]
    assert [row[2] for row in rows] == ["2", "499", "500", "201"]
    links = lxml_html.fromstring(index.body).xpath("//td/a/@href")
    assert "sitemap-articles-2.html" in links

    for number in (1, 2, 3):
        page = await call(app, path=f"/sitemap-articles-{number}.html")
        xml = await call(app, path=f"/sitemap-articles-{number}.xml")
        urls = assert_valid_urlset(xml.body, sitemap_schema)
        shown = table(page.body)
        assert [row[1] for row in shown] == locs(urls)
        assert [row[2] for row in shown] == [u.findtext("{*}lastmod") for u in urls]
        assert {row[3] for row in shown} == {"weekly"} and {row[4] for row in shown} == {"0.6"}
        nav = lxml_html.fromstring(page.body).xpath("//nav[1]/a")
        rels = {a.get("rel"): a.get("href") for a in nav}
        assert rels["up"] == "sitemap.html"
        assert ("prev" in rels) == (number > 1) and ("next" in rels) == (number < 3)
        if number == 2:
            assert rels == {
                "up": "sitemap.html",
                "prev": "sitemap-articles-1.html",
                "next": "sitemap-articles-3.html",
            }
            assert len(page.bodies) > 3  # streamed in chunks, like the XML
    assert (await call(app, path="/sitemap-articles-4.html")).status == 404
    assert (await call(app, path="/sitemap-articles-1.html.gz")).status == 404


async def test_the_xml_is_the_same_with_the_human_view_on(
    make_app: MakeApp, engine: Engine
) -> None:
    on, off = site(make_app, engine, html=True), site(make_app, engine)
    for path in ("/sitemap.xml", "/sitemap-articles-2.xml", "/sitemap-pages-1.xml.gz"):
        a, b = await call(on, path=path), await call(off, path=path)
        assert a.body == b.body  # and the same headers (but the Date, which follows the clock)
        assert {**a.headers, "date": ""} == {**b.headers, "date": ""}
    assert (await call(off, path="/sitemap.html")).status == 404  # not served unless asked


async def test_html_has_its_own_validators(make_app: MakeApp, engine: Engine) -> None:
    app = site(make_app, engine, html=True)
    page = await call(app, path="/sitemap-articles-2.html")
    xml = await call(app, path="/sitemap-articles-2.xml")
    assert page.headers["etag"] != xml.headers["etag"]
    assert page.headers["last-modified"] == xml.headers["last-modified"]
    cached = await call(
        app, path="/sitemap-articles-2.html", headers={"if-none-match": page.headers["etag"]}
    )
    assert cached.status == 304 and cached.body == b""
    head = await call(app, "HEAD", path="/sitemap-articles-2.html")
    assert head.status == 200 and head.body == b""
    assert head.headers["etag"] == page.headers["etag"]


async def test_data_cannot_inject_markup(make_app: MakeApp, engine: Engine) -> None:
    hostile = '"><script>alert(1)</script><a href="javascript:x'
    with engine.begin() as conn:
        conn.execute(update(articles).where(articles.c.id == 5).values(slug=hostile))
        conn.execute(update(articles).where(articles.c.id == 6).values(slug="q?a=1&b='2'"))
    app = site(make_app, engine, html=True)
    page = await call(app, path="/sitemap-articles-1.html")
    document = lxml_html.fromstring(page.body)
    assert document.xpath("//script") == []
    hrefs = document.xpath("//a/@href")
    assert all(href.startswith(("https://example.com/", "sitemap")) for href in hrefs)
    shown = [row[1] for row in table(page.body)]
    assert (
        "https://example.com/articles/%22%3E%3Cscript%3Ealert(1)%3C/script%3E%3Ca%20href=%22javascript:x"
        in shown
    )
    assert "https://example.com/articles/q%3Fa=1&b='2'" in shown


async def test_counts_are_urls_as_served_with_languages(
    make_app: MakeApp, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    """Each row gives one URL per language: the index counts URLs, not rows."""
    source = SQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        engine,
        name="articles",
        loc="/{lang}/articles/{slug}",
        languages=["en", "de", "fr"],
    )
    app = make_app(sources=[source], base_url=BASE, html=True, limits=Limits(max_urls=1_500))
    index = await call(app, path="/sitemap.html")
    rows = table(index.body)
    counts = [int(row[2].replace(",", "")) for row in rows]
    assert sum(counts) == 3 * 1_200 and all(count % 3 == 0 for count in counts)
    assert f"{len(rows)} sitemaps, up to 3,600 URLs." in index.body.decode()
    for number, row in enumerate(rows, 1):
        served = assert_valid_urlset(
            (await call(app, path=f"/sitemap-articles-{number}.xml")).body, sitemap_schema
        )
        page = await call(app, path=f"/sitemap-articles-{number}.html")
        assert len(table(page.body)) == len(served) == int(row[2].replace(",", ""))
        assert f"{len(served):,} URLs, as served." in page.body.decode()
