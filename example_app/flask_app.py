"""The example site as a Flask (WSGI) application, with the same sitemap.

``python -m example_app.flask_app`` seeds the same SQLite database as
``python -m example_app`` (same ``EXAMPLE_DB``, ``EXAMPLE_ROWS``, ``HOST``,
``PORT`` and ``BASE_URL`` variables) and serves it with werkzeug's threaded
server: fine for trying it out; in production serve the app that
:func:`create_flask_app` returns with gunicorn or uWSGI.
"""

from __future__ import annotations

import sys

from flask import Flask, abort
from sqlalchemy import Engine, create_engine

from sitemap_middleware import (
    ConfigurationError,
    Settings,
    SitemapWSGIMiddleware,
    SQLAlchemySource,
)

from .db import seed
from .site import (
    ARTICLE_LIST,
    ARTICLE_SITEMAP,
    ARTICLES,
    PAGES,
    Config,
    article_body,
    article_query,
    list_body,
    page_html,
    pages_source,
    static_body,
)


def create_flask_app(db_path: str, rows: int, base_url: str) -> Flask:
    """The Flask site on ``db_path`` (seeded with ``rows`` articles), its sitemap under
    ``base_url``; a bad ``base_url`` raises :class:`~sitemap_middleware.ConfigurationError`."""
    Settings(base_url=base_url)
    engine: Engine = create_engine(f"sqlite:///{db_path}")
    seed(engine, rows)
    site = Flask(__name__)

    for path in PAGES:
        site.add_url_rule(path, f"page{path}", lambda path=path: page_html(*static_body(path)))

    @site.get("/articles")
    def article_list() -> str:
        with engine.connect() as conn:
            return page_html("Articles", list_body(conn.execute(ARTICLE_LIST)))

    @site.get("/articles/<path:slug>")
    def article(slug: str) -> str:
        with engine.connect() as conn:
            found = conn.execute(article_query(slug)).first()
        if found is None:
            abort(404)
        return page_html(found.title, article_body(found.updated_at))

    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app,
        base_url=base_url,
        html=True,
        sources=[pages_source(), SQLAlchemySource(ARTICLES, engine, **ARTICLE_SITEMAP)],
    )
    site.extensions["sitemap_engine"] = engine
    return site


def main() -> None:
    from werkzeug.serving import run_simple

    config = Config.from_environment()
    try:
        site = create_flask_app(config.db_path, config.rows, config.base_url)
    except ConfigurationError as exc:
        sys.exit(f"example_app.flask_app cannot start (BASE_URL): {exc}")
    print(
        f"Serving {config.base_url} (sitemap: {config.base_url}sitemap.xml) with Flask, "
        f"database {config.db_path}"
    )
    run_simple(config.host, config.port, site, threaded=True)


if __name__ == "__main__":
    main()
