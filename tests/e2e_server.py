"""The application the end-to-end tests run under a real uvicorn process.

Configured by environment: ``E2E_DB`` (a seeded SQLite file). It serves
``/sitemap.xml`` (every article), ``/broken.xml`` (the database raises at row
``E2E_FAIL_AT``), ``/slow.xml`` (rows come slowly, for disconnects) and
``/paged/sitemap.xml`` (an index of pages of 500 rows) and ``/_state`` (pool
checkouts and rows read, as JSON).
"""

from __future__ import annotations

import os
import time
from typing import Any

from sqlalchemy import create_engine, event, func, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sitemap_middleware import SitemapMiddleware, SQLAlchemySource
from tests.conftest import articles

DB = os.environ["E2E_DB"]
FAIL_AT = int(os.environ.get("E2E_FAIL_AT", "900"))
BASE = "https://example.com/"

engine = create_engine(f"sqlite:///{DB}")
rows_read = {"slow": 0}


@event.listens_for(engine, "connect")
def register(dbapi_connection: Any, _: Any) -> None:
    def boom(value: int) -> int:
        if value == FAIL_AT:
            raise RuntimeError("disk I/O error")
        return value

    dbapi_connection.create_function("boom", 1, boom)


def slow_loc(row: Any) -> str:
    rows_read["slow"] += 1
    time.sleep(0.002)
    return f"/articles/{row.slug}"


columns = (articles.c.id, articles.c.slug, articles.c.updated_at)


async def state(request: Request) -> JSONResponse:
    return JSONResponse({"checkedout": engine.pool.checkedout(), "slow_rows": rows_read["slow"]})  # type: ignore[attr-defined]


app = Starlette(routes=[Route("/_state", state)])
app.add_middleware(
    SitemapMiddleware,
    path="/paged/sitemap.xml",
    base_url=BASE,
    max_urls=500,
    batch_size=100,
    chunk_bytes=4096,
    sources={
        "pages": ["/paged/", "/paged/about"],
        "articles": SQLAlchemySource(
            select(*columns),
            engine,
            name="articles",
            loc="/paged/articles/{slug}",
            lastmod="updated_at",
        ),
    },
)
app.add_middleware(
    SitemapMiddleware,
    path="/sitemap.xml",
    base_url=BASE,
    batch_size=100,
    chunk_bytes=4096,
    sources=[
        SQLAlchemySource(
            select(*columns), engine, name="articles", loc="/articles/{slug}", lastmod="updated_at"
        )
    ],
)
app.add_middleware(
    SitemapMiddleware,
    path="/broken.xml",
    base_url=BASE,
    batch_size=100,
    chunk_bytes=4096,
    sources=[
        SQLAlchemySource(
            select(*columns, func.boom(articles.c.id).label("ok")),
            engine,
            name="articles",
            loc="/articles/{slug}",
            lastmod="updated_at",
        )
    ],
)
app.add_middleware(
    SitemapMiddleware,
    path="/slow.xml",
    base_url=BASE,
    batch_size=20,
    chunk_bytes=4096,
    sources=[SQLAlchemySource(select(*columns), engine, name="articles", loc=slow_loc)],
)
