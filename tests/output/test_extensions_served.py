"""Extensions in served sitemaps, through both adapters: hreflang alternates (per language
and from a function), images, videos and news, with namespaces declared only when used and
the byte limit kept with the longest alternates."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, select

from sitemap_middleware import (
    BadRowStats,
    Entry,
    Image,
    IterableSource,
    Lastmods,
    Limits,
    News,
    SQLAlchemySource,
    Video,
)
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.core.exchange import UrlsetPlan
from sitemap_middleware.core.routing import RootTarget
from sitemap_middleware.core.sitemap import Request, Sitemap
from sitemap_middleware.settings import Settings

from ..adapters import call
from ..support import assert_valid_index, assert_valid_urlset, dispose, locs

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
MakeApp = Callable[..., Any]
NS = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "x": "http://www.w3.org/1999/xhtml",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}

products = Table(
    "products",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("photo", String, nullable=True),
)


def product_engine(path: Path, rows: int, slug: Callable[[int], str] = str) -> Any:
    engine = create_engine(f"sqlite:///{path}")
    products.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(products),
            [
                {
                    "id": i,
                    "slug": slug(i),
                    "photo": f"https://cdn.example.net/{i}.jpg" if i % 2 else None,
                }
                for i in range(1, rows + 1)
            ],
        )
    return engine


def opening(body: bytes) -> bytes:
    return body[body.find(b"<urlset") : body.find(b">", body.find(b"<urlset")) + 1]


async def test_languages_give_every_url_all_its_alternates(
    make_app: MakeApp, tmp_path: Path, sitemap_schema: etree.XMLSchema
) -> None:
    engine = product_engine(tmp_path / "p.sqlite3", 30)
    source = SQLAlchemySource(
        select(products.c.id, products.c.slug, products.c.photo),
        engine,
        name="products",
        loc="/{lang}/products/{slug}",
        languages=["en", "de", "fr"],
        x_default="en",
        images="photo",
    )
    assert source.shape.urls_per_row == 3 and source.shape.alternates == 4
    app = make_app(sources=[source], base_url=BASE)
    response = await call(app)
    urls = assert_valid_urlset(response.body, sitemap_schema)
    assert len(urls) == 90
    assert opening(response.body) == (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:xhtml="http://www.w3.org/1999/xhtml" '
        b'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
    )
    groups: dict[str, set[tuple[str, str]]] = {}
    for url in urls:
        loc = url.findtext("s:loc", namespaces=NS)
        links = {
            (link.get("hreflang"), link.get("href"))
            for link in url.findall("x:link", namespaces=NS)
        }
        assert (loc.split("/")[3], loc) in links  # lists itself
        groups.setdefault(loc.rsplit("/", 1)[1], set()).add(frozenset(links))  # type: ignore[arg-type]
    for slug, variants in groups.items():
        assert len(variants) == 1, slug  # every language lists the same group
        (links,) = variants
        assert {lang for lang, _ in links} == {"en", "de", "fr", "x-default"}  # type: ignore[misc]
        assert (("x-default", f"{BASE}en/products/{slug}")) in links
    first = urls[0]
    assert first.xpath("image:image/image:loc/text()", namespaces=NS) == [
        "https://cdn.example.net/1.jpg"
    ]
    assert urls[3].findall("image:image", namespaces=NS) == []  # row 2 has no photo
    dispose(engine)


async def test_a_plain_sitemap_declares_no_extension(make_app: MakeApp) -> None:
    response = await call(make_app(sources=["/a", "/b"], base_url=BASE))
    assert opening(response.body) == b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


async def test_entries_with_every_extension(
    make_app: MakeApp, sitemap_schema: etree.XMLSchema
) -> None:
    now = datetime.now(UTC)
    entries = [
        Entry(
            "/en/tour",
            alternates={"en": "/en/tour", "de": "/de/tour", "x-default": "/en/tour"},
            images=[Image("/img/1.jpg"), "https://cdn.example.net/2.jpg"],
            videos=[
                Video(
                    "/thumb.jpg",
                    "The tour",
                    "A walk through the building",
                    content_loc="/tour.mp4",
                    duration=120,
                    family_friendly=True,
                )
            ],
        ),
        Entry("/news/today", news=News("Example Times", "en", now - timedelta(hours=3), "Today")),
        Entry("/news/old", news=News("Example Times", "en", now - timedelta(days=3), "Old")),
        Entry("/plain"),
    ]
    app = make_app(sources=[IterableSource(entries, name="mixed")], base_url=BASE)
    response = await call(app)
    urls = assert_valid_urlset(response.body, sitemap_schema)
    assert locs(urls) == [BASE + "en/tour", BASE + "news/today", BASE + "news/old", BASE + "plain"]
    assert len(urls[0].findall("x:link", namespaces=NS)) == 3
    assert len(urls[0].findall("image:image", namespaces=NS)) == 2
    assert urls[0].findtext("video:video/video:duration", namespaces=NS) == "120"
    assert urls[1].findtext("news:news/news:title", namespaces=NS) == "Today"
    assert urls[2].find("news:news", namespaces=NS) is None  # older than two days
    assert app.stats["mixed"] == BadRowStats()  # every source is listed; nothing was bad


async def test_bad_extension_values_are_left_out_and_counted(
    make_app: MakeApp, sitemap_schema: etree.XMLSchema, caplog: pytest.LogCaptureFixture
) -> None:
    def entries() -> Iterator[Entry]:
        yield Entry("/a", alternates={"de": "/de/a"})  # does not list itself
        yield Entry("/b", images=["/1.jpg", "/2.jpg", "/3.jpg"])  # two declared
        yield Entry("/c", videos=[Video("/t.jpg", "Title", "No content or player")])
        yield Entry("/d", news=News("Paper", "English", datetime.now(UTC), "Title"))

    source = IterableSource(entries, name="odd", alternates=2, images=2, videos=1, news=True)
    app = make_app(sources=[source], base_url=BASE)
    urls = assert_valid_urlset((await call(app)).body, sitemap_schema)
    assert len(urls) == 4  # every URL is listed; only the bad values are left out
    assert urls[0].find("x:link", namespaces=NS) is None
    assert len(urls[1].findall("image:image", namespaces=NS)) == 2
    assert urls[2].find("video:video", namespaces=NS) is None
    assert urls[3].find("news:news", namespaces=NS) is None
    assert app.stats["odd"].fields_dropped == 4
    assert any("not among its own alternates" in r.getMessage() for r in caplog.records)


async def test_the_byte_limit_holds_with_the_longest_alternates(
    make_app: MakeApp, tmp_path: Path, sitemap_schema: etree.XMLSchema
) -> None:
    room = 2047 - len(BASE) - len("xx/products/") - 6
    engine = product_engine(tmp_path / "long.sqlite3", 60, lambda i: f"{i:06d}" + "'" * room)
    source = SQLAlchemySource(
        select(products.c.id, products.c.slug),
        engine,
        name="products",
        loc="/{lang}/products/{slug}",
        languages=["en", "de", "fr", "it", "es"],
        x_default="en",
    )
    max_bytes = 1_048_576
    app = make_app(sources=[source], base_url=BASE, limits=Limits(max_bytes=max_bytes))
    children = assert_valid_index((await call(app)).body)
    seen: list[str] = []
    for loc, _ in children:
        page = await call(app, path=loc.removeprefix(BASE[:-1]))
        assert page.status == 200 and page.complete
        assert len(page.body) <= max_bytes
        urls = assert_valid_urlset(page.body, sitemap_schema)
        assert all(len(url.findall("x:link", namespaces=NS)) == 6 for url in urls)
        seen += locs(urls)
    assert len(seen) == len(set(seen)) == 60 * 5
    dispose(engine)


def test_news_documents_change_with_the_clock_a_tick_at_a_time() -> None:
    source = IterableSource(
        [Entry("/n", news=News("P", "en", datetime(2024, 5, 1, tzinfo=UTC), "T"))], name="news"
    )
    assert source.shape.news
    sitemap = Sitemap([source], Settings(base_url=BASE, lastmods=Lastmods(news_tick=600)))
    target = sitemap.routes.match("/sitemap.xml")
    assert isinstance(target, RootTarget)
    parts = sitemap.parts(target)
    assert parts is not None
    summary = source.summarize(parts[0][1], AsOf.now())

    def plan(now: datetime) -> tuple[str, str | None]:
        planned = sitemap.planner.respond(
            Request("GET"), target, parts, [summary], now, sitemap.hosts.default
        )
        assert isinstance(planned, UrlsetPlan)
        headers = dict(planned.head.headers)
        return headers["etag"], headers.get("last-modified")

    # A tick starts 2 s late (DATE_LAG), so that it is never newer than Last-Modified's cap.
    start = datetime(2024, 5, 2, 12, 0, 2, tzinfo=UTC)
    assert plan(start) == plan(start + timedelta(minutes=9, seconds=59))
    later = plan(start + timedelta(minutes=10))
    assert later != plan(start)
    assert later[1] == "Thu, 02 May 2024 12:10:00 GMT"  # the window moved then
    # Pages of a news source hold at most 1,000 entries.
    assert sitemap.page_size(source) == 1_000
