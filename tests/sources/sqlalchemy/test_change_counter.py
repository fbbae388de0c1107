"""ChangeCounter: revisions kept by triggers give every page an O(1) version.

Against real SQLite databases and PostgreSQL (the server of ``tests/postgres.py``,
each test in a schema of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    create_mock_engine,
    delete,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware import AsyncSQLAlchemySource, Limits, SitemapApp, SQLAlchemySource
from sitemap_middleware.sources.base import KeyRange
from sitemap_middleware.sources.sqlalchemy.change_counter import ChangeCounter, revisions

from ...adapters import call
from ...postgres import driver_url, schema_name, server_url
from ...support import statements

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"

metadata = MetaData()
authors = Table(
    "authors", metadata, Column("id", Integer, primary_key=True), Column("name", String)
)
posts = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("author_id", Integer, ForeignKey("authors.id")),
)
PAGE_SIZE = 100  # rows per page (max_urls below), a multiple of the counter's granularity


def seed_authors_and_posts(engine: Engine, rows: int = 350) -> None:
    metadata.drop_all(engine)
    with engine.begin() as conn:
        if revisions.name in inspect(conn).get_table_names():
            revisions.drop(conn)
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(authors), [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}])
        conn.execute(
            insert(posts),
            [{"id": i, "slug": f"post-{i}", "author_id": 1 + i % 2} for i in range(1, rows + 1)],
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "postgresql":
        yield from postgresql_engine()
        return
    engine = create_engine(f"sqlite:///{tmp_path / 'posts.sqlite3'}")
    seed_authors_and_posts(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_engine() -> Iterator[Engine]:
    yield from postgresql_engine()


def postgresql_engine() -> Iterator[Engine]:
    """An engine whose tables, triggers and revisions live in a schema of its own."""
    url = driver_url(server_url(), "psycopg")
    schema = schema_name()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    seed_authors_and_posts(engine)
    yield engine
    engine.dispose()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def counted(engine: Engine) -> ChangeCounter:
    counter = ChangeCounter(posts, also=[authors], granularity=50)
    with engine.begin() as conn:
        counter.install(conn)
        counter.install(conn)  # idempotent
    return counter


def app_for(engine: Engine, counter: ChangeCounter | None) -> SitemapApp:
    source = SQLAlchemySource(
        select(posts.c.id, posts.c.slug),
        engine,
        name="posts",
        loc="/posts/{slug}",
        version=counter,
    )
    return SitemapApp(
        sources=[source], base_url=BASE, limits=Limits(max_urls=PAGE_SIZE), index="always"
    )


async def page_tags(app: SitemapApp) -> list[str]:
    return [
        (await call(app, "HEAD", f"/sitemap-posts-{n}.xml")).headers["etag"] for n in (1, 2, 3, 4)
    ]


def change(engine: Engine, *statements: Any) -> None:
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(statement)


async def test_each_change_moves_the_tag_of_its_own_page_only(engine: Engine) -> None:
    app = app_for(engine, counted(engine))
    before = await page_tags(app)
    assert len(set(before)) == 4 and await page_tags(app) == before
    # An edit of a column no aggregate sees (the slug: no lastmod here) on page 2.
    change(engine, update(posts).where(posts.c.id == 150).values(slug="renamed"))
    edited = await page_tags(app)
    assert edited[1] != before[1] and edited[:1] + edited[2:] == before[:1] + before[2:]
    change(engine, delete(posts).where(posts.c.id == 20))  # page 1
    deleted = await page_tags(app)
    assert deleted[0] != edited[0] and deleted[1:] == edited[1:]
    change(engine, insert(posts).values(id=399, slug="new", author_id=1))  # page 4
    inserted = await page_tags(app)
    assert inserted[3] != deleted[3] and inserted[:3] == deleted[:3]
    change(engine, update(posts).where(posts.c.id == 210).values(id=20))  # page 3 -> 1
    moved = await page_tags(app)
    assert moved[0] != inserted[0] and moved[2] != inserted[2]
    assert moved[1] == inserted[1] and moved[3] == inserted[3]
    # An author's change may touch any page: every tag moves.
    change(engine, update(authors).where(authors.c.id == 2).values(name="rob"))
    assert all(a != b for a, b in zip(await page_tags(app), moved, strict=True))
    # Another replica agrees on every tag.
    assert await page_tags(app_for(engine, ChangeCounter(posts, also=[authors], granularity=50)))


async def test_a_page_304_reads_the_version_alone(engine: Engine) -> None:
    app = app_for(engine, counted(engine))
    page = await call(app, path="/sitemap-posts-3.xml")
    assert page.status == 200
    seen = statements(engine)
    cached = await call(
        app, path="/sitemap-posts-3.xml", headers={"if-none-match": page.headers["etag"]}
    )
    assert cached.status == 304
    assert len(seen) == 1 and "sitemap_revisions" in seen[0]
    change(engine, update(posts).where(posts.c.id == 250).values(slug="changed"))
    seen.clear()
    stale = await call(
        app, path="/sitemap-posts-3.xml", headers={"if-none-match": page.headers["etag"]}
    )
    assert stale.status == 200 and b"/posts/changed<" in stale.body
    assert len(seen) == 3  # the version, the page's aggregates once, its rows


async def test_the_version_sums_the_groups_of_a_key_range(engine: Engine) -> None:
    counter = counted(engine)
    with engine.begin() as conn:
        conn.execute(update(posts).where(posts.c.id.in_([10, 60, 61])).values(slug="x"))
        conn.execute(update(authors).values(name="all"))

        def version(after: int | None, until: int | None) -> Any:
            keys = KeyRange(
                None if after is None else (after,), None if until is None else (until,)
            )
            return conn.scalar(counter.statement(keys), counter.parameters(keys))

        # Rows 0..49 are group 0, 50..99 group 1; two authors updated: the shared group.
        assert version(-1, 49) == 1 + 2
        assert version(49, 99) == 2 + 2
        assert version(None, None) == 3 + 2
    with engine.begin() as conn:
        counter.uninstall(conn)
        assert conn.scalar(select(revisions.c.revision).limit(1)) is None
    change(engine, update(posts).values(slug="untracked"))
    with engine.begin() as conn:
        assert conn.scalar(select(revisions.c.revision).limit(1)) is None


async def test_async_engines_install_and_read_it(tmp_path: Path) -> None:
    path = tmp_path / "posts.sqlite3"
    sync_engine = create_engine(f"sqlite:///{path}")
    seed_authors_and_posts(sync_engine)
    sync_engine.dispose()
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    counter = ChangeCounter(posts, granularity=PAGE_SIZE)
    async with engine.begin() as conn:
        await conn.run_sync(counter.install)
    source = AsyncSQLAlchemySource(
        select(posts.c.id, posts.c.slug), engine, name="posts", loc="/posts/{slug}", version=counter
    )
    app = SitemapApp(
        sources=[source], base_url=BASE, limits=Limits(max_urls=PAGE_SIZE), index="always"
    )
    first = await page_tags(app)
    async with engine.begin() as conn:
        await conn.execute(update(posts).where(posts.c.id == 330).values(slug="later"))
    second = await page_tags(app)
    assert second[:3] == first[:3] and second[3] != first[3]
    await engine.dispose()


def test_misconfiguration_is_named() -> None:
    with pytest.raises(TypeError, match="Table"):
        ChangeCounter("posts")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no column 'nope'"):
        ChangeCounter(posts, key="nope")
    with pytest.raises(ValueError, match="integer"):
        ChangeCounter(posts, key="slug")
    with pytest.raises(ValueError, match="name"):
        ChangeCounter(posts, name="Bad-Name")
    with pytest.raises(ValueError, match="granularity"):
        ChangeCounter(posts, granularity=0)
    pair = Table(
        "pair",
        MetaData(),
        Column("a", Integer, primary_key=True),
        Column("b", Integer, primary_key=True),
    )
    with pytest.raises(ValueError, match="key="):
        ChangeCounter(pair)


def test_other_dialects_are_refused_with_the_alternative(tmp_path: Path) -> None:
    counter = ChangeCounter(posts)
    # No MySQL server here: SQLAlchemy's mock engine shows what install() would send it.
    sent: list[str] = []
    mysql = create_mock_engine("mysql://", lambda sql, *a, **k: sent.append(str(sql)))
    with pytest.raises(NotImplementedError, match="version= select"):
        counter.install(mysql)  # type: ignore[arg-type]
    assert not any("TRIGGER" in statement for statement in sent)
    engine = create_engine(f"sqlite:///{tmp_path / 'triggers.sqlite3'}")
    seed_authors_and_posts(engine)
    ran = statements(engine)
    with engine.begin() as conn:
        counter.install(conn)
    assert any(statement.startswith("CREATE TRIGGER") for statement in ran)
    engine.dispose()


async def test_writers_with_another_search_path_still_count(pg_engine: Engine) -> None:
    """PostgreSQL: the triggers name the revisions table with its schema."""
    engine = pg_engine
    counter = counted(engine)
    app = app_for(engine, counter)
    before = await page_tags(app)
    with engine.begin() as conn:
        own = conn.exec_driver_sql("SELECT current_schema()").scalar()
        conn.exec_driver_sql("SET LOCAL search_path TO public")
        conn.exec_driver_sql(f"UPDATE \"{own}\".posts SET slug = 'elsewhere' WHERE id = 120")
    after = await page_tags(app)
    assert after[1] != before[1] and after[0] == before[0] and after[2:] == before[2:]
