"""Dirty locs through both adapters: a loc is never changed into another resource's URL
(whitespace at the ends is encoded, dot segments are bad rows), and no loc is listed twice
in one document, whatever the source and whichever path renders it. Every served document
is validated against the XSDs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, create_engine, insert
from sqlalchemy import select as sql_select

from sitemap_middleware import Entry, Image, Limits, SQLAlchemySource

from ..adapters import call
from ..support import assert_valid_urlset, dispose, locs, served_locs

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
MakeApp = Callable[..., Any]

pages = Table(
    "pages",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String),
    Column("photo", String, nullable=True),
)


@pytest.fixture
def dirty(tmp_path: Path) -> Iterator[Callable[[list[str]], Engine]]:
    """``dirty(slugs)``: a SQLite table of pages with those slugs (ids 1, 2, ...)."""
    engines: list[Engine] = []

    def make(slugs: list[str]) -> Engine:
        engine = create_engine(f"sqlite:///{tmp_path / f'p{len(engines)}.sqlite3'}")
        pages.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(
                insert(pages),
                [
                    {"id": i, "slug": slug, "photo": f"/img/{slug}.png"}
                    for i, slug in enumerate(slugs, 1)
                ],
            )
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        dispose(engine)


def source(engine: Engine, **options: Any) -> SQLAlchemySource:
    return SQLAlchemySource(
        sql_select(pages.c.id, pages.c.slug, pages.c.photo),
        engine,
        name="pages",
        loc=options.pop("loc", "/p/{slug}"),
        **options,
    )


def reported(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


# --- finding 5: locs changed silently ---------------------------------------------------------

FINDING_5 = ["trail ", " lead", "../../../escape", "ok", "a/./b", "%2e%2E", "x/..", "\ttab\n"]


@pytest.mark.parametrize("loc", ["/p/{slug}", lambda row: f"/p/{row.slug}"], ids=["tpl", "fn"])
async def test_whitespace_is_encoded_and_dot_segments_are_bad_rows(
    make_app: MakeApp,
    dirty: Callable[[list[str]], Engine],
    sitemap_schema: etree.XMLSchema,
    caplog: pytest.LogCaptureFixture,
    loc: Any,
) -> None:
    """A template's value is data: "%2e%2E" is those six characters (a segment a router
    reads back as "%2e%2E"); a loc given whole keeps its escapes: "%2e%2E" is "..", a dot
    segment."""
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    app = make_app(sources=[source(dirty(FINDING_5), loc=loc)], base_url=BASE)
    whole = callable(loc)
    escaped = [] if whole else [f"{BASE}p/%252e%252E"]
    assert await served_locs(app, sitemap_schema) == [
        f"{BASE}p/trail%20",
        f"{BASE}p/%20lead",
        f"{BASE}p/ok",
        *escaped,
        f"{BASE}p/%09tab%0A",
    ]
    assert app.stats["pages"].skipped == (4 if whole else 3)
    logged = reported(caplog, "dot segment")
    for key in (3, 5, 6, 7) if whole else (3, 5, 7):  # each logged with its key
        assert any(f"row {key}:" in message for message in logged), logged
    assert len(logged) == (4 if whole else 3)


async def test_extension_urls_follow_the_loc_rule(
    make_app: MakeApp, dirty: Callable[[list[str]], Engine], sitemap_schema: etree.XMLSchema
) -> None:
    engine = dirty(["a ", "b"])
    with engine.begin() as conn:
        conn.execute(pages.update().where(pages.c.id == 2).values(photo="/img/../secret.png"))
    app = make_app(
        sources=[source(engine, images="photo", languages=["en", "de"], loc="/{lang}/p/{slug}")],
        base_url=BASE,
    )
    reply = await call(app)
    urls = assert_valid_urlset(reply.body, sitemap_schema)  # with the extensions' XSD
    ns = {
        "i": "http://www.google.com/schemas/sitemap-image/1.1",
        "x": "http://www.w3.org/1999/xhtml",
    }
    images = [image for url in urls for image in url.xpath("i:image/i:loc/text()", namespaces=ns)]
    assert images == [f"{BASE}img/a%20.png", f"{BASE}img/a%20.png"]  # none for "/img/../"
    hrefs = urls[0].xpath("x:link/@href", namespaces=ns)
    assert hrefs == [f"{BASE}en/p/a%20", f"{BASE}de/p/a%20"]
    assert app.stats["pages"].urls_with_fields_dropped == 2  # row 2's image, in each language


# --- finding 6: the same loc twice in one document --------------------------------------------

DUPLICATES = ["a", "with space", "a", "with%20space", "müsli", "b", "m%C3%BCsli", "m%c3%bcsli"]
# A loc given whole keeps its escapes: "with%20space" is "with space", "m%c3%bcsli" "müsli".
FIRSTS = [f"{BASE}p/a", f"{BASE}p/with%20space", f"{BASE}p/m%C3%BCsli", f"{BASE}p/b"]
# A template's values are data: "%" is a character, so only the second "a" repeats a loc.
TEMPLATE_FIRSTS = [
    f"{BASE}p/a",
    f"{BASE}p/with%20space",
    f"{BASE}p/with%2520space",
    f"{BASE}p/m%C3%BCsli",
    f"{BASE}p/b",
    f"{BASE}p/m%25C3%25BCsli",
    f"{BASE}p/m%25c3%25bcsli",
]


@pytest.mark.parametrize("batch_size", [1, 3, 500])
@pytest.mark.parametrize("loc", ["/p/{slug}", lambda row: f"/p/{row.slug}"], ids=["tpl", "fn"])
async def test_duplicates_of_a_sql_source_are_bad_rows(
    make_app: MakeApp,
    dirty: Callable[[list[str]], Engine],
    sitemap_schema: etree.XMLSchema,
    caplog: pytest.LogCaptureFixture,
    batch_size: int,
    loc: Any,
) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    engine = dirty(DUPLICATES)
    app = make_app(
        sources=[source(engine, loc=loc)], base_url=BASE, limits=Limits(batch_size=batch_size)
    )
    logged_keys = {"3"}
    if callable(loc):
        # The first in key order is kept: row 5 ("müsli") before rows 7 and 8.
        assert await served_locs(app, sitemap_schema) == FIRSTS
        logged_keys |= {"4", "7", "8"}
    else:
        assert await served_locs(app, sitemap_schema) == TEMPLATE_FIRSTS
    assert app.stats["pages"].skipped == len(logged_keys)
    logged = reported(caplog, "duplicate loc")
    assert {message.split("row ")[1].split(":")[0] for message in logged} == logged_keys


async def test_duplicates_across_the_fast_and_the_full_rules_in_one_document(
    make_app: MakeApp, dirty: Callable[[list[str]], Engine], sitemap_schema: etree.XMLSchema
) -> None:
    """Plain template middles (written in parts), middles the template encodes (a batch
    holding '%' or '?') and locs the rules encode meet in one document; '%61' is data, not
    'a'."""
    slugs = ["a", "%61", "q?x", "a", "b", "q?x", "b", "%61", "c", "b c", "b%20c"]
    app = make_app(sources=[source(dirty(slugs))], base_url=BASE, limits=Limits(batch_size=2))
    assert await served_locs(app, sitemap_schema) == [
        f"{BASE}p/a",
        f"{BASE}p/%2561",
        f"{BASE}p/q%3Fx",
        f"{BASE}p/b",
        f"{BASE}p/c",
        f"{BASE}p/b%20c",
        f"{BASE}p/b%2520c",
    ]
    assert app.stats["pages"].skipped == 4


async def test_a_repeated_list_item_and_a_generator(
    make_app: MakeApp, sitemap_schema: etree.XMLSchema
) -> None:
    items = ["/a", Entry("/a", lastmod="2024-01-01"), "https://example.com/a", "/b", "/a "]
    app = make_app(sources={"urls": items}, base_url=BASE)
    assert await served_locs(app, sitemap_schema) == [f"{BASE}a", f"{BASE}b", f"{BASE}a%20"]
    assert app.stats["urls"].skipped == 2

    def generate() -> Iterator[str]:
        yield from ["/x", "/y", "/x", "/m\u00fcsli", "/m%C3%BCsli"]

    app = make_app(sources={"gen": generate}, base_url=BASE)
    assert await served_locs(app, sitemap_schema) == [f"{BASE}x", f"{BASE}y", f"{BASE}m%C3%BCsli"]
    assert app.stats["gen"].skipped == 2


async def test_languages_and_images_rows_with_one_slug(
    make_app: MakeApp,
    dirty: Callable[[list[str]], Engine],
    caplog: pytest.LogCaptureFixture,
    sitemap_schema: etree.XMLSchema,
) -> None:
    """Extension rows take the full rules: one row gives one URL per language, and two rows
    with one slug give each language URL twice."""
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    engine = dirty(["a", "b", "a", "with space", "with%20space"])
    app = make_app(
        sources=[source(engine, loc="/{lang}/p/{slug}", languages=["en", "de"], images="photo")],
        base_url=BASE,
        limits=Limits(batch_size=2),
    )
    reply = await call(app)
    assert locs(assert_valid_urlset(reply.body, sitemap_schema)) == [
        f"{BASE}en/p/a",
        f"{BASE}de/p/a",
        f"{BASE}en/p/b",
        f"{BASE}de/p/b",
        f"{BASE}en/p/with%20space",
        f"{BASE}de/p/with%20space",
        f"{BASE}en/p/with%2520space",  # a value's "%" is data
        f"{BASE}de/p/with%2520space",
    ]
    assert app.stats["pages"].urls_skipped == 2
    logged = reported(caplog, "duplicate loc")
    assert any("(3, 'de')" in message for message in logged), logged


async def test_images_from_a_function_on_repeated_rows(
    make_app: MakeApp, dirty: Callable[[list[str]], Engine], sitemap_schema: etree.XMLSchema
) -> None:
    engine = dirty(["a", "a", "b"])
    app = make_app(
        sources=[source(engine, images=lambda row: [Image(f"/img/{row.id}.png")])],
        base_url=BASE,
    )
    reply = await call(app)
    urls = assert_valid_urlset(reply.body, sitemap_schema)
    assert locs(urls) == [f"{BASE}p/a", f"{BASE}p/b"]
    assert b"/img/1.png" in reply.body and b"/img/2.png" not in reply.body


async def test_duplicates_are_dropped_from_the_human_view(
    make_app: MakeApp, dirty: Callable[[list[str]], Engine]
) -> None:
    app = make_app(sources=[source(dirty(["a", "a", "b"]))], base_url=BASE, html=True)
    page = await call(app, path="/sitemap.html")  # one page: the root is the urlset
    assert page.status == 200
    assert page.body.count(b"https://example.com/p/a<") == 1
    assert b"2 URLs" in page.body


async def test_duplicates_across_documents_are_the_applications(
    make_app: MakeApp, dirty: Callable[[list[str]], Engine], sitemap_schema: etree.XMLSchema
) -> None:
    """Each document lists its own locs once; the same loc in two documents is listed by both
    (the README says so; ``check`` reports it)."""
    app = make_app(sources={"one": ["/shared", "/one"], "two": ["/shared", "/two"]}, base_url=BASE)
    for name in ("one", "two"):
        listed = await served_locs(app, sitemap_schema, f"/sitemap-{name}-1.xml")
        assert listed == [f"{BASE}shared", f"{BASE}{name}"]
