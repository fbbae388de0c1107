"""Hostile rows: arbitrary data in every field, through every kind of source and both layouts.

Whatever a source yields, every served document is valid against the official
XSD, every row the protocol allows is listed as it should be, and every row or
field that cannot be listed is reported: counted in ``stats`` and logged with
the source and the row's key (see tests/hostile.py for the expectations).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    event,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    BadRowStats,
    Entry,
    Gzip,
    Limits,
    SQLAlchemySource,
)
from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.entry import Batch, EntryRules, RawEntry
from sitemap_middleware.output.fast_path import Renderer
from sitemap_middleware.output.xml import UrlsetWriter, url_element

from .. import hostile
from ..adapters import DRIVERS, AppDriver, Reply
from ..hostile import LAYOUTS, Layout, Row, budget
from ..support import assert_valid_urlset

SITE = Site.build("https://example.com/", "/sitemap.xml")

# Every code point, lone surrogates, U+FFFE and control characters included.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
locs = st.one_of(
    texts,
    texts.map(lambda t: "/" + t),
    texts.map(lambda t: "https://example.com/" + t),
    texts.map(lambda t: "https://other.example/" + t),
    st.from_regex(r"/[a-z0-9/-]{0,30}", fullmatch=True),
    st.none(),
    st.integers(),
)
lastmods = st.one_of(
    st.none(),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(timezone(timedelta(hours=5, minutes=30)))),
    st.datetimes(timezones=st.just(UTC)),
    texts,
    st.from_regex(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?)?", fullmatch=True),
)
changefreqs = st.one_of(
    st.none(), st.sampled_from(["daily", "Weekly", "never", "sometimes", ""]), texts
)
priorities = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.0, 0.0, True, 1, "0.3", "x"]),
)
rows = st.lists(st.tuples(st.integers(), locs, lastmods, changefreqs, priorities), max_size=40)


def slow(batch: list[RawEntry]) -> list[str]:
    rules = EntryRules(SITE, UTC)
    return [url_element(u) for raw in batch if (u := rules.check("s", raw)) is not None]


@budget(0.5)
@given(rows)
def test_any_rows_give_a_valid_document(sitemap_schema: etree.XMLSchema, batch: list[Any]) -> None:
    elements = Renderer(EntryRules(SITE, UTC)).elements("s", Batch.of(batch))
    assert elements == slow(batch)
    if elements:
        writer = UrlsetWriter()
        document = writer.open() + writer.write(elements) + writer.close()
        assert_valid_urlset(document, sitemap_schema)


def test_dates_at_the_edges_of_the_calendar(sitemap_schema: etree.XMLSchema) -> None:
    batch: list[RawEntry] = [
        (1, "/a", date(1, 1, 1), None, None),
        (2, "/b", datetime(9999, 12, 31, 23, 59, 59), None, None),
        (3, "/c", datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=-12))), None, None),
    ]
    elements = Renderer(EntryRules(SITE, UTC)).elements("s", Batch.of(batch))
    writer = UrlsetWriter()
    assert_valid_urlset(writer.open() + writer.write(elements) + writer.close(), sitemap_schema)


# --- the renderer alone: every row listed as the protocol says, or reported ----------------------


UNIFORM_LASTMODS = st.sampled_from(["none", "naive", "dates", "as drawn"])


@st.composite
def layout_rows(draw: st.DrawFn) -> tuple[Layout, list[Row]]:
    """Rows of one layout; half the time made uniform (one changefreq and priority, lastmods
    all absent, all naive or all dates), the shape the column-wise fast path takes."""
    layout = draw(st.sampled_from(LAYOUTS))
    table = draw(hostile.rows(layout, 12))
    if table and draw(st.booleans()):
        first = table[0]
        changefreq = first.changefreq if isinstance(first.changefreq.value, str) else hostile.NONE
        priority = first.priority if type(first.priority.value) is float else hostile.NONE
        kind = draw(UNIFORM_LASTMODS)
        table = [
            Row(row.loc, _uniform_lastmod(kind, row.lastmod, draw), changefreq, priority)
            for row in table
        ]
    return layout, table


def _uniform_lastmod(kind: str, lastmod: hostile.Field, draw: st.DrawFn) -> hostile.Field:
    if kind == "none":
        return hostile.NONE
    if kind == "naive":
        moment = draw(st.datetimes())
        return hostile.as_served(hostile.Field(moment, moment.replace(tzinfo=UTC, microsecond=0)))
    if kind == "dates":
        day = draw(st.dates())
        return hostile.as_served(hostile.Field(day, day))
    return lastmod


@budget(1)
@given(layout_rows())
def test_hostile_rows_are_listed_or_reported(case: tuple[Layout, list[Row]]) -> None:
    layout, table = case
    site = Site.build(layout.base_url, layout.path)
    rules = EntryRules(site, UTC)
    batch = Batch.of(
        [
            (i, r.loc.value, r.lastmod.value, r.changefreq.value, r.priority.value)
            for i, r in enumerate(table)
        ]
    )
    listed_until = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=60)
    with hostile.reports() as log:
        elements = Renderer(rules).elements("urls", batch, listed_until)
    assert not log.unparsed
    listed = []
    if elements:
        writer = UrlsetWriter()
        listed = hostile.urlset_entries(writer.open() + writer.write(elements) + writer.close())
    hostile.check_listing("urls", layout, list(enumerate(table)), listed, log.reported)
    _check_stats(rules.stats.get("urls", BadRowStats()), log.reported)


def _check_stats(stats: BadRowStats, reported: hostile.Reported) -> None:
    assert stats.skipped == len(reported.skipped)
    # Rows, not problems: a row with three bad fields is one row with fields dropped.
    dropped = {key for key in reported.dropped if key not in reported.skipped}
    assert stats.fields_dropped == len(dropped)


# --- through the middleware: both layouts, every kind of source ----------------------------------


@pytest.fixture(scope="module", params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest) -> Iterator[AppDriver]:
    made = DRIVERS[request.param]()
    yield made
    made.close()


PAGE_ROWS = 4
"""Rows per page in the index layout (``max_urls=4``): a dozen rows make several pages."""


def app_settings(layout: Layout, index: bool, gzip_files: bool) -> dict[str, Any]:
    settings: dict[str, Any] = {"base_url": layout.base_url, "path": layout.path}
    if index:
        settings.update(
            index="always", limits=Limits(max_urls=PAGE_ROWS), gzip=Gzip(index_files=gzip_files)
        )
    return settings


def fetch(driver: AppDriver, app: Any, layout: Layout, url: str, gzip: bool) -> Reply:
    assert url.startswith(layout.base_url), url
    target = ("/" + url[len(layout.base_url) :]).encode("ascii")
    headers = [(b"accept-encoding", b"gzip")] if gzip else []
    reply = driver.request(app, "GET", target, headers)
    assert reply.error is None and not reply.problems, (reply.error, reply.problems)
    assert reply.complete
    assert reply.status in (200, 404), (reply.status, reply.body[:200])
    return reply


def serve_everything(
    driver: AppDriver,
    app: Any,
    layout: Layout,
    name: str,
    index: bool,
    gzip: bool,
    gzip_files: bool,
    keys: list[Any],
) -> list[dict[str, str | None]]:
    """Every entry the sitemap serves, in order, checking each document on the way.

    A page all of whose rows are bad answers 404 (an empty urlset is invalid);
    any other page, and the root whenever a source has rows, answers 200.
    """
    root = fetch(driver, app, layout, layout.scope + layout.path.rpartition("/")[2], gzip)
    if root.status == 404:
        assert not index or not keys, "the index of a non-empty source must exist"
        return []
    xml = hostile.document(
        root.status, {k.decode(): v.decode() for k, v in root.headers}, root.body
    )
    if not index:
        assert not hostile.is_sitemapindex(xml)
        return hostile.urlset_entries(xml)
    children = hostile.index_children(xml)
    pages = sorted({k // PAGE_ROWS for k in keys})
    expected = [
        f"{layout.scope}{layout.path.rpartition('/')[2].removesuffix('.xml')}-{name}-{page + 1}.xml"
        + (".gz" if gzip_files else "")
        for page in pages
    ]
    assert children == expected
    listed: list[dict[str, str | None]] = []
    for child, page in zip(children, pages, strict=True):
        reply = fetch(driver, app, layout, child, gzip)
        if reply.status == 404:
            listed.append({"empty page": str(page)})
            continue
        headers = {k.decode(): v.decode() for k, v in reply.headers}
        listed += hostile.urlset_entries(hostile.document(200, headers, reply.body))
    return listed


def check_served_rows(
    driver: AppDriver,
    app: Any,
    layout: Layout,
    name: str,
    table: list[tuple[Any, Row]],
    index: bool,
    gzip: bool,
    gzip_files: bool,
) -> None:
    with hostile.reports() as log:
        keys = [key for key, _ in table]
        served = serve_everything(driver, app, layout, name, index, gzip, gzip_files, keys)
    assert not log.unparsed, log.unparsed
    listed = []
    for entry in served:
        if "empty page" in entry:  # a page that answered 404: none of its rows may be listable
            page = int(entry["empty page"] or 0)
            for key, _ in table:
                if key // PAGE_ROWS == page:
                    assert (name, repr(key)) in log.reported.skipped, (key, page)
            continue
        listed.append(entry)
    hostile.check_listing(name, layout, table, listed, log.reported)
    _check_stats(driver.stats(app).get(name, BadRowStats()), log.reported)


def as_item(row: Row, form: str) -> Any:
    """A row the way a list or generator may give it: an Entry, a mapping or a bare loc."""
    fields = (row.loc.value, row.lastmod.value, row.changefreq.value, row.priority.value)
    bare = all(value is None for value in fields[1:]) and not isinstance(
        row.loc.value, Mapping | Entry
    )
    if form == "bare" and bare:
        return row.loc.value
    if form == "mapping":
        names = ("loc", "lastmod", "changefreq", "priority")
        return {k: v for k, v in zip(names, fields, strict=True) if v is not None or k == "loc"}
    return Entry(*fields)


def python_source(kind: str, items: list[Any]) -> object:
    if kind == "list":
        return items
    if kind == "generator":

        def generate() -> Iterator[Any]:
            yield from items

        return generate

    async def agenerate() -> AsyncIterator[Any]:
        for item in items:
            yield item

    return agenerate


layouts = st.sampled_from(LAYOUTS)


@pytest.mark.parametrize("index", [False, True], ids=["urlset", "index"])
@pytest.mark.parametrize("kind", ["list", "generator", "async-generator"])
@budget(0.075)
@given(data=st.data())
def test_python_sources(driver: AppDriver, kind: str, index: bool, data: st.DataObject) -> None:
    if kind == "async-generator" and not driver.async_sources:
        pytest.skip(f"the {driver.name} adapter serves no async sources")
    layout = data.draw(layouts, "layout")
    table = data.draw(hostile.rows(layout), "rows")
    forms = data.draw(
        st.lists(
            st.sampled_from(["entry", "mapping", "bare"]), min_size=len(table), max_size=len(table)
        )
    )
    items = [as_item(row, form) for row, form in zip(table, forms, strict=True)]
    gzip, gzip_files = data.draw(st.booleans(), "gzip"), data.draw(st.booleans(), "gz files")
    app = driver.make(
        {"urls": python_source(kind, items)}, **app_settings(layout, index, gzip_files)
    )
    try:
        table_rows = list(enumerate(table))
        check_served_rows(driver, app, layout, "urls", table_rows, index, gzip, gzip_files)
    finally:
        driver.discard(app)


# --- a real SQLite table, sync and async engines ---------------------------------------

metadata = MetaData()
hostile_table = Table(
    "hostile",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("loc", String),
    Column("lastmod_at", DateTime),
    Column("lastmod_text", String),
    Column("changefreq", String),
    Column("priority_real", Float),
    Column("priority_text", String),
)


@pytest.fixture(scope="module")
def sqlite_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile") / "rows.sqlite3"


@pytest.fixture(scope="module")
def sync_engine(sqlite_path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{sqlite_path}")
    # Rows are rewritten for every example: no need to wait for the disk.
    event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA synchronous=OFF"))
    metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def async_engine(
    driver: AppDriver, sync_engine: Engine, sqlite_path: Path
) -> Iterator[AsyncEngine]:
    # No pool: a WSGI app runs async sources on an event loop of its own, one per app.
    engine = create_async_engine(f"sqlite+aiosqlite:///{sqlite_path}", poolclass=NullPool)
    yield engine
    driver.run(engine.dispose())


LOCS = {"template": "{loc}", "callable": lambda row: row.loc}


def _as_template_value(row: Row) -> Row:
    """A loc drawn to be given whole, put in a template instead: its ``%``, ``?`` and ``#``
    are data there (``%25``, ``%3F``, ``%23``), so what it names is no longer what it was
    drawn to name; such a row may be listed or skipped, as any row may, and when listed its
    loc is still checked to be on the site (tests/sources/sqlalchemy/test_template_values.py
    checks the encoding itself)."""
    value = row.loc.value
    if isinstance(value, str) and any(c in value for c in "%?#"):
        return replace(row, loc=hostile.Field(value, hostile.ANY))
    return row


@pytest.mark.parametrize("index", [False, True], ids=["urlset", "index"])
@pytest.mark.parametrize("engine_kind", ["sync", "async"])
@budget(0.05)
@given(data=st.data())
def test_sqlalchemy_sources(
    driver: AppDriver,
    sync_engine: Engine,
    async_engine: AsyncEngine,
    engine_kind: str,
    index: bool,
    data: st.DataObject,
) -> None:
    if engine_kind == "async" and not driver.async_sources:
        pytest.skip(f"the {driver.name} adapter serves no async sources")
    layout = data.draw(layouts, "layout")
    lastmod = data.draw(st.sampled_from(["datetime", "text"]), "lastmod column")
    priority = data.draw(st.sampled_from(["real", "text"]), "priority column")
    table = data.draw(hostile.sql_rows(layout, lastmod, priority), "rows")
    keys = sorted(data.draw(st.sets(st.integers(0, 15), min_size=len(table), max_size=len(table))))
    lastmod_column = {"datetime": "lastmod_at", "text": "lastmod_text"}[lastmod]
    priority_column = {"real": "priority_real", "text": "priority_text"}[priority]
    with sync_engine.begin() as conn:
        conn.execute(delete(hostile_table))
        if table:
            conn.execute(
                insert(hostile_table),
                [
                    {
                        "id": key,
                        "loc": row.loc.value,
                        lastmod_column: row.lastmod.value,
                        "changefreq": row.changefreq.value,
                        priority_column: row.priority.value,
                    }
                    for key, row in zip(keys, table, strict=True)
                ],
            )
    stmt = select(
        hostile_table.c.id,
        hostile_table.c.loc,
        hostile_table.c[lastmod_column],
        hostile_table.c.changefreq,
        hostile_table.c[priority_column],
    )
    loc_kind = data.draw(st.sampled_from(sorted(LOCS)), "loc")
    options: dict[str, Any] = {
        "name": "rows",
        "loc": LOCS[loc_kind],
        "lastmod": lastmod_column,
        "changefreq_column": "changefreq",
        "priority_column": priority_column,
    }
    source = (
        SQLAlchemySource(stmt, sync_engine, **options)
        if engine_kind == "sync"
        else AsyncSQLAlchemySource(stmt, async_engine, **options)
    )
    gzip, gzip_files = data.draw(st.booleans(), "gzip"), data.draw(st.booleans(), "gz files")
    app = driver.make(source, **app_settings(layout, index, gzip_files))
    try:
        if loc_kind == "template":
            table = [_as_template_value(row) for row in table]
        table_rows = list(zip(keys, table, strict=True))
        check_served_rows(driver, app, layout, "rows", table_rows, index, gzip, gzip_files)
    finally:
        driver.discard(app)
