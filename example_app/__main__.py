"""Run the example site: ``python -m example_app``.

Environment: ``EXAMPLE_DB`` (SQLite file, default ``example.sqlite3``),
``EXAMPLE_ROWS`` (articles, default 1,000; the table is re-seeded when its row
count differs), ``HOST`` / ``PORT`` (default 127.0.0.1:8000), ``BASE_URL``
(the public URL, default ``http://HOST:PORT/``) and ``ROOT_PATH`` (the path
prefix a reverse proxy strips, e.g. ``/shop``; default none). Several replicas
may share one database file; the first to start seeds it.

``/sitemap.xml`` is a sitemap index listing ``/sitemap-pages-1.xml`` and the
article pages ``/sitemap-articles-N.xml``: with ``EXAMPLE_ROWS=120000`` there
are several, each within the protocol's limits (no single 50,000-URL urlset, so
no ``500`` for a large table).

``example_app`` is not installed with the package: run it from the checkout.
``INDEXNOW_KEY`` turns IndexNow on: the key file is served at ``/{key}.txt`` and
``sitemap-middleware indexnow --app example_app.asgi:app --once`` pushes the articles
that changed (to ``INDEXNOW_ENDPOINT``, default api.indexnow.org); ``INDEXNOW_EVERY``
(seconds) also runs the push in the server's lifespan. ``example_app.asgi:app`` is the
same configured application, for ``uvicorn`` and the command line.

A bad ``BASE_URL`` stops it at start with the reason.
"""

from __future__ import annotations

import logging
import sys

import uvicorn

from sitemap_middleware import ConfigurationError, Settings

from .app import create_app
from .site import Config


def main() -> None:
    config = Config.from_environment()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings(base_url=config.base_url)
    except ConfigurationError as exc:
        sys.exit(f"example_app cannot start (BASE_URL): {exc}")
    try:
        app = create_app(config.db_path, config.rows, config.base_url, **config.indexnow)
    except ConfigurationError as exc:
        sys.exit(f"example_app cannot start (INDEXNOW_*): {exc}")
    sitemap = settings.site.url_for(settings.path)
    print(f"Serving {settings.site.base_url} (sitemap: {sitemap}), database {config.db_path}")
    # lifespan="on": a failure building the app's middleware stops the server instead of
    # leaving it up and answering 500 to every request.
    uvicorn.run(
        app,
        host=config.host,
        port=config.port,
        root_path=config.root_path,
        log_level="info",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
