"""Freshness bounded in time, whatever the traffic (the default ``freshness``).

A crawler that polls alone is the case that matters: a change committed at *t* shows in
every answer to a request that arrives after *t + R* (an edit that moves the lastmod to
now, an insert) or *t + C* (a delete, a lastmod kept or moved back), the first request
after an hour of silence included; and no answer ever pairs new bytes with old validators.
The clock the intervals are counted on is driven by the test (:mod:`tests.clock`): an hour
of silence takes no time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import Engine, Table, create_engine, delete, insert, update
from sqlalchemy.ext.asyncio import AsyncEngine

from sitemap_middleware import Freshness, Limits, SitemapWSGIApp

from ..adapters import Exchange, call, call_wsgi, sitemap_app
from ..clock import Clock, drive, settled
from ..sources.sqlalchemy.test_postgres import Db, admin, db, pg_url  # noqa: F401 (fixtures)
from ..support import BASE_TIME, article_source, articles, dispose, now_naive, seed

pytestmark = pytest.mark.anyio

BASE = "https://example.com"
PAGE = 100  # rows per page: keys 1 to 1,200 make 13 pages
REFRESH = 1.0
RECOUNT = 600.0
R = 2 * REFRESH  # the refresh bound (a refresh's own duration is 0 on the test's clock)
C = 2 * RECOUNT  # the recount bound
SETTINGS = {
    "base_url": BASE,
    "limits": Limits(max_urls=PAGE),
    "freshness": Freshness(refresh_interval=REFRESH),
}
INDEX = "/sitemap.xml"


def page(n: int) -> str:
    return f"/sitemap-articles-{n}.xml"


@dataclass
class Poller:
    """A crawler polling alone: it revalidates with the last ``ETag`` of each document, and
    remembers the bytes of every ``(document, ETag)`` it was sent."""

    app: Any
    tags: dict[str, str] = field(default_factory=dict)
    sent: dict[tuple[str, str], bytes] = field(default_factory=dict)

    def seen(self, path: str, response: Exchange, conditional: bool) -> None:
        assert response.status in (200, 304), (path, response.status)
        tag = response.headers["etag"]
        if response.status == 304:
            assert conditional and tag == self.tags[path]
        else:
            # New bytes under validators already sent with other bytes: never. (Last-Modified
            # is the newest lastmod, or the Date when that is later: it moves with the clock.)
            assert self.sent.setdefault((path, tag), response.body) == response.body, path
        self.tags[path] = tag

    async def get(self, path: str, conditional: bool = True) -> Exchange:
        headers = {"if-none-match": self.tags[path]} if conditional and path in self.tags else {}
        response = await call(self.app, path=path, headers=headers)
        self.seen(path, response, bool(headers))
        return response


async def shows_now(poller: Poller, fresh: Any, paths: list[str]) -> None:
    """Each document as a process started now serves it (a recount of the data as it is):
    first to the poller's conditional request, then to an unconditional ``GET``."""
    for path in paths:
        want = await call(fresh, path=path)
        assert want.status == 200, path
        revalidated = await poller.get(path)
        assert revalidated.headers["etag"] == want.headers["etag"], path
        again = await poller.get(path, conditional=False)
        assert again.status == 200
        assert (again.headers["etag"], again.body) == (want.headers["etag"], want.body), path


Write = Callable[..., None]


async def lone_poller(
    make: Callable[..., Any], write: Write, table: Table, exact_rows: int | None
) -> None:
    """The scenario, for a small source (read on every request: ``exact_rows`` at its
    default) or a big one (``exact_rows=0``)."""
    clock = Clock()
    size = {} if exact_rows is None else {"exact_rows": exact_rows}
    recounted = Freshness(refresh_interval=REFRESH, recount_interval=RECOUNT, **size)
    poller = Poller(drive(make(freshness=recounted), clock))
    watched = [INDEX, page(1), page(2), page(3), page(12), page(13)]
    for path in watched:
        await poller.get(path)
    cheap = exact_rows is None
    r_wait, c_wait = (0.0, 0.0) if cheap else (R + 0.5, 3_600.0)

    def fresh() -> Any:
        return make(freshness=Freshness(refresh_interval=REFRESH, **size))

    # An edit that moves the lastmod to now: seen after R, by the first request after it.
    write(update(table).where(table.c.id == 5).values(updated_at=now_naive(), slug="e-5"))
    await poller.get(page(1))  # within R: may be the old page, never new bytes under old tags
    await poller.get(page(1), conditional=False)
    clock.advance(r_wait)
    await shows_now(poller, fresh(), [INDEX, page(1)])
    # An insert (on page 13).
    write(insert(table).values(id=1250, slug="n-1250", updated_at=now_naive()))
    clock.advance(r_wait)
    await shows_now(poller, fresh(), [INDEX, page(13)])
    # A delete and a lastmod moved back: seen after C (an hour of silence).
    older = BASE_TIME - timedelta(days=1)
    write(delete(table).where(table.c.id == 150))
    write(update(table).where(table.c.id == 260).values(updated_at=older))
    clock.advance(R + 0.5)
    for path in (INDEX, page(2), page(3)):  # refreshes cannot see them: anything consistent
        await poller.get(path)
        await poller.get(path, conditional=False)
    clock.advance(c_wait)
    await shows_now(poller, fresh(), [INDEX, page(2), page(3)])
    # A delete the page finds first, after an hour of silence.
    write(delete(table).where(table.c.id == 1100))
    clock.advance(c_wait)
    await shows_now(poller, fresh(), [page(12), INDEX])


@pytest.mark.parametrize("exact_rows", [0, None], ids=["big", "small"])
async def test_a_lone_poller_sees_every_change_within_its_bound(
    make_app: Any, engine: Engine, exact_rows: int | None
) -> None:
    def make(**settings: Any) -> Any:
        return make_app(sources=[article_source(engine)], **{**SETTINGS, **settings})

    def write(*statements: Any) -> None:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(statement)

    await lone_poller(make, write, articles, exact_rows)


@pytest.mark.parametrize("adapter", ["asgi", "wsgi"])
@pytest.mark.parametrize("exact_rows", [0, None], ids=["big", "small"])
async def test_a_lone_poller_on_postgres(db: Db, adapter: str, exact_rows: int | None) -> None:  # noqa: F811
    if adapter == "wsgi" and isinstance(db.engine, AsyncEngine):
        pytest.skip("an AsyncEngine's connections live on the event loop of the app serving it")
    db.seed(range(1, 1201))
    made: list[Any] = []

    def make(**settings: Any) -> Any:
        made.append(sitemap_app(adapter, sources=[db.source()], **{**SETTINGS, **settings}))
        return made[-1]

    try:
        await lone_poller(make, db.write, db.table, exact_rows)
    finally:
        for app in made:
            await settled(app)  # a job in the background holds a connection until it ends
            if hasattr(app, "close"):
                app.close()


# -- the property: random histories of writes, silences and requests ----------------------

Action = tuple[str, int]
actions = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["edit", "insert", "delete", "back"]), st.integers(1, 640)),
        st.tuples(st.just("wait"), st.sampled_from([0, 1, 2, 3, 700, 1_300, 3_600])),
        st.tuples(st.sampled_from(["get", "revalidate", "poll"]), st.integers(0, 8)),
    ),
    min_size=1,
    max_size=24,
)


@given(history=actions, exact_rows=st.sampled_from([0, None]))
@hypothesis_settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_histories_keep_the_bounds(
    tmp_path: Path, history: list[Action], exact_rows: int | None
) -> None:
    """At every request: an ``ETag`` once sent with some bytes is never sent with others;
    and once every write is older than its bound (R for edits to now and inserts, C for
    the rest), each document is the one a process started now serves."""
    path = tmp_path / "history.sqlite3"
    path.unlink(missing_ok=True)
    engine = create_engine(f"sqlite:///{path}")
    seed(engine, 640)
    size = {} if exact_rows is None else {"exact_rows": exact_rows}
    settings = {
        **SETTINGS,
        "freshness": Freshness(refresh_interval=REFRESH, recount_interval=RECOUNT, **size),
    }
    clock = Clock()
    apps = [SitemapWSGIApp(sources=[article_source(engine)], **settings)]
    drive(apps[0], clock)
    poller = Poller(apps[0])
    writes: list[tuple[float, float]] = []  # (clock, its bound) of each write
    try:
        for what, number in history:
            if what == "wait":
                clock.advance(number)
                continue
            if what in ("get", "revalidate", "poll"):
                if what == "poll":  # a crawler back after an hour
                    clock.advance(3_600)
                target = INDEX if number == 0 else page(number)
                conditional = what != "get" and target in poller.tags
                headers = {"if-none-match": poller.tags[target]} if conditional else {}
                response = call_wsgi(apps[0], path=target, headers=headers)
                if response.status == 404:  # a page past the data
                    continue
                poller.seen(target, response, conditional)
                bound = 0.0 if exact_rows is None else max((b for _, b in writes), default=0.0)
                if all(clock.now - at > b for at, b in writes) or not bound:
                    apps.append(SitemapWSGIApp(sources=[article_source(engine)], **settings))
                    want = call_wsgi(apps[-1], path=target)
                    assert response.headers["etag"] == want.headers["etag"], target
                    if response.status == 200:
                        assert response.body == want.body
                continue
            with engine.begin() as conn:
                key = number
                if what == "edit":
                    stmt = update(articles).where(articles.c.id == key)
                    conn.execute(stmt.values(updated_at=now_naive(), slug=f"e-{key}"))
                elif what == "insert":
                    row = {"id": key + 1000, "slug": f"n-{key}", "updated_at": now_naive()}
                    conn.execute(delete(articles).where(articles.c.id == key + 1000))
                    conn.execute(insert(articles).values(**row))
                elif what == "delete":
                    conn.execute(delete(articles).where(articles.c.id == key))
                else:
                    older = BASE_TIME - timedelta(days=2, seconds=key)
                    conn.execute(
                        update(articles).where(articles.c.id == key).values(updated_at=older)
                    )
            writes.append((clock.now, R if what in ("edit", "insert") else C))
    finally:
        for app in apps:
            app.close()
        dispose(engine)
