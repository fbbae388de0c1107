"""IndexNow with ``sites=``: each site pushes its own rows and queued URLs under its own key.

Two sites share one SQLite table (a ``site`` column) and one uvicorn server on
127.0.0.1: ``http://127.0.0.1:PORT/`` and ``http://localhost:PORT/``, two hosts for the
endpoint of ``tests/indexnow_endpoint.py``, which fetches each post's key file from the
host the post names and refuses a URL of another host (``422``) or a key that host's file
does not hold (``403``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy import update as sql_update
from sqlalchemy.engine import Engine

from sitemap_middleware import (
    ConfigurationError,
    IndexNowSettings,
    SiteConfig,
    SitemapApp,
    SitemapWSGIApp,
    SQLAlchemySource,
)
from sitemap_middleware.contrib.indexnow import IndexNow, install, queue_urls

from ...indexnow_endpoint import Endpoint, running, serve_site
from ...support import free_port
from ...uvicorn_process import pythonpath

KEYS = {"a": "site-a-key-0123", "b": "site-b-key-4567"}
ROOT = Path(__file__).resolve().parents[3]

metadata = MetaData()
pages = Table(
    "site_pages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site", String(10), nullable=False),
    Column("slug", String(100), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, index=True),
)

APP_MODULE = """
from sqlalchemy import create_engine
from tests.contrib.indexnow.test_indexnow_sites import sites_app

app = sites_app(create_engine({db!r}), {bases!r}, {endpoint!r}, resolver={resolver!r})
"""


def configs(
    engine: Engine, bases: dict[str, str], endpoint: str, every: float | None = None
) -> dict[str, SiteConfig]:
    """Site ``a`` and site ``b``, each its rows of the one table and its own key."""
    return {
        name: SiteConfig(
            base_url=base,
            sources=SQLAlchemySource(
                select(pages).where(pages.c.site == name),
                engine,
                name="pages",
                loc="/pages/{slug}",
                lastmod="updated_at",
            ),
            indexnow=IndexNowSettings(key=KEYS[name], endpoint=endpoint, every=every),
        )
        for name, base in bases.items()
    }


def sites_app(
    engine: Engine,
    bases: dict[str, str],
    endpoint: str,
    resolver: bool = False,
    every: float | None = None,
) -> SitemapApp:
    by_host = {c.host: c for c in configs(engine, bases, endpoint, every).values()}
    sites: Any = by_host.get if resolver else by_host
    return SitemapApp(sites=sites)


@dataclass
class Sites:
    engine: Engine
    endpoint: Endpoint
    bases: dict[str, str]
    db: str
    port: int

    def touch(self, site: str, slugs: list[str]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                sql_update(pages)
                .where(pages.c.site == site, pages.c.slug.in_(slugs))
                .values(updated_at=datetime.now(UTC))
            )

    def url(self, site: str, slug: str) -> str:
        return f"{self.bases[site]}pages/{slug}"

    def accepted(self, site: str) -> list[tuple[str, str, list[str]]]:
        """The accepted posts naming ``site``'s host: (host, key, URLs)."""
        host = self.bases[site].split("//")[1].split(":")[0]
        return [
            (r.body["host"], r.body["key"], r.body["urlList"])
            for r in self.endpoint.received
            if r.status in (200, 202) and r.body is not None and r.body["host"] == host
        ]


@pytest.fixture
def two_sites(tmp_path: Path) -> Iterator[Sites]:
    db = f"sqlite:///{tmp_path / 'sites.sqlite3'}"
    engine = create_engine(db)
    metadata.create_all(engine)
    install(engine)
    old = datetime(2024, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(
            pages.insert(),
            [
                {"site": site, "slug": f"{site}{i}", "updated_at": old}
                for site in ("a", "b")
                for i in range(1, 6)
            ],
        )
    port = free_port()
    bases = {"a": f"http://127.0.0.1:{port}/", "b": f"http://localhost:{port}/"}
    with running(Endpoint()) as endpoint:
        made = Sites(engine, endpoint, bases, db, port)
        with serve_site(sites_app(engine, bases, endpoint.url), port):
            yield made
    engine.dispose()


def pushers(sites: Sites, **options: Any) -> list[IndexNow]:
    app = sites_app(sites.engine, sites.bases, sites.endpoint.url, **options)
    return IndexNow.for_mapped_sites(app, first_delay=0.01, max_delay=0.05)


@pytest.mark.anyio
async def test_each_site_pushes_its_own_rows_and_queued_urls_under_its_own_key(
    two_sites: Sites,
) -> None:
    a, b = pushers(two_sites)
    assert (a.sitemap.site.base_url, b.sitemap.site.base_url) == (
        two_sites.bases["a"],
        two_sites.bases["b"],
    )
    for pusher in (a, b):  # the first round starts from now
        assert not (await pusher.push()).failed
    two_sites.touch("a", ["a1", "a2"])
    two_sites.touch("b", ["b3"])
    with two_sites.engine.begin() as conn:  # rows deleted from each site
        queue_urls(conn, [two_sites.url("b", "gone-b"), two_sites.url("a", "gone-a")])
    for pusher in (a, b):
        result = await pusher.push()
        assert not result.failed, result
    assert two_sites.accepted("a") == [
        ("127.0.0.1", KEYS["a"], [two_sites.url("a", "a1"), two_sites.url("a", "a2")]),
        ("127.0.0.1", KEYS["a"], [two_sites.url("a", "gone-a")]),
    ]
    assert two_sites.accepted("b") == [
        ("localhost", KEYS["b"], [two_sites.url("b", "b3")]),
        ("localhost", KEYS["b"], [two_sites.url("b", "gone-b")]),
    ]
    # No post was refused (a key of another host, a URL off the host), and both queued
    # URLs are gone once accepted: nothing is pushed twice.
    assert all(r.status in (200, 202) for r in two_sites.endpoint.received)
    posts = len(two_sites.endpoint.received)
    for pusher in (a, b):
        assert not (await pusher.push()).failed
    assert len(two_sites.endpoint.received) == posts


@pytest.mark.anyio
async def test_a_queued_url_of_a_site_not_pushed_waits_for_its_own_site(two_sites: Sites) -> None:
    a, b = pushers(two_sites)
    with two_sites.engine.begin() as conn:
        queue_urls(conn, [two_sites.url("b", "gone-b")])
    assert (await a.push()).reports[-1].urls == 0  # site a's queue: not b's URL to drop
    assert (await b.push()).reports[-1].urls == 1
    assert two_sites.accepted("b") == [("localhost", KEYS["b"], [two_sites.url("b", "gone-b")])]


@pytest.mark.anyio
async def test_a_resolver_s_sites_are_pushed_by_host(two_sites: Sites) -> None:
    app = sites_app(two_sites.engine, two_sites.bases, two_sites.endpoint.url, resolver=True)
    with pytest.raises(ConfigurationError, match="name the hosts"):
        await IndexNow.for_sites(app)
    with pytest.raises(ConfigurationError, match=r"no site for 'elsewhere\.test'"):
        await IndexNow.for_sites(app, hosts=["elsewhere.test"])
    (b,) = await IndexNow.for_sites(app, hosts=[f"localhost:{two_sites.port}"])
    assert b.sitemap.site.base_url == two_sites.bases["b"]
    assert b.submission.key == KEYS["b"]
    # One sitemap's constructor refuses a middleware of sites, and says what to use.
    with pytest.raises(ConfigurationError, match="for_sites"):
        IndexNow(app)
    wsgi = SitemapWSGIApp(
        sites={
            c.host: c for c in configs(two_sites.engine, two_sites.bases, "http://x.test/").values()
        }
    )
    assert [p.sitemap.site.base_url for p in IndexNow.for_mapped_sites(wsgi)] == list(
        two_sites.bases.values()
    )


def _cli(sites: Sites, tmp_path: Path, *args: str, resolver: bool = False) -> Any:
    module = tmp_path / "sites_module.py"
    module.write_text(
        APP_MODULE.format(
            db=sites.db, bases=sites.bases, endpoint=sites.endpoint.url, resolver=resolver
        )
    )
    return subprocess.run(
        [
            *(sys.executable, "-m", "sitemap_middleware.cli", "indexnow"),
            *("--app", "sites_module:app", "--app-dir", str(tmp_path), *args),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), pythonpath()])},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.anyio
async def test_the_command_line_pushes_every_site_or_those_named(
    two_sites: Sites, tmp_path: Path
) -> None:
    def run(*args: str, resolver: bool = False) -> Any:
        return _cli(two_sites, tmp_path, *args, resolver=resolver)

    first = await anyio.to_thread.run_sync(run)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("first run: starts from now") == 2  # each site's source
    two_sites.touch("a", ["a4"])
    two_sites.touch("b", ["b4"])
    only_b = await anyio.to_thread.run_sync(run, "--host", f"localhost:{two_sites.port}")
    assert only_b.returncode == 0, only_b.stderr
    assert f"{two_sites.bases['b']} pages: pushed 1 URLs (1 rows) in 1 post" in only_b.stdout
    assert two_sites.bases["a"] not in only_b.stdout
    both = await anyio.to_thread.run_sync(run)
    assert both.returncode == 0, both.stderr
    assert f"{two_sites.bases['a']} pages: pushed 1 URLs (1 rows) in 1 post" in both.stdout
    assert f"{two_sites.bases['b']} pages: nothing changed" in both.stdout
    # A resolver cannot list its sites: the hosts are named, or it is a usage error.
    unnamed = await anyio.to_thread.run_sync(lambda: run(resolver=True))
    assert unnamed.returncode == 2 and "--host" in unnamed.stderr
    unknown = await anyio.to_thread.run_sync(lambda: run("--host", "nowhere.test", resolver=True))
    assert unknown.returncode == 2 and "no site for 'nowhere.test'" in unknown.stderr
    named = await anyio.to_thread.run_sync(
        lambda: run("--host", f"127.0.0.1:{two_sites.port}", resolver=True)
    )
    assert named.returncode == 0, named.stderr
    assert two_sites.accepted("a") == [("127.0.0.1", KEYS["a"], [two_sites.url("a", "a4")])]


@pytest.mark.anyio
async def test_the_lifespan_pushes_each_site_of_a_mapping(two_sites: Sites) -> None:
    import uvicorn

    port = free_port()
    app = sites_app(two_sites.engine, two_sites.bases, two_sites.endpoint.url, every=1)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        await anyio.sleep(1.5)  # each site's first round starts from now
        two_sites.touch("a", ["a5"])
        two_sites.touch("b", ["b5"])
        with anyio.fail_after(15):
            while not (two_sites.accepted("a") and two_sites.accepted("b")):  # noqa: ASYNC110
                await anyio.sleep(0.1)
        server.should_exit = True
    assert two_sites.accepted("a") == [("127.0.0.1", KEYS["a"], [two_sites.url("a", "a5")])]
    assert two_sites.accepted("b") == [("localhost", KEYS["b"], [two_sites.url("b", "b5")])]
