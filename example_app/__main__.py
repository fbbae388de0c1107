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

``EXAMPLE_SITES=2`` serves two sites from the one table with ``sites=``: the odd article ids
on ``http://site1.localhost:PORT/``, the even ones on ``http://site2.localhost:PORT/`` (each
host's sitemap, validators and article pages its own; browsers resolve ``*.localhost`` here).
``EXAMPLE_PURGE_URL`` (e.g. ``http://127.0.0.1:6081/``, a Varnish with the xkey module) puts
a cache in front: the documents carry ``Headers.cdn()`` and the surrogate keys, and what
changes is purged there with ``XkeyPurger``. ``python -m example_app.writer SLUG`` edits an
article as an application would and purges its site's articles there.

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
    try:
        config = Config.from_environment()
    except ValueError as exc:
        sys.exit(f"example_app cannot start: {exc}")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings(base_url=config.base_url)
    except ConfigurationError as exc:
        sys.exit(f"example_app cannot start (BASE_URL): {exc}")
    try:
        app = create_app(config.db_path, config.rows, config.base_url, **config.options)
    except ConfigurationError as exc:
        sys.exit(f"example_app cannot start (INDEXNOW_*, EXAMPLE_*): {exc}")
    for url in config.site_urls:
        site = Settings(base_url=url).site
        sitemap = site.url_for(settings.path)
        print(f"Serving {site.base_url} (sitemap: {sitemap}), database {config.db_path}")
    if config.purge_url:
        print(f"Purging {config.purge_url} (XkeyPurger)")
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
