"""A bound on concurrent generations per process: past it 503 + Retry-After, while 304s
and HEADs stay unbounded; the place is given back however a transfer ends."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest

from sitemap_middleware import IterableSource, Limits, Load, SitemapApp, SitemapWSGIApp

from ..adapters import call, call_wsgi

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"


def held_source(release: threading.Event, started: threading.Event) -> IterableSource:
    """A source whose second batch waits for ``release`` (its version spares the summary)."""

    def urls() -> Iterator[str]:
        yield "/first"
        started.set()
        release.wait(10)
        yield "/second"

    return IterableSource(urls, name="held", version=lambda: "1")


def settings(release: threading.Event, started: threading.Event | None = None) -> dict[str, Any]:
    return {
        "sources": {"held": held_source(release, started or threading.Event()), "other": ["/x"]},
        "base_url": BASE,
        "load": Load(max_generations=1, retry_after=7),
        "limits": Limits(batch_size=1, chunk_bytes=1),
    }


async def test_asgi_bounds_generations_not_revalidations() -> None:
    release, started = threading.Event(), threading.Event()
    app = SitemapApp(**settings(release, started))
    slots = app.sitemap.slots
    page = await call(app, "HEAD", path="/sitemap-held-1.xml")
    results: dict[str, Any] = {}

    async def first() -> None:
        results["first"] = await call(app, path="/sitemap-held-1.xml")

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        assert await anyio.to_thread.run_sync(started.wait, 10)
        assert slots.running == 1
        busy = await call(app, path="/sitemap-other-1.xml")
        assert busy.status == 503 and busy.headers["retry-after"] == "7"
        assert b"<" not in busy.body
        assert (await call(app, path="/sitemap.xml")).status == 503  # the index reads pages
        head = await call(app, "HEAD", path="/sitemap-other-1.xml")
        assert head.status == 200
        cached = await call(
            app, path="/sitemap-held-1.xml", headers={"if-none-match": page.headers["etag"]}
        )
        assert cached.status == 304
        release.set()
    assert results["first"].status == 200 and results["first"].complete
    assert slots.running == 0
    assert (await call(app, path="/sitemap-other-1.xml")).status == 200


async def test_asgi_gives_the_place_back_on_disconnect() -> None:
    release = threading.Event()
    release.set()
    app = SitemapApp(**settings(release))
    gone = await call(app, path="/sitemap-held-1.xml", disconnect_after=1)
    assert not gone.complete
    assert app.sitemap.slots.running == 0


def test_wsgi_bounds_generations_and_releases_on_close() -> None:
    release = threading.Event()
    app = SitemapWSGIApp(**settings(release))
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/sitemap-held-1.xml",
        "wsgi.input": io.BytesIO(),
    }
    statuses: list[str] = []
    body = app(environ, lambda status, headers, exc_info=None: statuses.append(status))
    chunks = iter(body)
    assert next(chunks).startswith(b"<?xml")  # the transfer is under way
    assert statuses == ["200 OK"] and app.sitemap.slots.running == 1
    busy = call_wsgi(app, path="/sitemap-other-1.xml")
    assert busy.status == 503 and busy.headers["retry-after"] == "7"
    assert call_wsgi(app, "HEAD", path="/sitemap-other-1.xml").status == 200
    release.set()
    body.close()  # type: ignore[attr-defined]  # the server closes it, finished or not
    assert app.sitemap.slots.running == 0
    assert call_wsgi(app, path="/sitemap-other-1.xml").status == 200
