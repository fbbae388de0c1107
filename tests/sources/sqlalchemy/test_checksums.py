"""The checksum of a SQL source covers every stored value that feeds a served byte (the
key, the loc's columns, the lastmod at the precision it is stored, an image column) and
nothing else; a page's own summary and a recount's per-page aggregate give the same one.

On SQLite (the stored texts, odd ones included) and PostgreSQL (microseconds).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    select,
    update,
)
from sqlalchemy.pool import NullPool

from sitemap_middleware import SQLAlchemySource
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.sources.base import Page, page_keys

from ...conftest import examples
from ...postgres import driver_url, schema_name, server_url

MEMORY = "/dev/shm" if os.path.isdir("/dev/shm") else None
LISTED_UNTIL = datetime(2030, 1, 1, tzinfo=UTC)


def make_table(postgres: bool) -> Table:
    return Table(
        "items",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("slug", String),
        Column("updated", DateTime(timezone=True) if postgres else String),
        Column("img", String),
        Column("note", String),  # selected, shown nowhere
    )


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
TEXTS = st.one_of(st.none(), TEXT, st.sampled_from(["a", "ab", "b", "ba", "a\x1fb", ""]))
SQLITE_LASTMODS = st.one_of(
    st.none(),
    st.datetimes(datetime(1990, 1, 1), datetime(2029, 1, 1)).map(lambda d: d.isoformat(sep=" ")),
    st.sampled_from(
        [
            *["2024-05-01 12:00:00", "2024-05-01 12:00:00.001", "2024-05-01 12:00:00.000001"],
            *["2024-05-01T12:00:00.9996", "2024-05-01T12:00:00.9995Z", "2024-02-30", "2024"],
            *["2024-05-01T14:00:00+02:00", "2040-01-01", "soon", ""],
        ]
    ),
    st.integers(-(10**6), 10**12),
)
PG_LASTMODS = st.one_of(
    st.none(), st.datetimes(datetime(1990, 1, 1), datetime(2029, 1, 1), timezones=st.just(UTC))
)


@dataclass
class Database:
    postgres: bool
    engine: Engine
    table: Table

    def fill(self, rows: list[tuple[Any, ...]]) -> None:
        with self.engine.begin() as conn:
            conn.execute(self.table.delete())
            if rows:
                names = ("id", "slug", "updated", "img", "note")
                conn.execute(self.table.insert(), [dict(zip(names, r, strict=True)) for r in rows])

    def edit(self, key: int, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(self.table).where(self.table.c.id == key).values(**values))

    def source(self) -> SQLAlchemySource:
        return SQLAlchemySource(
            select(self.table),
            self.engine,
            name="items",
            loc="/items/{slug}",
            lastmod="updated",
            images="img",
        )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> Iterator[Database]:
    postgres = request.param == "postgresql"
    table = make_table(postgres)
    if postgres:
        url = driver_url(server_url(), "psycopg")
        schema = schema_name()
        admin = create_engine(url, poolclass=NullPool)
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        engine = create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
        table.metadata.create_all(engine)
        yield Database(True, engine, table)
        engine.dispose()
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()
        return
    with tempfile.TemporaryDirectory(prefix="sitemap-checksums-", dir=MEMORY) as folder:
        engine = create_engine(f"sqlite:///{folder}/items.sqlite3")
        table.metadata.create_all(engine)
        yield Database(False, engine, table)
        engine.dispose()


@st.composite
def tables(draw: st.DrawFn, postgres: bool) -> list[tuple[Any, ...]]:
    keys = draw(st.lists(st.integers(0, 11), unique=True, min_size=1, max_size=8))
    lastmods = PG_LASTMODS if postgres else SQLITE_LASTMODS
    row = st.tuples(TEXTS, lastmods, TEXTS, TEXTS)
    return [(key, *draw(row)) for key in keys]


def recounted(source: SQLAlchemySource, page_size: int) -> dict[int, Page]:
    return {page.index: page for page in source.pages(page_size, AsOf(UTC, LISTED_UNTIL))}


def checksum_of(source: SQLAlchemySource, page: int, page_size: int) -> tuple[int, str | None]:
    summary = source.summarize(page_keys(page + 1, page_size), AsOf(UTC, LISTED_UNTIL))
    return summary.count or 0, summary.checksum


PROPERTY = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(data=st.data(), page_size=st.integers(2, 5))
def test_a_pages_summary_and_a_recount_agree(database: Database, data: Any, page_size: int) -> None:
    """Same data, same checksum, whichever statement read it (the page's own, or the
    recount's GROUP BY): the tokens of pages kept current and of pages read exactly meet."""
    database.fill(data.draw(tables(database.postgres)))
    source = database.source()
    pages = recounted(source, page_size)
    assert pages
    for index, page in pages.items():
        assert checksum_of(source, index, page_size) == (page.count, page.checksum)


@PROPERTY
@given(data=st.data(), page_size=st.integers(2, 5))
def test_an_edit_of_a_served_value_moves_the_checksum(
    database: Database, data: Any, page_size: int
) -> None:
    """A new slug or image, a lastmod a microsecond (PostgreSQL) or a millisecond apart
    (SQLite's text) changes the page's checksum; a column shown nowhere does not."""
    rows = data.draw(tables(database.postgres))
    database.fill(rows)
    source = database.source()
    key, slug, lastmod, img, note = data.draw(st.sampled_from(rows))
    before = recounted(source, page_size)[key // page_size]
    column = data.draw(st.sampled_from(["slug", "updated", "img", "note"]))
    if column == "updated":
        if isinstance(lastmod, datetime):
            step = timedelta(microseconds=1) if database.postgres else timedelta(milliseconds=1)
            moved = lastmod + step
            value: Any = moved if database.postgres else moved.isoformat(sep=" ")
        else:
            value = "2024-05-01 12:00:00.001" if lastmod != "2024-05-01 12:00:00.001" else None
    else:
        old = {"slug": slug, "img": img, "note": note}[column]
        value = data.draw(TEXTS.filter(lambda v: v != old))
    database.edit(key, **{column: value})
    after = recounted(source, page_size)[key // page_size]
    if column == "note":
        assert after.checksum == before.checksum
    else:
        assert after.checksum != before.checksum, (column, value)
    assert checksum_of(source, key // page_size, page_size) == (after.count, after.checksum)
