"""WSGI applications for the ``render`` tests, named by ``--app tests.cli_wsgi_site:NAME``.

* ``flask_app``: a Flask site whose ``wsgi_app`` is wrapped in
  ``SitemapWSGIMiddleware`` (an index of three pages of list entries, and the
  human view); ``create_flask_app``: a factory returning a fresh one;
* ``standalone``: a ``SitemapWSGIApp`` instance (one ``urlset``);
* ``dispatched``: werkzeug's ``DispatcherMiddleware`` with a
  ``SitemapWSGIApp`` mounted under ``/maps``;
* ``flask_example``: a factory for the Flask example site, its database and
  base URL from ``CLI_EXAMPLE_DB`` / ``CLI_EXAMPLE_BASE`` (read when called);
* ``django_application``: a factory for a Django WSGI application wrapped in
  ``SitemapWSGIMiddleware`` (Django is configured on the first call);
* ``async_sources``: a ``SitemapWSGIApp`` over an async generator (the
  middleware runs it on its own event loop thread);
* ``broken_midstream`` / ``broken_before``: a source failing after the first
  chunk (the transfer is aborted) / before the first byte (503);
* ``wrapped``: a function taking ``(*args, **kwargs)`` around ``flask_app``,
  which says neither ASGI nor WSGI; ``plain``: a WSGI function around
  ``standalone`` (its sitemap is not found by walking it).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from flask import Flask
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitemap_middleware import (
    AsyncIterableSource,
    Entry,
    Limits,
    SitemapWSGIApp,
    SitemapWSGIMiddleware,
)

from .cli_site import ARTICLES, BASE, PAGES, Failing


def create_flask_app() -> Flask:
    site = Flask("cli_wsgi_site")
    site.add_url_rule("/", "home", lambda: "home")
    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app,
        base_url=BASE,
        limits=Limits(max_urls=100, chunk_bytes=2048),  # pages of 100: articles-1..3
        html=True,
        sources={"pages": PAGES, "articles": ARTICLES},
    )
    return site


flask_app = create_flask_app()
standalone = SitemapWSGIApp(base_url=BASE, sources=PAGES)
dispatched = DispatcherMiddleware(
    SitemapWSGIApp(base_url=BASE, path="/other.xml", sources=["/x"]),
    {"/maps": SitemapWSGIApp(base_url=BASE + "maps/", sources={"articles": ARTICLES})},
)


flask_examples: list[Flask] = []  # every example site made: the test disposes of their engines


def flask_example() -> Flask:
    from example_app.flask_app import create_flask_app as create_example

    site = create_example(os.environ["CLI_EXAMPLE_DB"], 5000, os.environ["CLI_EXAMPLE_BASE"])
    flask_examples.append(site)
    return site


def django_application() -> SitemapWSGIMiddleware:
    from django.core.wsgi import get_wsgi_application

    from .django_setup import setup

    setup()  # the tests' one Django project: its home page answers "home"
    return SitemapWSGIMiddleware(
        get_wsgi_application(),
        base_url=BASE,
        limits=Limits(max_urls=100),
        sources={"pages": PAGES, "articles": ARTICLES},
    )


async def _entries() -> AsyncIterator[Entry]:
    for entry in ARTICLES[:50]:
        yield entry


async_sources = SitemapWSGIApp(
    base_url=BASE, sources=[AsyncIterableSource(_entries, name="articles")]
)

broken_midstream = SitemapWSGIApp(
    base_url=BASE,
    limits=Limits(batch_size=50, chunk_bytes=1024),
    sources=[Failing("fine", 300, None), Failing("flaky", 300, fail_after=100)],
)
broken_before = SitemapWSGIApp(
    base_url=BASE, sources=[Failing("down", 10, None, fail_summary=True)]
)


def wrapped(*args: Any, **kwargs: Any) -> Any:
    return flask_app(*args, **kwargs)


def plain(environ: dict[str, Any], start_response: Any) -> Any:
    return standalone(environ, start_response)
