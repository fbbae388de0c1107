"""The example site: its sitemap lists every public page, and every listed URL answers 200;
with two sites and a cache in front, each host lists its own rows and an edit is purged."""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from lxml import etree
from sqlalchemy import create_engine

from example_app.app import create_app
from example_app.db import AWKWARD_SLUGS, article_rows, seed
from sitemap_middleware import ConfigurationError, cdn_cache_control, purge_keys

from ..support import assert_valid_index, assert_valid_urlset, free_port, locs
from ..threaded import serving_in_thread
from ..uvicorn_process import pythonpath, serving

pytestmark = pytest.mark.anyio
BASE = "http://127.0.0.1:8000/"


async def test_sitemap_lists_every_public_page_and_each_answers(
    tmp_path: Path, sitemap_schema: etree.XMLSchema
) -> None:
    app = create_app(str(tmp_path / "example.sqlite3"), 300, BASE)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.get("/sitemap.xml")
        assert response.status_code == 200
        children = [loc for loc, _ in assert_valid_index(response.content)]
        assert children == [BASE + "sitemap-pages-1.xml", BASE + "sitemap-articles-1.xml"]
        urls = []
        for child in children:
            page = await client.get(child.removeprefix(BASE.rstrip("/")))
            urls += locs(assert_valid_urlset(page.content, sitemap_schema))
        assert len(urls) == 4 + 300 - 6  # pages + articles less every 50th (drafts)
        assert BASE + "articles/caf%C3%A9-cr%C3%A8me" in urls
        assert BASE + "articles/100%25-natural" in urls
        assert BASE + "articles/a&b" in urls
        assert BASE + "articles/article-50" not in urls
        for url in urls[:3] + [u for u in urls if "article-" not in u] + urls[-3:]:
            page = await client.get(url.removeprefix(BASE.rstrip("/")))
            assert page.status_code == 200, url
        decoded = {unquote(u.removeprefix(BASE + "articles/")) for u in urls}
        assert set(AWKWARD_SLUGS) <= decoded
        assert (await client.get("/articles/article-50")).status_code == 404
        assert "a&amp;b" in (await client.get("/articles")).text
    await app.state.engine.dispose()


async def test_reseeding_is_deterministic(tmp_path: Path) -> None:
    first = create_app(str(tmp_path / "a.sqlite3"), 120, BASE)
    second = create_app(str(tmp_path / "b.sqlite3"), 120, BASE)
    bodies = []
    for app in (first, second):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            bodies.append((await client.get("/sitemap.xml")).content)
        await app.state.engine.dispose()
    assert bodies[0] == bodies[1]


async def test_many_articles_make_several_pages(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "many.sqlite3"), 9_000, BASE)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        index = await client.get("/sitemap.xml")
        children = [loc for loc, _ in assert_valid_index(index.content)]
        assert children == [BASE + "sitemap-pages-1.xml"] + [
            BASE + f"sitemap-articles-{n}.xml" for n in (1, 2, 3)
        ]
        last = await client.get("/sitemap-articles-3.xml")
        assert last.status_code == 200
    await app.state.engine.dispose()


async def test_pages_and_article_links_answer(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "links.sqlite3"), 60, BASE)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        for path in ("/", "/about", "/contact", "/articles"):
            assert (await client.get(path)).status_code == 200, path
        listing = (await client.get("/articles")).text
        hrefs = re.findall(r"href='(/articles/[^']+)'", listing)
        assert len(hrefs) == 50  # the first 50 public articles
        assert "/articles/100%25-natural" in hrefs
        assert "/articles/caf%C3%A9-cr%C3%A8me" in hrefs
        for href in hrefs:  # every link the page renders leads to its article
            assert (await client.get(href)).status_code == 200, href
    await app.state.engine.dispose()


def test_seed_only_when_the_row_count_differs(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'seed.sqlite3'}")
    try:
        assert seed(engine, 20) is True  # empty table
        assert seed(engine, 20) is False  # same count: kept as it is
        assert seed(engine, 25) is True  # different count: re-seeded
    finally:
        engine.dispose()


def test_bad_base_url_fails_when_the_app_is_built(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="base_url"):
        create_app(str(tmp_path / "bad.sqlite3"), 5, "example.com")


async def test_flask_variant_serves_the_same_sitemap(tmp_path: Path) -> None:
    from example_app.flask_app import create_flask_app

    from ..adapters import call, call_wsgi

    db = str(tmp_path / "same.sqlite3")
    starlette_app = create_app(db, 120, BASE)
    flask_app = create_flask_app(db, 120, BASE)
    for path in ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-articles-1.xml"):
        a, b = await call(starlette_app, path=path), call_wsgi(flask_app, path=path)
        assert a.status == b.status == 200
        assert a.body == b.body, path
        assert a.headers["last-modified"] == b.headers["last-modified"]
    listing = call_wsgi(flask_app, path="/articles").body.decode()
    hrefs = re.findall(r"href='(/articles/[^']+)'", listing)
    assert len(hrefs) == 50
    for href in hrefs[:10]:  # PATH_INFO carries the decoded bytes as latin-1 (PEP 3333)
        path_info = unquote(href).encode("utf-8").decode("latin-1")
        assert call_wsgi(flask_app, path=path_info).status == 200, href
    assert call_wsgi(flask_app, path="/articles/article-50").status == 404
    await starlette_app.state.engine.dispose()
    flask_app.extensions["sitemap_engine"].dispose()


def _seed_at_once(path: str, barrier: Barrier, outcome: multiprocessing.Queue[str]) -> None:
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 60})
    barrier.wait()
    try:
        outcome.put("seeded" if seed(engine, 3_000) else "kept")
    except Exception as exc:
        outcome.put(f"failed: {exc}")
    finally:
        engine.dispose()


def test_two_replicas_seeding_a_new_file_at_once(tmp_path: Path) -> None:
    """Replicas started together on one new SQLite file: one seeds, the other keeps its rows."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    outcome: multiprocessing.Queue[str] = context.Queue()
    path = str(tmp_path / "shared.sqlite3")
    processes = [
        context.Process(target=_seed_at_once, args=(path, barrier, outcome)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    results = sorted(outcome.get(timeout=60) for _ in processes)
    for process in processes:
        process.join(10)
    assert results == ["kept", "seeded"]


@pytest.fixture
def purges() -> Iterator[tuple[str, list[str]]]:
    """A cache's stand-in: an HTTP server on 127.0.0.1 that records each ``PURGE``'s
    ``xkey-purge`` field and accepts it; its URL and the fields received."""
    received: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PURGE(self) -> None:
            received.append(self.headers.get("xkey-purge", ""))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with serving_in_thread(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/", received


@pytest.mark.e2e
def test_two_sites_from_one_table_and_a_purge_after_an_edit(
    tmp_path: Path, sitemap_schema: etree.XMLSchema, purges: tuple[str, list[str]]
) -> None:
    """``python -m example_app`` with ``EXAMPLE_SITES=2`` and ``EXAMPLE_PURGE_URL``: each host
    lists only its own articles (odd ids, even ids) under its own base URL, with the CDN
    preset and its keys; ``python -m example_app.writer`` edits one and purges its site's
    articles at that URL."""
    purge_url, received = purges
    port = free_port()
    env = {
        "EXAMPLE_DB": str(tmp_path / "sites.sqlite3"),
        "EXAMPLE_ROWS": "300",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "EXAMPLE_SITES": "2",
        "EXAMPLE_PURGE_URL": purge_url,
        "PYTHONPATH": pythonpath(),
    }
    rows = [row for row in article_rows(300) if row["published"]]
    command = [sys.executable, "-m", "example_app"]
    with serving(command, port, tmp_path / "example.log", env) as url:
        bases = {}
        for n in (1, 2):
            host = f"site{n}.localhost:{port}"
            base = bases[n] = f"http://{host}/"
            index = httpx.get(url + "/sitemap.xml", headers={"Host": host})
            assert index.status_code == 200, index.text
            assert index.headers["cache-control"] == cdn_cache_control()
            assert purge_keys(base)[0] in index.headers["surrogate-key"].split()
            assert purge_keys(base, "articles")[0] in index.headers["surrogate-key"].split()
            children = [loc for loc, _ in assert_valid_index(index.content)]
            assert children and all(child.startswith(base) for child in children)
            urls: list[str] = []
            for child in children:
                page = httpx.get(url + child.removeprefix(base[:-1]), headers={"Host": host})
                urls += locs(assert_valid_urlset(page.content, sitemap_schema))
            assert all(listed.startswith(base) for listed in urls)
            slugs = {unquote(u.removeprefix(base + "articles/")) for u in urls if "/articles/" in u}
            assert slugs == {row["slug"] for row in rows if row["id"] % 2 == n % 2}
            # Its own articles answer on its host; the other site's do not.
            mine, theirs = (f"/articles/article-{12 - n}", f"/articles/article-{11 + n}")
            assert httpx.get(url + mine, headers={"Host": host}).status_code == 200
            assert httpx.get(url + theirs, headers={"Host": host}).status_code == 404
        assert httpx.get(url + "/sitemap.xml", headers={"Host": "elsewhere"}).status_code == 404

        # article-11: site 1's (an odd id). The writer edits it and purges site 1's articles.
        done = subprocess.run(
            [sys.executable, "-m", "example_app.writer", "article-11"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert purge_keys(bases[1], "articles") == [f"sm-src_site1.localhost~3a{port}_articles"]
        assert purge_keys(bases[1], "articles")[0] in {k for f in received for k in f.split()}
        assert not any(f"site2.localhost~3a{port}" in field for field in received)
        # The servers see the edit too: site 1 lists its new lastmod.
        edited = re.search(r"updated_at (\S+ \S+)", done.stdout)
        assert edited, done.stdout
        lastmod = edited.group(1).replace(" ", "T") + "+00:00"
        page = httpx.get(
            url + "/sitemap-articles-1.xml", headers={"Host": f"site1.localhost:{port}"}
        )
        assert f"<lastmod>{lastmod}</lastmod>" in page.text
