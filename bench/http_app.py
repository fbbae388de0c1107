"""The server the HTTP load scripts drive: the example site and a bare constant endpoint.

``/bare`` is a plain Starlette route returning two bytes, in the same app behind the same
middleware, so its requests/s are the ceiling of this server, process and machine in the
same run. Beside the example's sitemap (an ``AsyncEngine`` on aiosqlite) the same articles
are served twice more, to tell the database's share of a 304 from the middleware's:

* ``/sync/sitemap.xml``: a sync ``Engine`` (each summary is one worker-thread hand-off);
* ``/versioned/sitemap.xml``: a sync ``Engine`` with a ``version=`` callable that reads no
  database (as an application keeping a revision number in memory would), so a 304 costs
  the middleware alone;
* ``/ttl/sitemap.xml``: the example's ``AsyncEngine`` with ``freshness.summary_ttl=2``: a burst of
  conditional requests reads the database once per page and two seconds;
* ``/counted/sitemap.xml``: a sync ``Engine`` whose ``version=`` is a ``ChangeCounter``
  (revisions kept by triggers): a 304 reads one small index range, exactly.

Every sitemap here has ``load.max_generations=None``: the scripts measure throughput, and the
default bound (4 generations per process) would shed the full-page runs' extra connections
with 503s.

Environment: ``LOAD_DB`` (SQLite file), ``LOAD_ROWS`` (articles).
"""

from __future__ import annotations

import os
from typing import cast

from sqlalchemy import Table, create_engine, select
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from example_app.app import create_app
from example_app.db import Article
from sitemap_middleware import (
    AsyncSQLAlchemySource,
    Freshness,
    Load,
    SitemapMiddleware,
    SQLAlchemySource,
)
from sitemap_middleware.sources.sqlalchemy.change_counter import ChangeCounter

BASE_URL = "https://www.example.com/"
DB = os.environ["LOAD_DB"]


async def bare(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


app = create_app(DB, int(os.environ["LOAD_ROWS"]), BASE_URL, load=Load(max_generations=None))
app.router.routes.insert(0, Route("/bare", bare))
engine = create_engine(f"sqlite:///{DB}")
articles = select(Article.id, Article.slug, Article.updated_at).where(Article.published)
app.add_middleware(
    SitemapMiddleware,
    path="/ttl/sitemap.xml",
    base_url=BASE_URL,
    freshness=Freshness(summary_ttl=2),
    load=Load(max_generations=None),
    sources=[
        AsyncSQLAlchemySource(
            articles,
            app.state.engine,
            name="articles",
            loc="/ttl/articles/{slug}",
            lastmod="updated_at",
        )
    ],
)
counter = ChangeCounter(cast(Table, Article.__table__), granularity=4_225)  # a group a page
with engine.begin() as conn:
    counter.install(conn)
for name, version in (("sync", None), ("versioned", lambda: 1), ("counted", counter)):
    app.add_middleware(
        SitemapMiddleware,
        path=f"/{name}/sitemap.xml",
        base_url=BASE_URL,
        load=Load(max_generations=None),
        sources=[
            SQLAlchemySource(
                articles,
                engine,
                name="articles",
                loc=f"/{name}/articles/{{slug}}",
                lastmod="updated_at",
                version=version,
            )
        ],
    )
