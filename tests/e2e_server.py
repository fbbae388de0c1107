"""The applications the end-to-end tests run under real servers.

One set of sitemaps, built for three stacks: ``app`` (Starlette, for uvicorn),
``flask_app`` and ``django_app`` (WSGI, served by ``python -m tests.e2e_server
flask|django PORT`` on werkzeug's threaded server). Configured by environment:
``E2E_DB`` (a seeded SQLite file). Each serves ``/sitemap.xml`` (every
article), ``/broken.xml`` (the database raises at row ``E2E_FAIL_AT``),
``/slow.xml`` (rows come slowly, for disconnects), ``/paged/sitemap.xml`` (an
index of pages of 500 rows) and ``/_state`` (pool checkouts and rows read, as
JSON).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from typing import Any

from sqlalchemy import create_engine, event, func, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sitemap_middleware import Limits, SitemapMiddleware, SitemapWSGIMiddleware, SQLAlchemySource
from tests.tables import articles

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


def state() -> dict[str, int]:
    return {"checkedout": engine.pool.checkedout(), "slow_rows": rows_read["slow"]}  # type: ignore[attr-defined]


def sitemaps() -> list[dict[str, Any]]:
    """The settings of every sitemap, innermost first (new sources for every app)."""
    limits = Limits(batch_size=100, chunk_bytes=4096)
    common = {"base_url": BASE, "limits": limits}
    return [
        {
            **common,
            "path": "/paged/sitemap.xml",
            "limits": replace(limits, max_urls=500),
            "sources": {
                "pages": ["/paged/", "/paged/about"],
                "articles": SQLAlchemySource(
                    select(*columns),
                    engine,
                    name="articles",
                    loc="/paged/articles/{slug}",
                    lastmod="updated_at",
                ),
            },
        },
        {
            **common,
            "path": "/sitemap.xml",
            "sources": [
                SQLAlchemySource(
                    select(*columns),
                    engine,
                    name="articles",
                    loc="/articles/{slug}",
                    lastmod="updated_at",
                )
            ],
        },
        {
            **common,
            "path": "/broken.xml",
            "sources": [
                SQLAlchemySource(
                    select(*columns, func.boom(articles.c.id).label("ok")),
                    engine,
                    name="articles",
                    loc="/articles/{slug}",
                    lastmod="updated_at",
                )
            ],
        },
        {
            **common,
            "path": "/slow.xml",
            "limits": replace(limits, batch_size=20),
            "sources": [SQLAlchemySource(select(*columns), engine, name="articles", loc=slow_loc)],
        },
    ]


async def state_endpoint(request: Request) -> JSONResponse:
    return JSONResponse(state())


app = Starlette(routes=[Route("/_state", state_endpoint)])
for settings in sitemaps():
    app.add_middleware(SitemapMiddleware, **settings)


def wrap(wsgi_app: Any) -> Any:
    for settings in sitemaps():
        wsgi_app = SitemapWSGIMiddleware(wsgi_app, **settings)
    return wsgi_app


def flask_app() -> Any:
    from flask import Flask

    site = Flask("e2e")
    site.add_url_rule("/_state", "state", state)
    site.wsgi_app = wrap(site.wsgi_app)  # type: ignore[method-assign]
    return site


def django_app() -> Any:
    import django
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.http import HttpRequest, HttpResponse
    from django.urls import path

    def state_view(request: HttpRequest) -> HttpResponse:
        return HttpResponse(json.dumps(state()), content_type="application/json")

    settings.configure(
        DEBUG=False,
        SECRET_KEY="e2e",
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        MIDDLEWARE=[],
        INSTALLED_APPS=[],
    )
    globals()["urlpatterns"] = [path("_state", state_view)]
    django.setup()
    return wrap(get_wsgi_application())


if __name__ == "__main__":
    from werkzeug.serving import make_server

    kind, port = sys.argv[1], int(sys.argv[2])
    wsgi = flask_app() if kind == "flask" else django_app()
    make_server("127.0.0.1", port, wsgi, threaded=True).serve_forever()
