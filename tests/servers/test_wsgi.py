"""What only the WSGI adapter has to get right: PEP 3333's lazy start_response, write(),
close(), and real Flask and Django applications around it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response
from lxml import etree
from sqlalchemy import Engine, select
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import SitemapWSGIApp, SitemapWSGIMiddleware
from sitemap_middleware.servers.types import Environ

from ..adapters import call_wsgi
from ..support import article_source, articles, assert_valid_urlset, locs

BASE = "https://example.com/"


def flask_site(engine: Engine) -> Flask:
    site = Flask("site")

    @site.get("/")
    def home() -> str:
        return "home"

    @site.get("/static/sitemap.xml")
    def static_sitemap() -> Response:
        return Response("<static/>", mimetype="application/xml")

    return site


def test_flask_intercept_mode(engine: Engine, sitemap_schema: etree.XMLSchema) -> None:
    site = flask_site(engine)
    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app, sources=[article_source(engine, changefreq=None)], base_url=BASE
    )
    served = call_wsgi(site)
    assert served.status == 200 and served.complete
    assert len(assert_valid_urlset(served.body, sitemap_schema)) == 1200
    assert call_wsgi(site, path="/").body == b"home"
    assert call_wsgi(site, path="/nope").status == 404
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_flask_fallback_mode(engine: Engine, sitemap_schema: etree.XMLSchema) -> None:
    site = flask_site(engine)
    wrapped = SitemapWSGIMiddleware(
        SitemapWSGIMiddleware(
            site.wsgi_app,
            sources=["/x"],
            base_url=BASE,
            mode="fallback",
            path="/static/sitemap.xml",
        ),
        sources=[article_source(engine, changefreq=None)],
        base_url=BASE,
        mode="fallback",
    )
    served = call_wsgi(wrapped)
    assert served.status == 200 and b"Not Found" not in served.body  # the app's 404 dropped
    assert len(assert_valid_urlset(served.body, sitemap_schema)) == 1200
    static = call_wsgi(wrapped, path="/static/sitemap.xml")
    assert static.status == 200 and static.body == b"<static/>"  # a real file wins
    assert call_wsgi(wrapped, "POST").status == 405  # Flask says 405, not 404: passed on
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


class Recorder:
    """A hand-written WSGI app: lazy start_response, optional write(), close() recorded."""

    def __init__(self, status: str, chunks: list[bytes], use_write: bool = False) -> None:
        self.status, self.chunks, self.use_write = status, chunks, use_write
        self.closed = 0

    def __call__(self, environ: Environ, start_response: Any) -> Iterable[bytes]:
        return self.Body(self, start_response)

    class Body:
        def __init__(self, app: Recorder, start_response: Any) -> None:
            self.app, self.start_response = app, start_response

        def __iter__(self) -> Iterator[bytes]:
            yield b""  # PEP 3333: empty strings may come before start_response
            write = self.start_response(self.app.status, [("content-type", "text/plain")])
            if self.app.use_write:
                for chunk in self.app.chunks:
                    write(chunk)
                return
            yield from self.app.chunks

        def close(self) -> None:
            self.app.closed += 1


@pytest.mark.parametrize("use_write", [False, True])
def test_fallback_copes_with_lazy_start_response(
    use_write: bool, sitemap_schema: etree.XMLSchema
) -> None:
    missing = Recorder("404 Not Found", [b"gone " * 1000, b"still gone"], use_write)
    app = SitemapWSGIMiddleware(missing, sources=["/a"], base_url=BASE, mode="fallback")
    served = call_wsgi(app)
    assert served.status == 200 and b"gone" not in served.body
    assert locs(assert_valid_urlset(served.body, sitemap_schema)) == [BASE + "a"]
    assert missing.closed == 1

    present = Recorder("200 OK", [b"first ", b"second"], use_write)
    app = SitemapWSGIMiddleware(present, sources=["/a"], base_url=BASE, mode="fallback")
    passed = call_wsgi(app)
    assert passed.status == 200 and passed.body == b"first second"
    assert present.closed == 1


def test_close_is_passed_through_for_other_paths() -> None:
    inner = Recorder("200 OK", [b"page"])
    app = SitemapWSGIMiddleware(inner, sources=["/a"], base_url=BASE)
    assert call_wsgi(app, path="/page").body == b"page"
    assert inner.closed == 1


def test_mounted_under_a_script_name(sitemap_schema: etree.XMLSchema) -> None:
    blog = SitemapWSGIApp(sources=["/post/1"], base_url="https://example.com/blog/")
    app = DispatcherMiddleware(SitemapWSGIApp(sources=["/"], base_url=BASE), {"/blog": blog})
    served = call_wsgi(app, path="/blog/sitemap.xml")
    assert locs(assert_valid_urlset(served.body, sitemap_schema)) == [
        "https://example.com/blog/post/1"
    ]


def test_async_source_under_wsgi_runs_on_one_background_loop(
    db_path: Any, engine: Engine, sitemap_schema: etree.XMLSchema
) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    from sitemap_middleware import AsyncSQLAlchemySource

    async_engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")
    source = AsyncSQLAlchemySource(
        select(articles.c.id, articles.c.slug), async_engine, name="articles", loc="/a/{slug}"
    )
    app = SitemapWSGIApp(sources=[source], base_url=BASE)
    try:
        for _ in range(2):  # the same loop serves every request
            served = call_wsgi(app)
            assert len(assert_valid_urlset(served.body, sitemap_schema)) == 1200
        half = call_wsgi(app, disconnect_after=1)
        assert not half.complete
        assert async_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    finally:
        app.reads.loop.call(async_engine.dispose)
        app.close()


def test_a_process_serving_async_sources_under_wsgi_can_exit() -> None:
    """Servers never call close(): the background loop must not keep the process alive."""
    script = """
from sitemap_middleware import AsyncIterableSource, SitemapWSGIApp
from tests.adapters import call_wsgi
async def entries():
    yield "/a"
app = SitemapWSGIApp(base_url="https://example.com/", sources=[AsyncIterableSource(entries)])
assert call_wsgi(app).status == 200
print("served")
"""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20, cwd=root
    )
    assert result.returncode == 0 and result.stdout == "served\n", result.stderr


def test_close_waits_for_the_reads_in_flight() -> None:
    """A driver's worker thread hands its result to the loop when its query ends (aiosqlite's
    call_soon_threadsafe): close() during a read lets it end, never closes the loop under it."""
    import asyncio
    import threading

    from sitemap_middleware.servers.sync_effects import _Loop

    loop = _Loop()
    started, failures, results = threading.Event(), [], []

    async def query() -> str:
        future = asyncio.get_running_loop().create_future()

        def worker() -> None:  # a driver's thread, as aiosqlite runs one per connection
            started.set()
            threading.Event().wait(0.3)
            try:
                future.get_loop().call_soon_threadsafe(future.set_result, "rows")
            except RuntimeError as exc:  # the loop was closed under the query
                failures.append(exc)

        threading.Thread(target=worker).start()
        return await future

    reader = threading.Thread(target=lambda: results.append(loop.call(query)), daemon=True)
    reader.start()
    assert started.wait(5)
    loop.close()
    reader.join(5)
    assert (results, failures) == (["rows"], [])
    assert not loop.running
