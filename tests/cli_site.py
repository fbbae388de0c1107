"""Applications for the ``render`` tests, named by ``--app tests.cli_site:NAME``.

* ``app``: a Starlette site with ``SitemapMiddleware`` added (an index of three
  pages of list entries);
* ``standalone``: a ``SitemapApp`` instance (one ``urlset``);
* ``mounted``: a Starlette app with a ``SitemapApp`` mounted under ``/maps``;
* ``create_app``: a factory returning a fresh ``app``;
* ``gz_index``: an index listing its pages' ``.xml.gz`` files (``gzip.index_files``);
* ``example``: a factory for the example site, its database and base URL from
  ``CLI_EXAMPLE_DB`` / ``CLI_EXAMPLE_BASE`` (read when called);
* ``broken_midstream``: an index whose second source fails after its first
  chunk (the middleware aborts that transfer); ``broken_before``: a source
  that fails before the first byte (503); ``failing_startup``: an app whose
  lifespan startup fails.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from sitemap_middleware import (
    Entry,
    Gzip,
    KeyRange,
    Limits,
    SitemapApp,
    SitemapMiddleware,
    Summary,
    SyncSource,
)
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.output.entry import Batch

BASE = "https://example.com/"
ARTICLES = [
    Entry(f"/articles/{i}", lastmod=date(2024, 1, 1) + timedelta(days=i), changefreq="weekly")
    for i in range(1, 251)
]
PAGES = ["/", "/about", "/contact?lang=fr&x=1"]


async def home(request: object) -> PlainTextResponse:
    return PlainTextResponse("home")


def create_app() -> Starlette:
    site = Starlette(routes=[Route("/", home)])
    site.add_middleware(
        SitemapMiddleware,
        base_url=BASE,
        limits=Limits(max_urls=100, chunk_bytes=2048),  # pages of 100: articles-1..3
        sources={"pages": PAGES, "articles": ARTICLES},
    )
    return site


app = create_app()
standalone = SitemapApp(base_url=BASE, path="/sitemap.xml", sources=PAGES)
mounted = Starlette(
    routes=[
        Route("/", home),
        Mount("/maps", app=SitemapApp(base_url=BASE + "maps/", sources={"articles": ARTICLES})),
    ]
)

gz_index = SitemapApp(
    base_url=BASE,
    gzip=Gzip(index_files=True),
    limits=Limits(max_urls=100),
    sources={"articles": ARTICLES},
)


def example() -> Starlette:
    from example_app.app import create_app as create_example

    return create_example(os.environ["CLI_EXAMPLE_DB"], 5000, os.environ["CLI_EXAMPLE_BASE"])


class Failing(SyncSource):
    """Rows until ``fail_after`` of them were read (never when None); fails at the summary
    when ``fail_summary``."""

    pageable = False

    def __init__(self, name: str, rows: int, fail_after: int | None, fail_summary: bool = False):
        self.name = name
        self.rows = rows
        self.fail_after = fail_after
        self.fail_summary = fail_summary

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        if self.fail_summary:
            raise RuntimeError("database is down")
        return Summary(datetime(2024, 5, 1, tzinfo=UTC), self.rows, f"rows-{self.rows}")

    def batches(self, keys: KeyRange, size: int) -> Iterator[Batch]:
        rows = [(i, f"/{self.name}/{i}", None, None, None) for i in range(self.rows)]
        for start in range(0, self.rows, size):
            if self.fail_after is not None and start >= self.fail_after:
                raise RuntimeError("connection lost")
            yield Batch.of(rows[start : start + size])


broken_midstream = SitemapApp(
    base_url=BASE,
    limits=Limits(batch_size=50, chunk_bytes=1024),
    sources=[Failing("fine", 300, None), Failing("flaky", 300, fail_after=100)],
)
broken_before = SitemapApp(base_url=BASE, sources=[Failing("down", 10, None, fail_summary=True)])


@asynccontextmanager
async def no_database(app: Starlette) -> AsyncIterator[None]:
    raise RuntimeError("cannot reach the database")
    yield


failing_startup = Starlette(lifespan=no_database)
failing_startup.add_middleware(SitemapMiddleware, base_url=BASE, sources=PAGES)
