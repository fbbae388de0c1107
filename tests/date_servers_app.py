"""The sitemaps the Date tests serve under real servers (``DATE_DB``: a SQLite file).

``/sitemap.xml`` lists rows in the past and one dated 9999-12-31; ``/soon.xml`` has a
row dated ``DATE_SOON`` (a few seconds ahead, within ``lastmod_tolerance``), so its
Last-Modified is capped by the clock. ``asgi_app`` and ``wsgi_app`` serve both;
``python -m tests.date_servers_app PORT`` runs ``wsgi_app`` on werkzeug.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, insert, select

from sitemap_middleware import SitemapApp, SitemapWSGIApp, SQLAlchemySource
from tests.conftest import articles, metadata

BASE = "https://example.com/"
engine = create_engine(f"sqlite:///{os.environ['DATE_DB']}")


def seed(soon: datetime) -> None:
    metadata.create_all(engine)
    rows: list[dict[str, Any]] = [
        {"id": i, "slug": f"a-{i}", "updated_at": datetime(2024, 5, 1) + timedelta(hours=i)}
        for i in range(1, 20)
    ]
    rows.append({"id": 20, "slug": "far", "updated_at": datetime(9999, 12, 31)})
    rows.append({"id": 30, "slug": "soon", "updated_at": soon})
    with engine.begin() as conn:
        conn.execute(insert(articles), rows)


def settings(path: str, where: Any) -> dict[str, Any]:
    source = SQLAlchemySource(
        select(articles).where(where),
        engine,
        name="articles",
        loc="/a/{slug}",
        lastmod="updated_at",
    )
    return {"sources": [source], "base_url": BASE, "path": path}


past = articles.c.id < 30
everything = articles.c.id > 0


class Both:
    """Two standalone sitemap apps, chosen by path."""

    def __init__(self, kind: type[Any]) -> None:
        self.past = kind(**settings("/sitemap.xml", past))
        self.soon = kind(**settings("/soon.xml", everything))

    def pick(self, path: str) -> Any:
        return self.soon if path == "/soon.xml" else self.past


_asgi = Both(SitemapApp)
_wsgi = Both(SitemapWSGIApp)


async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
    app = _asgi.pick(scope.get("path", "")) if scope["type"] == "http" else _asgi.past
    await app(scope, receive, send)


def wsgi_app(environ: Any, start_response: Any) -> Any:
    return _wsgi.pick(environ.get("PATH_INFO", ""))(environ, start_response)


if __name__ == "__main__":
    from werkzeug.serving import run_simple

    run_simple("127.0.0.1", int(sys.argv[1]), wsgi_app, threaded=True)
