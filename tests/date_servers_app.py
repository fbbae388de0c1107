"""The sitemaps the wire tests (``tests/servers/test_date_header_servers.py``) serve under
real servers.

``DATE_DB`` names a SQLite file the test seeded (:func:`seed_dates`). Every kind of answer the
library makes is reachable:

* ``/sitemap.xml``: an index of two sources (``articles``: rows in the past and one dated
  9999-12-31, which is never served; ``pages``: a list), its pages
  (``/sitemap-articles-1.xml``), their human view (``.html``), robots.txt (the application
  has none: the minimal one), the IndexNow key file (``/{KEY}.txt``), 404s and 405s;
* ``/soon.xml``: a row dated a few seconds ahead of the seeding (within
  ``lastmods.tolerance``), so its Last-Modified is capped by the clock;
* ``/broken.xml``: a source whose table does not exist: ``503`` before the first byte.

``asgi_app`` and ``wsgi_app`` serve them in front of an application that answers 404;
:mod:`tests.date_servers_django` does the same through Django's handlers.
``python -m tests.date_servers_app werkzeug|wsgiref PORT MODULE:ATTR`` runs a WSGI
application on werkzeug's threaded server (Flask's development server) or wsgiref's.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Column,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
    select,
)

from sitemap_middleware import (
    IndexNowSettings,
    SitemapMiddleware,
    SitemapWSGIMiddleware,
    SQLAlchemySource,
)
from tests.tables import articles, metadata

BASE = "https://example.com/"
KEY = "0123456789abcdef"

missing = Table(
    "no_such_table", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
)


def seed_dates(engine: Engine, soon: datetime) -> None:
    """Rows for ``/sitemap.xml`` and ``/soon.xml``: ``soon`` is the capped one's lastmod."""
    metadata.create_all(engine)
    rows: list[dict[str, Any]] = [
        {"id": i, "slug": f"a-{i}", "updated_at": datetime(2024, 5, 1) + timedelta(hours=i)}
        for i in range(1, 20)
    ]
    rows.append({"id": 20, "slug": "far", "updated_at": datetime(9999, 12, 31)})
    rows.append({"id": 30, "slug": "soon", "updated_at": soon})
    with engine.begin() as conn:
        conn.execute(insert(articles), rows)


def sitemaps(engine: Engine) -> list[dict[str, Any]]:
    """The settings of each sitemap (new sources each call)."""

    def articles_source(where: Any) -> SQLAlchemySource:
        return SQLAlchemySource(
            select(articles).where(where),
            engine,
            name="articles",
            loc="/a/{slug}",
            lastmod="updated_at",
        )

    return [
        {
            "base_url": BASE,
            "path": "/sitemap.xml",
            "html": True,
            "indexnow": IndexNowSettings(key=KEY),
            "sources": {"articles": articles_source(articles.c.id < 30), "pages": ["/", "/about"]},
        },
        {
            "base_url": BASE,
            "path": "/soon.xml",
            "robots_txt": False,
            "sources": [articles_source(articles.c.id > 0)],
        },
        {
            "base_url": BASE,
            "path": "/broken.xml",
            "robots_txt": False,
            "sources": [SQLAlchemySource(select(missing), engine, name="broken", loc="/b/{slug}")],
        },
    ]


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await receive()  # startup
        await send({"type": "lifespan.startup.complete"})
        await receive()  # shutdown
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b"Not Found\n"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _not_found_wsgi(environ: Any, start_response: Any) -> list[bytes]:
    body = b"Not Found\n"
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "10")])
    return [body]


def database() -> Engine:
    """The engine of the seeded file ``DATE_DB``."""
    return create_engine(f"sqlite:///{os.environ['DATE_DB']}")


_built: dict[str, Any] = {}
_building = threading.Lock()


async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
    """The sitemaps in front of :func:`_not_found`, built on first use (``DATE_DB`` is read
    then: the tests import this module before any file exists)."""
    app = _built.get("asgi")
    if app is None:
        app = _not_found
        for settings in sitemaps(database()):
            app = SitemapMiddleware(app, **settings)
        _built["asgi"] = app
    await app(scope, receive, send)


def wsgi_app(environ: Any, start_response: Any) -> Any:
    """The sitemaps in front of :func:`_not_found_wsgi`, built on first use."""
    with _building:  # threaded servers: one build
        app = _built.get("wsgi")
        if app is None:
            app = _not_found_wsgi
            for settings in sitemaps(database()):
                app = SitemapWSGIMiddleware(app, **settings)
            _built["wsgi"] = app
    return app(environ, start_response)


def _serve(server: str, port: int, target: str) -> None:
    module, _, attribute = target.partition(":")
    app = getattr(importlib.import_module(module), attribute)
    if server == "werkzeug":
        from werkzeug.serving import run_simple

        run_simple("127.0.0.1", port, app, threaded=True)
    else:
        from wsgiref.simple_server import make_server

        with make_server("127.0.0.1", port, app) as httpd:
            httpd.serve_forever()


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), sys.argv[3])
