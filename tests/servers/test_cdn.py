"""Behind a CDN, through every adapter: the same surrogate keys on each kind of document
(200 and 304, never on a 404 or 503), 503s never cacheable, and the purges of what changed
received by a real HTTP server (a Varnish stand-in) while serving never waits on it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from sqlalchemy import Engine, insert, update

from sitemap_middleware import Freshness, Headers, Limits, SitemapApp, SitemapWSGIApp
from sitemap_middleware.contrib.varnish import MAX_FIELD_BYTES, PurgeFailed, XkeyPurger
from sitemap_middleware.state.purges import PurgeQueue

from ..adapters import call, call_wsgi
from ..clock import Clock, drive
from ..support import article_source, articles, assert_valid_index, now_naive
from ..threaded import serving_in_thread

pytestmark = pytest.mark.anyio

BASE = "https://example.com/"
CDN = "public, max-age=0, s-maxage=300, stale-while-revalidate=60, stale-if-error=86400"
SITE = "sm-site_example.com"
POSTS, TAGS = "sm-src_example.com_posts", "sm-src_example.com_tags"
KEY_FIELDS = ("surrogate-key", "cache-tag")


def lists() -> dict[str, list[str]]:
    return {
        "posts": [f"{BASE}posts/{n}" for n in range(25)],
        "tags": [f"{BASE}tags/{n}" for n in range(3)],
    }


# Every kind of document, and the keys it carries (written out: the scheme is a promise).
DOCUMENTS = {
    "/sitemap.xml": [SITE, POSTS, TAGS, "sm-doc_example.com_sitemap.xml"],
    "/sitemap.xml.gz": [SITE, POSTS, TAGS, "sm-doc_example.com_sitemap.xml"],
    "/sitemap.html": [SITE, POSTS, TAGS, "sm-doc_example.com_sitemap.xml"],
    "/sitemap-posts-2.xml": [SITE, POSTS, "sm-doc_example.com_sitemap-posts-2.xml"],
    "/sitemap-posts-2.xml.gz": [SITE, POSTS, "sm-doc_example.com_sitemap-posts-2.xml"],
    "/sitemap-posts-2.html": [SITE, POSTS, "sm-doc_example.com_sitemap-posts-2.xml"],
    "/sitemap-tags-1.xml": [SITE, TAGS, "sm-doc_example.com_sitemap-tags-1.xml"],
}


async def test_every_document_carries_its_keys_on_200_and_304(make_app: Any) -> None:
    app = make_app(
        sources=lists(),
        base_url=BASE,
        html=True,
        limits=Limits(max_urls=10),
        headers=Headers.cdn(surrogate_keys=KEY_FIELDS),
    )
    for path, keys in DOCUMENTS.items():
        ok = await call(app, path=path)
        assert ok.status == 200, path
        tag = ok.headers["etag"]
        again = await call(app, path=path, headers={"if-none-match": tag})
        head = await call(app, "HEAD", path=path)
        assert (again.status, head.status) == (304, 200), path
        for response in (ok, again, head):
            assert response.headers["surrogate-key"] == " ".join(keys), path
            assert response.headers["cache-tag"] == ",".join(keys), path
            assert response.headers["cache-control"] == CDN, path
            names = [name for name, _ in response.messages[0]["headers"]]
            assert names.count(b"surrogate-key") == names.count(b"cache-tag") == 1
    for path in ("/sitemap-posts-9.xml", "/sitemap-nope-1.xml"):
        missing = await call(app, path=path)
        assert missing.status == 404, path
        assert not set(KEY_FIELDS) & set(missing.headers), path


async def test_no_keys_unless_asked(make_app: Any) -> None:
    app = make_app(sources=lists(), base_url=BASE, limits=Limits(max_urls=10))
    ok = await call(app, path="/sitemap-posts-1.xml")
    assert ok.status == 200 and ok.headers["cache-control"] == "no-cache"
    assert not set(KEY_FIELDS) & set(ok.headers)


async def test_a_503_is_never_cacheable_nor_keyed(make_app: Any) -> None:
    def down() -> Iterator[str]:
        raise RuntimeError("database unavailable")
        yield ""  # a generator function: a source read on each request

    app = make_app(
        sources={"posts": down},
        base_url=BASE,
        headers=Headers.cdn(surrogate_keys=KEY_FIELDS),
    )
    for path in ("/sitemap.xml", "/sitemap-posts-1.xml"):
        failed = await call(app, path=path)
        assert failed.status == 503, path
        assert failed.headers["cache-control"] == "no-store", path
        assert "retry-after" in failed.headers
        assert not set(KEY_FIELDS) & set(failed.headers), path


# --- purges, received by a real HTTP server --------------------------------------------------


@dataclass
class Varnish:
    """An HTTP server that records each PURGE and answers with the next of ``statuses``
    (then 200); a request waits while ``hold`` is clear."""

    statuses: list[int] = field(default_factory=list)
    received: list[tuple[str, str, str]] = field(default_factory=list)
    hold: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def keys(self) -> list[list[str]]:
        """The keys of each purge answered with a 200."""
        return [keys.split() for method, status, keys in self.received if status == "200"]


@pytest.fixture
def varnish() -> Iterator[Varnish]:
    state = Varnish()
    state.hold.set()

    class Handler(BaseHTTPRequestHandler):
        def do_PURGE(self) -> None:
            if not state.hold.wait(30):
                return
            status = state.statuses.pop(0) if state.statuses else 200
            state.received.append((self.command, str(status), self.headers["xkey-purge"]))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/"
    with serving_in_thread(server):
        yield state
        state.hold.set()


def queue_of(app: Any) -> PurgeQueue:
    purges = app.sitemap.purges
    assert isinstance(purges, PurgeQueue)
    return purges


def quick_retries(app: Any, retries: int = 10) -> PurgeQueue:
    """The app's purges, tried again at once when they fail (as its back-off would, later),
    ``retries`` times."""
    purges = queue_of(app)
    purges.retry_delays = (0.01,) * retries
    return purges


async def purged(app: Any, varnish: Varnish | None = None, count: int = 0) -> None:
    """Until ``varnish`` accepted ``count`` purges in all (a job queues its purge once it
    has kept its pages), and the purges queued are sent (or given up)."""
    if varnish is not None:
        await until(lambda: _true(len(varnish.keys()) >= count))
    assert await anyio.to_thread.run_sync(queue_of(app).wait, 30), "the purges never ended"


async def until(probe: Callable[[], Any], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not await probe():
        assert time.monotonic() < deadline, "never came"
        await anyio.sleep(0.05)


async def test_a_refresh_purges_the_documents_it_moved(
    make_app: Any, engine: Engine, varnish: Varnish
) -> None:
    app = make_app(
        sources=[article_source(engine)],
        base_url=BASE,
        limits=Limits(max_urls=100),
        freshness=Freshness(refresh_interval=0, recount_interval=3600, exact_rows=0),
        headers=Headers.cdn(),
        purger=XkeyPurger(varnish.url, timeout=5),
    )
    drive(app, Clock())  # refreshes at each request, never a recount by the clock
    index = await call(app)
    assert index.status == 200
    with engine.begin() as conn:  # page 1's row 5 edited now
        conn.execute(update(articles).where(articles.c.id == 5).values(updated_at=now_naive()))

    async def index_moved() -> bool:
        return (await call(app)).headers["etag"] != index.headers["etag"]

    await until(index_moved)
    await purged(app, varnish, 1)
    assert varnish.keys() == [
        ["sm-doc_example.com_sitemap-articles-1.xml", "sm-doc_example.com_sitemap.xml"]
    ]
    with engine.begin() as conn:  # a new row on a new page: the source's pages change
        conn.execute(insert(articles).values(id=1350, slug="new", updated_at=now_naive()))

    async def page_14_listed() -> bool:
        listed = assert_valid_index((await call(app)).body)
        return any(loc.endswith("/sitemap-articles-14.xml") for loc, _ in listed)

    await until(page_14_listed)
    await purged(app, varnish, 2)
    assert varnish.keys()[1:] == [["sm-src_example.com_articles"]]
    # An explicit purge after a bulk write: one source, or the whole site.
    middleware = getattr(app, "middleware", app)
    assert middleware.purge("articles") == ["sm-src_example.com_articles"]
    await purged(app)
    assert middleware.purge() == [SITE]
    await purged(app)
    assert varnish.keys()[2:] == [["sm-src_example.com_articles"], [SITE]]


@pytest.mark.parametrize("kind", [SitemapApp, SitemapWSGIApp])
async def test_a_failing_or_hanging_purge_delays_no_answer_and_is_retried(
    kind: Any, varnish: Varnish
) -> None:
    app = kind(
        sources=lists(),
        base_url=BASE,
        limits=Limits(max_urls=10),
        headers=Headers.cdn(),
        purger=XkeyPurger(varnish.url, timeout=0.5),
    )
    purges = quick_retries(app)
    try:
        varnish.statuses = [500, 503]  # two failures, then accepted
        app.purge("posts")
        await purged(app)
        assert [status for _, status, _ in varnish.received] == ["500", "503", "200"]
        assert varnish.keys() == [[POSTS]] and (purges.failures, purges.purged) == (2, 1)

        varnish.hold.clear()  # the cache hangs: every try times out
        app.purge("tags")
        await until(lambda: _true(purges.failures >= 4))
        for path in ("/sitemap.xml", "/sitemap-posts-3.xml", "/sitemap-tags-1.xml"):
            assert (await call(app, path=path)).status == 200, path
        app.purge()  # queued while the retries go on: sent with them
        varnish.hold.set()
        await purged(app)
        assert purges.given_up == 0
        # Every key reached the cache; the tags, tried again after each timeout (a try that
        # timed out may reach the cache too, late: purging twice is harmless).
        accepted = {key for keys in varnish.keys()[1:] for key in keys}
        assert accepted == {TAGS, SITE}
        # The tries that timed out are recorded as their handlers, released, end.
        await until(lambda: _true(sum(TAGS in k.split() for _, _, k in varnish.received) >= 3))
    finally:
        if isinstance(app, SitemapWSGIApp):
            app.close(grace=1)
        else:
            await app.aclose(grace=1)


async def _true(value: bool) -> bool:
    return value


async def test_a_purge_that_always_fails_is_given_up_and_logged(
    varnish: Varnish, caplog: pytest.LogCaptureFixture
) -> None:
    app = SitemapWSGIApp(
        sources=lists(),
        base_url=BASE,
        headers=Headers.cdn(),
        purger=XkeyPurger(varnish.url),
    )
    purges = quick_retries(app, retries=3)
    varnish.statuses = [500] * 4
    with caplog.at_level("WARNING", "sitemap_middleware"):
        app.purge()
        await purged(app)
    assert (purges.failures, purges.given_up, varnish.keys()) == (4, 1, [])
    assert any("given up" in record.getMessage() for record in caplog.records)
    assert (await call(app)).status == 200
    app.close(grace=1)


def test_the_xkey_purger_splits_long_fields(varnish: Varnish) -> None:
    keys = [f"sm-doc_example.com_sitemap-posts-{n}.xml" for n in range(1000)]
    XkeyPurger(varnish.url, headers={"x-purge-token": "s3cret"}).purge(keys)
    sent = varnish.keys()
    assert len(sent) > 1 and [key for part in sent for key in part] == keys
    assert all(len(" ".join(part)) <= MAX_FIELD_BYTES for part in sent)
    varnish.statuses = [405]
    with pytest.raises(PurgeFailed, match="405"):
        XkeyPurger(varnish.url).purge(["a"])


class Recording:
    """A purger that keeps the keys of each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def purge(self, keys: Any) -> None:
        with self.lock:
            self.calls.append(list(keys))

    def keys(self) -> list[str]:
        with self.lock:
            return [key for call in self.calls for key in call]


def test_two_replicas_purge_each_change_once(engine: Engine) -> None:
    """Two replicas of one database learn of an edit each by itself: with ClaimedPurger the
    keys of that change are sent by one of them only; an explicit purge by each."""
    from sitemap_middleware import ClaimedPurger

    caches = [Recording(), Recording()]
    replicas = [
        drive(
            SitemapWSGIApp(
                sources=[article_source(engine)],
                base_url=BASE,
                limits=Limits(max_urls=100),
                freshness=Freshness(refresh_interval=0, recount_interval=3600, exact_rows=0),
                headers=Headers.cdn(),
                purger=ClaimedPurger(cache, engine),
            ),
            Clock(),
        )
        for cache in caches
    ]
    try:
        for replica in replicas:
            assert call_wsgi(replica).status == 200
        with engine.begin() as conn:  # page 1's row 5 edited now
            conn.execute(update(articles).where(articles.c.id == 5).values(updated_at=now_naive()))
        for _ in range(3):  # each replica refreshes at each request and finds the edit
            for replica in replicas:
                assert call_wsgi(replica).status == 200
                for live in replica.sitemap.current_pages.values():
                    assert live.idle.wait(10), "a refresh never ended"
        for replica in replicas:
            assert queue_of(replica).wait(10)
        page_keys = ["sm-doc_example.com_sitemap-articles-1.xml", "sm-doc_example.com_sitemap.xml"]
        sent = caches[0].keys() + caches[1].keys()
        assert sorted(sent) == sorted(page_keys), sent  # once, by whichever claimed first
        assert sum(queue_of(r).claimed_elsewhere for r in replicas) == len(page_keys)
        for replica in replicas:  # an explicit purge is each caller's own
            replica.purge("articles")
            assert queue_of(replica).wait(10)
        assert [c.keys().count("sm-src_example.com_articles") for c in caches] == [1, 1]
    finally:
        for replica in replicas:
            replica.close(grace=1)


def test_unreadable_claims_purge_from_here(engine: Engine) -> None:
    """Claims that cannot be read never cost a purge: the replica sends it (twice is
    harmless, never is stale)."""
    from sqlalchemy import create_engine

    from sitemap_middleware import ClaimedPurger

    cache = Recording()
    broken = create_engine("sqlite:////nonexistent-folder/claims.sqlite3")
    app = SitemapWSGIApp(
        sources=lists(),
        base_url=BASE,
        headers=Headers.cdn(),
        purger=ClaimedPurger(cache, broken),
    )
    try:
        queue_of(app).submit(["k1", "k2"], "v1")
        assert queue_of(app).wait(10)
        assert cache.keys() == ["k1", "k2"]
    finally:
        app.close(grace=1)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_claim_lands_once_whichever_replica_asks(backend: str, tmp_path: Path) -> None:
    """Two replicas' purgers on one database: each (key, version) is won by the first to
    claim it, a new version is won again, and a claim lost is no error (ON CONFLICT DO
    NOTHING: nothing in the server's log)."""
    from sqlalchemy import create_engine, text

    from sitemap_middleware import ClaimedPurger

    from ..postgres import driver_url, schema_name, server_url

    if backend == "sqlite":
        shared = create_engine(f"sqlite:///{tmp_path / 'claims.sqlite3'}")
        table = "sitemap_purge_claims"
    else:
        shared = create_engine(driver_url(server_url(), "psycopg"))
        table = f"claims_{schema_name()}"
    first, second = (
        ClaimedPurger(Recording(), shared, table),
        ClaimedPurger(Recording(), shared, table),
    )
    try:
        changes = [("k1", "v1"), ("k2", "v1")]
        assert first.claim(changes) == {"k1", "k2"}
        assert second.claim(changes) == set()
        assert second.claim([("k1", "v2"), ("k2", "v1")]) == {"k1"}
        assert first.claim([("k1", "v2")]) == set()
    finally:
        with shared.begin() as conn:
            conn.execute(text(f'DROP TABLE IF EXISTS "{table}"'))
        shared.dispose()
