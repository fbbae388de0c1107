"""The default freshness: pages kept current between recounts (live_pages.py).

What must hold: requests read no whole-table aggregate once the pages are known
(the first index reads them); a refresh finds edits and inserts from the rows
whose lastmod moved, a recount finds everything else (deletes, edits that keep
the lastmod); the pages kept current equal a recount of the same data, so
replicas and a restarted process give the same validators; a failing refresh
leaves the last pages served.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, delete, insert, select, text, update
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    ConfigurationError,
    Freshness,
    Limits,
    SitemapApp,
    SitemapWSGIApp,
)
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.core.effects import Effect, InBackground, ReadChanged, ReadPages, Summarize
from sitemap_middleware.core.handler import run_effects
from sitemap_middleware.sources.base import SyncSource, page_keys
from sitemap_middleware.state.current_pages import CountedPages, CurrentPages, keep_current

from ..adapters import call
from ..clock import Clock, drive
from ..sources.sqlalchemy.test_postgres import Db, admin, db, pg_url  # noqa: F401 (fixtures)
from ..support import (
    BASE_TIME,
    article_source,
    articles,
    assert_valid_index,
    dispose,
    now_naive,
    seed,
    statements,
)

pytestmark = pytest.mark.anyio

BASE = "https://example.com"
PAGE = 100  # rows per page (max_urls): keys 1 to 1,200 make 13 pages


async def etag(app: Any, path: str = "/sitemap.xml") -> str:
    response = await call(app, path=path)
    assert response.status == 200, (path, response.status)
    return response.headers["etag"]


async def eventually(probe: Callable[[], Awaitable[bool]], seconds: float = 10.0) -> None:
    """Until ``probe()`` holds (the refresh runs in the background)."""
    deadline = time.monotonic() + seconds
    while not await probe():
        assert time.monotonic() < deadline, "the pages were not kept current in time"
        await _sleep(0.05)


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


async def recount(app: Any) -> None:
    if isinstance(app, SitemapWSGIApp) or getattr(app, "wsgi", False):  # Django's: see driver
        import anyio.to_thread

        await anyio.to_thread.run_sync(app.recount)
    else:
        await app.recount()


async def test_requests_read_no_aggregate_once_pages_are_known(
    make_app: Any, engine: Engine
) -> None:
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(exact_rows=0),
    )
    seen = statements(engine)
    first = await call(app)
    assert len(assert_valid_index(first.body)) == 13
    assert seen, "the first index reads the pages"
    seen.clear()
    again = await call(app, headers={"if-none-match": first.headers["etag"]})
    page = await call(app, path="/sitemap-articles-3.xml")
    page_304 = await call(
        app, path="/sitemap-articles-3.xml", headers={"if-none-match": page.headers["etag"]}
    )
    assert (again.status, page.status, page_304.status) == (304, 200, 304)
    # The page's 200 reads its own aggregates (its validators are those of the rows it
    # streams), then streams its rows; the 304s read nothing.
    assert len(seen) == 2 and "ORDER BY articles.id" in seen[1], seen
    assert "GROUP BY" not in seen[0] and "ORDER BY" not in seen[0], seen


def refreshing_app(make_app: Any, engine: Engine) -> Any:
    """An app that refreshes on every request and never recounts by itself.

    Its intervals are counted on a clock that stands still: a refresh's interval is never
    stretched by the time its reads took (50 times it: seconds, on a loaded machine)."""
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(refresh_interval=0, recount_interval=3600, exact_rows=0),
    )
    return drive(app, Clock())


async def test_edits_and_inserts_show_after_a_refresh(make_app: Any, engine: Engine) -> None:
    app = refreshing_app(make_app, engine)
    index = await etag(app)
    pages = {n: await etag(app, f"/sitemap-articles-{n}.xml") for n in (1, 2, 12)}
    with engine.begin() as conn:  # page 1's row 5 edited now
        conn.execute(update(articles).where(articles.c.id == 5).values(updated_at=now_naive()))

    async def index_moved() -> bool:
        return await etag(app) != index

    await eventually(index_moved)
    assert await etag(app, "/sitemap-articles-1.xml") != pages[1]
    assert await etag(app, "/sitemap-articles-2.xml") == pages[2]
    with engine.begin() as conn:  # a new row on a new page (14)
        conn.execute(insert(articles).values(id=1350, slug="new", updated_at=now_naive()))

    async def page_14_listed() -> bool:
        listed = assert_valid_index((await call(app)).body)
        return any(loc.endswith("/sitemap-articles-14.xml") for loc, _ in listed)

    await eventually(page_14_listed)
    assert await etag(app, "/sitemap-articles-12.xml") == pages[12]


async def test_deletes_and_lastmod_keeping_edits_show_after_a_recount(
    make_app: Any, engine: Engine
) -> None:
    app = refreshing_app(make_app, engine)
    index = await etag(app)
    pages = [await etag(app, f"/sitemap-articles-{n}.xml") for n in (2, 3)]
    with engine.begin() as conn:
        conn.execute(delete(articles).where(articles.c.id == 150))
        older = BASE_TIME - timedelta(days=1)  # a lastmod moved back
        conn.execute(update(articles).where(articles.c.id == 260).values(updated_at=older))
    for _ in range(5):  # refreshes run, and cannot see either
        await _sleep(0.05)
        assert await etag(app) == index
    # A page's 200 streams its rows as they are: its validators are theirs, at once.
    moved = [await etag(app, f"/sitemap-articles-{n}.xml") for n in (2, 3)]
    assert moved[0] != pages[0] and moved[1] != pages[1]
    await recount(app)
    assert await etag(app) != index
    after = [await etag(app, f"/sitemap-articles-{n}.xml") for n in (2, 3)]
    assert after == moved  # the recount's tokens are those the pages read exactly


async def test_a_fresh_process_gives_the_same_validators(make_app: Any, engine: Engine) -> None:
    """Replicas agree: the kept pages' tokens equal those of a recount and of a page read
    before the first index."""
    settings = {
        "base_url": BASE,
        "limits": Limits(max_urls=PAGE),
        "freshness": Freshness(refresh_interval=0, exact_rows=0),
    }
    old = drive(
        make_app(
            sources=[article_source(engine)],
            **{
                **settings,
                "freshness": Freshness(refresh_interval=0, exact_rows=0, recount_interval=3600),
            },
        ),
        Clock(),
    )
    await etag(old)
    with engine.begin() as conn:
        for key in (5, 250, 1199):
            stmt = update(articles).where(articles.c.id == key).values(updated_at=now_naive())
            conn.execute(stmt)
        conn.execute(insert(articles).values(id=1210, slug="added", updated_at=now_naive()))
    fresh = make_app(sources=[article_source(engine)], **settings)
    page_first = await etag(fresh, "/sitemap-articles-3.xml")  # before any index: read exactly
    want = await etag(fresh)

    async def agrees() -> bool:
        return await etag(old) == want

    await eventually(agrees)
    for n in (1, 3, 12, 13):
        path = f"/sitemap-articles-{n}.xml"
        assert await etag(old, path) == await etag(fresh, path), path
    assert page_first == await etag(fresh, "/sitemap-articles-3.xml")


async def test_a_failing_refresh_keeps_the_pages_last_known(
    make_app: Any, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(exact_rows=0),
    )
    clock = Clock()
    drive(app, clock)
    first = await call(app)
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE articles RENAME TO gone"))
    clock.advance(1.5)  # a refresh is due, within its bound: it runs in the background
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        again = await call(app)
        await eventually(_logged(caplog, "keeping its pages current failed"))
    assert (again.status, again.body) == (200, first.body)
    page = await call(app, path="/sitemap-articles-1.xml")
    assert page.status == 503  # its rows cannot be read: never an empty or partial page
    clock.advance(3600)  # past the bound: the old pages are no answer
    assert (await call(app)).status == 503


def _logged(caplog: pytest.LogCaptureFixture, words: str) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return any(words in record.getMessage() for record in caplog.records)

    return probe


async def test_an_async_source_is_kept_current(db_path: Path, engine: Engine) -> None:
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")
    source = AsyncSQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        async_engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
    )
    app = SitemapApp(
        sources=[source],
        base_url=BASE,
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(refresh_interval=0, exact_rows=0),
    )
    drive(app, Clock())  # see refreshing_app
    try:
        index = await etag(app)
        with engine.begin() as conn:
            conn.execute(update(articles).where(articles.c.id == 7).values(updated_at=now_naive()))

        async def moved() -> bool:
            return await etag(app) != index

        await eventually(moved)
        await app.recount()
    finally:
        await async_engine.dispose()


async def test_a_key_below_zero_is_served_exactly(make_app: Any, engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(insert(articles).values(id=-3, slug="minus", updated_at=now_naive()))
    app = make_app(sources=[article_source(engine)], base_url=BASE, limits=Limits(max_urls=PAGE))
    listed = assert_valid_index((await call(app)).body)
    assert len(listed) == 13  # cut pages: 1,201 rows
    page = await call(app, path="/sitemap-articles-1.xml")
    assert page.status == 200 and b"/articles/minus" in page.body


@pytest.mark.parametrize(
    ("setting", "value"),
    [("mode", "sometimes"), ("refresh_interval", -1), ("recount_interval", "often")],
)
def test_misconfigured_freshness_names_the_setting(setting: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=rf"^freshness\.{setting}: "):
        SitemapApp(sources=[], base_url=BASE, freshness={setting: value})  # type: ignore[typeddict-item]


# -- the property: pages kept current equal a recount of the same data ----------------------

Step = tuple[str, int, int]  # (what, key, seconds from now)
steps = st.lists(
    st.tuples(
        st.sampled_from(["insert", "edit", "edit", "future"]),
        st.integers(0, 640),
        st.integers(-30, 0),
    ),
    min_size=1,
    max_size=12,
)


def _refresh(app: SitemapWSGIApp, live: CurrentPages) -> None:
    """Run a refresh (not a recount) now, in this thread."""
    live.refreshed_at = float("-inf")
    assert live.claim(time.monotonic())
    settings = app.sitemap.settings
    now = datetime.now(UTC)
    run_effects(
        keep_current(
            live, now, AsOf.at(now, settings.lastmods.naive_timezone, settings.lastmods.tolerance)
        ),
        read,
    )


def read(effect: Effect) -> Any:
    """Perform one read of the pages kept current, in this thread, through the source."""
    assert not isinstance(effect, InBackground)
    if isinstance(effect, Summarize):
        parts = [(source, keys) for source, keys in effect.parts]
        assert all(isinstance(source, SyncSource) for source, _ in parts)
        return [s.summarize(k, effect.as_of) for s, k in parts]  # type: ignore[union-attr]
    source = effect.source
    assert isinstance(source, SyncSource)
    if isinstance(effect, ReadChanged):
        return source.changed(effect.since, effect.as_of, effect.limit)
    return source.pages(effect.page_size, effect.as_of)


def _recounted(app: SitemapWSGIApp, live: CurrentPages) -> CountedPages:
    settings = app.sitemap.settings
    now = datetime.now(UTC)
    listed_until = now.replace(microsecond=0) + timedelta(seconds=settings.lastmods.tolerance)
    source = live.source
    assert isinstance(source, SyncSource)
    pages = source.pages(live.page_size, AsOf(settings.lastmods.naive_timezone, listed_until))
    return CountedPages.of({page.index: page for page in pages}, listed_until)


@given(history=steps)
@hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_refreshed_pages_equal_a_recount(tmp_path: Path, history: list[Step]) -> None:
    path = tmp_path / "history.sqlite3"
    path.unlink(missing_ok=True)
    engine = create_engine(f"sqlite:///{path}")
    seed(engine, 500)
    app = SitemapWSGIApp(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=64),
        freshness=Freshness(refresh_interval=3600),
    )
    try:
        live = app.sitemap.current_pages["articles"]
        app.recount()
        for what, key, offset in history:
            moment = now_naive() + timedelta(seconds=offset)
            with engine.begin() as conn:
                if what == "insert":
                    conn.execute(delete(articles).where(articles.c.id == key + 1000))
                    row = {"id": key + 1000, "slug": f"n-{key}", "updated_at": moment}
                    conn.execute(insert(articles).values(**row))
                elif what == "future":  # served once the clock reaches it: not yet
                    stmt = update(articles).where(articles.c.id == key)
                    conn.execute(stmt.values(updated_at=moment + timedelta(days=1)))
                else:
                    stmt = update(articles).where(articles.c.id == key)
                    conn.execute(stmt.values(updated_at=moment, slug=f"e-{key}-{offset}"))
            if what == "future":
                # A lastmod moved past ``listed_until`` leaves the range a refresh reads: the
                # row's old lastmod is no longer served, and only a recount sees that.
                app.recount()
            else:
                _refresh(app, live)
            assert live.known is not None
            want = _recounted(app, live)
            assert live.known.pages == want.pages
            assert live.known.whole.token == want.whole.token
    finally:
        app.close()
        dispose(engine)


# -- PostgreSQL ---------------------------------------------------------------------------


async def test_postgres_kept_pages_equal_a_recount(db: Db) -> None:  # noqa: F811
    db.seed(range(1, 2001))
    app = db.app(
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(refresh_interval=0, recount_interval=3600, exact_rows=0),
    )
    index = await etag(app)
    live = app.sitemap.current_pages["articles"]
    stamp = datetime.now(UTC).replace(tzinfo=None)
    db.write(
        update(db.table).where(db.table.c.id.in_([3, 777, 1999])).values(updated_at=stamp),
        insert(db.table).values(id=2050, slug="new", updated_at=stamp),
    )

    async def moved() -> bool:
        known = live.known
        return await etag(app) != index and known is not None and 20 in known.pages

    await eventually(moved)
    refreshed = live.known
    assert refreshed is not None
    await app.recount()
    assert live.known is not None and live.known.pages == refreshed.pages
    # A page read exactly (a fresh process, before its first index) gets the same token.
    fresh = db.app(limits=Limits(max_urls=PAGE), freshness=Freshness(exact_rows=0))
    for page in (1, 8, 21):
        path = f"/sitemap-articles-{page}.xml"
        assert await etag(fresh, path) == await etag(app, path), path
    assert page_keys(21, PAGE).after == (1999,)
    # No refresh or recount left running when the engine is disposed.
    kept = [live, fresh.sitemap.current_pages["articles"]]
    for each in kept:
        each.refresh_interval = each.recount_interval = 3600

    async def idle() -> bool:
        return not any(each.running for each in kept)

    await eventually(idle)


async def test_the_first_index_while_a_recount_runs_lists_every_page(
    make_app: Any, engine: Engine
) -> None:
    """A page request started the first recount in the background; an index arriving before
    it ends reads the pages itself and lists them all. The recount that started first and
    ends last does not move the pages back."""
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=PAGE),
        freshness=Freshness(exact_rows=0),
    )
    live = app.sitemap.current_pages["articles"]
    clock = Clock()
    drive(app, clock)
    assert live.claim(clock())  # as the background recount holds it
    early = app.sitemap.keep_current(live)
    assert isinstance(next(early), ReadChanged)  # it started, and is slow
    effect = early.send([])
    assert isinstance(effect, ReadPages)
    before = read(effect)  # its pages: those of the 1,200 rows
    clock.advance(0.5)
    with engine.begin() as conn:
        conn.execute(delete(articles).where(articles.c.id > 1100))
    response = await call(app)
    assert response.status == 200 and len(assert_valid_index(response.body)) == 12
    kept = live.known
    assert kept is not None and len(kept.pages) == 12
    with pytest.raises(StopIteration):
        early.send(before)  # it ends last, with older pages: they are not kept
    assert live.known is kept and not live.running
    assert len(assert_valid_index((await call(app)).body)) == 12


async def test_a_cut_source_is_read_whole_once(make_app: Any, engine: Engine) -> None:
    """The first index finds the keys below 0 and the source is served exactly from then on:
    later indexes do not read every page again."""
    with engine.begin() as conn:
        conn.execute(insert(articles).values(id=-3, slug="minus", updated_at=now_naive()))
    app = make_app(sources=[article_source(engine)], base_url=BASE, limits=Limits(max_urls=PAGE))
    first = await call(app)
    seen = statements(engine)
    again = await call(app, headers={"if-none-match": first.headers["etag"]})
    assert again.status == 304
    assert not any("GROUP BY" in statement for statement in seen), seen


class _Source:
    """What the intervals look at: whether a refresh could read moved rows."""

    def __init__(self, tracks_changes: bool) -> None:
        self.tracks_changes = tracks_changes


def test_a_source_without_lastmods_is_recounted_at_its_own_pace() -> None:
    live = CurrentPages(_Source(False), 100, refresh_interval=1.0, recount_interval=None)  # type: ignore[arg-type]
    live.recounted_at = live.refreshed_at = 0.0
    live.recount_cost = 4.0  # a recount that takes 4 s runs every 200 s, not every second
    assert not live.due(2.0) and not live.due(199.0) and live.due(200.0)
    tracked = CurrentPages(_Source(True), 100, refresh_interval=1.0, recount_interval=None)  # type: ignore[arg-type]
    tracked.recounted_at = tracked.refreshed_at = 0.0
    tracked.recount_cost = 4.0
    assert tracked.due(1.0) and not tracked.recount_due(199.0)  # its refreshes run


def test_a_failed_job_is_not_retried_at_once() -> None:
    live = CurrentPages(_Source(True), 100, refresh_interval=1.0, recount_interval=None)  # type: ignore[arg-type]
    live.retry_at = 10.0
    assert not live.due(9.9) and live.due(10.0)
