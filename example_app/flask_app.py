"""The example site as a Flask (WSGI) application, with the same sitemap.

``python -m example_app.flask_app`` seeds the same SQLite database as
``python -m example_app`` (same ``EXAMPLE_DB``, ``EXAMPLE_ROWS``, ``HOST``,
``PORT`` and ``BASE_URL`` variables) and serves it with werkzeug's threaded
server: fine for trying it out; in production serve the app that
:func:`create_flask_app` returns with gunicorn or uWSGI.
"""

from __future__ import annotations

import html
import os
import sys
from datetime import date
from urllib.parse import quote

from flask import Flask, abort
from sqlalchemy import Engine, create_engine, select

from sitemap_middleware import (
    ConfigurationError,
    Entry,
    IterableSource,
    Settings,
    SitemapWSGIMiddleware,
    SQLAlchemySource,
)

from .app import PAGES
from .db import Article, seed


def page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1>{body}"
        "<p><a href='/'>Home</a> · <a href='/articles'>Articles</a> · "
        "<a href='/sitemap.html'>Sitemap</a> (<a href='/sitemap.xml'>XML</a>)</p></body></html>"
    )


def create_flask_app(db_path: str, rows: int, base_url: str) -> Flask:
    """The Flask site on ``db_path`` (seeded with ``rows`` articles), its sitemap under
    ``base_url``; a bad ``base_url`` raises :class:`~sitemap_middleware.ConfigurationError`."""
    Settings(base_url=base_url)
    engine: Engine = create_engine(f"sqlite:///{db_path}")
    seed(engine, rows)
    site = Flask(__name__)

    def static_page(path: str) -> str:
        title, text = PAGES[path]
        return page(title, f"<p>{html.escape(text)}</p>")

    for path in PAGES:
        site.add_url_rule(path, f"page{path}", lambda path=path: static_page(path))

    @site.get("/articles")
    def article_list() -> str:
        with engine.connect() as conn:
            result = conn.execute(
                select(Article.slug, Article.title)
                .where(Article.published)
                .order_by(Article.id)
                .limit(50)
            )
            items = "".join(
                f"<li><a href='/articles/{quote(slug, safe='')}'>{html.escape(title)}</a></li>"
                for slug, title in result
            )
        return page("Articles", f"<ul>{items}</ul>")

    @site.get("/articles/<path:slug>")
    def article(slug: str) -> str:
        with engine.connect() as conn:
            found = conn.execute(
                select(Article.title, Article.updated_at).where(
                    Article.slug == slug, Article.published
                )
            ).first()
        if found is None:
            abort(404)
        return page(found.title, f"<p>Last updated {found.updated_at:%Y-%m-%d %H:%M} UTC.</p>")

    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app,
        base_url=base_url,
        html=True,
        sources=[
            IterableSource(
                [
                    Entry("/", changefreq="daily", priority=1.0),
                    Entry("/about", lastmod=date(2024, 1, 1), changefreq="yearly"),
                    Entry("/contact", lastmod=date(2024, 1, 1), changefreq="yearly"),
                ],
                name="pages",
            ),
            SQLAlchemySource(
                select(Article.id, Article.slug, Article.updated_at).where(Article.published),
                engine,
                name="articles",
                loc="/articles/{slug}",
                lastmod="updated_at",
                changefreq="weekly",
            ),
        ],
    )
    site.extensions["sitemap_engine"] = engine
    return site


def main() -> None:
    from werkzeug.serving import run_simple

    db_path = os.environ.get("EXAMPLE_DB", "example.sqlite3")
    rows = int(os.environ.get("EXAMPLE_ROWS", "1000"))
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    base_url = os.environ.get("BASE_URL", f"http://{host}:{port}/")
    try:
        site = create_flask_app(db_path, rows, base_url)
    except ConfigurationError as exc:
        sys.exit(f"example_app.flask_app cannot start (BASE_URL): {exc}")
    print(f"Serving {base_url} (sitemap: {base_url}sitemap.xml) with Flask, database {db_path}")
    run_simple(host, port, site, threaded=True)


if __name__ == "__main__":
    main()
