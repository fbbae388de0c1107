"""A loc template's column values are data: each is percent-encoded whole (``%`` is
``%25``), so that a listed loc is the URL the application routes for that row. Starlette's
router and Django's ``resolve()`` read every served loc back into the stored value, and a
``DjangoSource`` loc is what ``request.build_absolute_uri(reverse(...))`` writes. A loc
given whole (a list item, a loc callable) keeps its ``%XX`` escapes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, delete, insert
from sqlalchemy import select as sql_select
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.routing import Match, Route

from sitemap_middleware import AsyncSQLAlchemySource, Limits, SitemapApp, SQLAlchemySource
from sitemap_middleware.core.urls import XML_FORBIDDEN, has_dot_segment
from sitemap_middleware.sources.sqlalchemy.locs import LocTemplate

from ...conftest import examples
from ...support import served_locs

BASE = "https://example.com/"
# The characters Django's reverse() leaves as they are (RFC 3986's sub-delims, "/~:@").
REVERSE_SAFE = "!$&'()*+,;=/~:@"

products = Table(
    "products",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("slug", String),
)

# Values seen in real tables: escapes that are data, reserved characters, unicode, control
# characters (bad rows: XML cannot hold them), dot segments (bad rows: a client would
# resolve them to another URL), paths.
HOSTILE = [
    "100%Baumwolle-127",
    "%41ngle-107",
    "percent%20lit",
    "%",
    "%zz",
    "%2F",
    "%2e%2E",
    "with space",
    " lead",
    "m\u00fcsli",
    "\u65e5\u672c",
    "a&b",
    "a#b",
    "a?b=c",
    "q=1&r=2",
    "+plus",
    "'quote'",
    '"dq"',
    "<x>",
    "[v6]",
    "back\\slash",
    "tab\there",
    "new\nline",
    "ctl\x01",
    "del\x7f",
    "\ufffe",
    "x/y",
    "a/%2e%2e/b",
    "..",
    ".",
    "a/../b",
    "~user:@",
    "\U0001f600",
]
# Any text a database stores (no lone surrogates, no NUL), some of it close to escapes.
slugs = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1),
    st.text("%0123456789abcdefABCDEF/ ?#&=+.", min_size=1, max_size=8),
)
slug_lists = st.lists(slugs, min_size=1, max_size=12, unique=True)


def is_bad_row(value: str) -> bool:
    """The rows the loc rule refuses: a character XML forbids, or a dot segment (written
    as a dot: "%2e" in a value is data, three characters)."""
    written = "/p/" + quote(value, safe=REVERSE_SAFE)
    return XML_FORBIDDEN.search(value) is not None or has_dot_segment(written)


def route_value(loc: str, pattern: str) -> Any:
    """The path parameter Starlette's router reads from a served loc, decoded as uvicorn
    decodes the request target into the scope's ``path``; None when it does not match."""
    parts = urlsplit(loc)
    assert not parts.query and not parts.fragment, loc  # data added no query or fragment
    scope = {"type": "http", "method": "GET", "path": unquote(parts.path), "root_path": ""}
    match, child = Route(pattern, lambda request: None).matches(scope)
    return child["path_params"]["slug"] if match is Match.FULL else None


def check_listed(listed: list[str], values: list[str], prefix: str) -> None:
    """Every good row listed at the URL its value routes to; every other one a bad row."""
    good = [value for value in values if not is_bad_row(value)]
    assert listed == [BASE.rstrip("/") + quote(prefix + value, safe=REVERSE_SAFE) for value in good]
    for loc, value in zip(listed, good, strict=True):
        if "\n" not in value:  # Starlette's "path" convertor (".*") stops at a newline
            assert route_value(loc, prefix + "{slug:path}") == value
        if "/" not in value:
            assert route_value(loc, prefix + "{slug}") == value


@pytest.fixture
def sqlite_file(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "products.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    products.metadata.create_all(engine)
    engine.dispose()
    yield str(path)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_starlette_routes_every_listed_loc_to_its_stored_value(
    sqlite_file: str, kind: str, sitemap_schema: etree.XMLSchema
) -> None:
    engine = create_engine(f"sqlite:///{sqlite_file}")
    stmt = sql_select(products.c.id, products.c.slug)
    source: Any
    if kind == "sync":
        source = SQLAlchemySource(stmt, engine, name="products", loc="/products/{slug}")
    else:
        async_engine = create_async_engine(f"sqlite+aiosqlite:///{sqlite_file}")
        source = AsyncSQLAlchemySource(stmt, async_engine, name="products", loc="/products/{slug}")

    @settings(max_examples=examples(60), deadline=None)
    @given(values=slug_lists, batch_size=st.sampled_from([1, 3, 500]))
    def run(values: list[str], batch_size: int) -> None:
        with engine.begin() as conn:
            conn.execute(delete(products))
            conn.execute(insert(products), [{"id": i, "slug": v} for i, v in enumerate(values)])
        app = SitemapApp(base_url=BASE, sources=[source], limits=Limits(batch_size=batch_size))
        check_listed(
            anyio.run(served_locs, app, sitemap_schema, "/sitemap.xml", True), values, "/products/"
        )

    try:
        run()
    finally:
        engine.dispose()
        if kind == "async":
            anyio.run(source.engine.dispose)


def test_the_issue_s_slugs_route_to_their_rows(
    sqlite_file: str, sitemap_schema: etree.XMLSchema
) -> None:
    engine = create_engine(f"sqlite:///{sqlite_file}")
    values = ["100%Baumwolle-127", "%41ngle-107", "percent%20lit", "Angle-107"]
    with engine.begin() as conn:
        conn.execute(insert(products), [{"id": i, "slug": v} for i, v in enumerate(values)])
    source = SQLAlchemySource(
        sql_select(products.c.id, products.c.slug), engine, name="p", loc="/products/{slug}"
    )
    listed = anyio.run(
        served_locs,
        SitemapApp(base_url=BASE, sources=[source]),
        sitemap_schema,
        "/sitemap.xml",
        True,
    )
    engine.dispose()
    assert listed == [
        f"{BASE}products/100%25Baumwolle-127",
        f"{BASE}products/%2541ngle-107",
        f"{BASE}products/percent%2520lit",
        f"{BASE}products/Angle-107",  # not a duplicate of "%41ngle-107"
    ]


@settings(max_examples=examples(200), deadline=None)
@given(first=slugs, second=slugs)
def test_a_value_in_a_query_stays_one_parameter_value(first: str, second: str) -> None:
    """After a "?" a value is one parameter's value: "&", "=", "+" and "#" encoded too, so
    the query parses back into the stored values."""
    from urllib.parse import parse_qs

    from sitemap_middleware.core.urls import Site

    template = LocTemplate("/search?q={a}&page={b}", ["a", "b"])
    site = Site.build(BASE, "/sitemap.xml")
    loc = template((first, second))
    if XML_FORBIDDEN.search(first + second):
        return  # a bad row
    url = site.resolve(loc)
    query = urlsplit(url).query
    assert parse_qs(query, keep_blank_values=True) == {"q": [first], "page": [second]}
    assert urlsplit(url).path == "/search"


def test_a_loc_given_whole_keeps_its_escapes(
    sqlite_file: str, sitemap_schema: etree.XMLSchema
) -> None:
    """A list item or a loc callable gives the URL itself: its "%XX" escapes are escapes
    (a lone "%" is written "%25"); a template's value never holds one."""

    def whole(row: Any) -> str:
        return f"/products/{row.slug}"

    items = ["/products/%41ngle", "/products/100%Baumwolle", "/products/50%"]
    listed = anyio.run(
        served_locs,
        SitemapApp(base_url=BASE, sources={"items": items}),
        sitemap_schema,
        "/sitemap.xml",
        True,
    )
    assert listed == [
        f"{BASE}products/%41ngle",
        f"{BASE}products/100%Baumwolle",
        f"{BASE}products/50%25",
    ]
    engine = create_engine(f"sqlite:///{sqlite_file}")
    with engine.begin() as conn:
        conn.execute(insert(products), [{"id": 1, "slug": "%41ngle"}])
    stmt = sql_select(products.c.id, products.c.slug)
    for loc, expected in ((whole, "%41ngle"), ("/products/{slug}", "%2541ngle")):
        source = SQLAlchemySource(stmt, engine, name="p", loc=loc)
        listed = anyio.run(
            served_locs,
            SitemapApp(base_url=BASE, sources=[source]),
            sitemap_schema,
            "/sitemap.xml",
            True,
        )
        assert listed == [f"{BASE}products/{expected}"]
    engine.dispose()
