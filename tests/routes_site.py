"""A site whose routes its sitemap covers but one, for ``sitemap-middleware routes`` and
Django's system check, on Starlette, Flask and Django (the URLconf: :mod:`tests.routes_django`).

Routes, and what coverage says of each:

* ``/`` and ``/about``: covered by the ``pages`` list; ``/products/{slug}``: covered by a
  loc of the ``products`` list (``/products/chair``);
* ``/contact``: **uncovered** (with ``clean``, the ``pages`` list holds it too);
* ``/search``: excluded, its view marked with ``@not_in_sitemap``;
* ``/drafts/{slug}``: uncovered unless excluded by the glob :data:`DRAFTS`;
* ``/subscribe``: POST only; the sitemap's own path and ``robots.txt`` (Starlette); static
  files; Django's admin (Django).

Module attributes for ``--app``: ``starlette``, ``starlette_clean``, ``flask``,
``flask_clean``.
"""

from __future__ import annotations

import tempfile
from typing import Any

from sitemap_middleware import (
    IterableSource,
    SitemapMiddleware,
    SitemapWSGIMiddleware,
    not_in_sitemap,
)

BASE = "https://site.test/"
DRAFTS = "/drafts/*"
UNCOVERED = "/contact"


def sources(clean: bool = False) -> list[IterableSource]:
    pages = ["/", "/about", *([UNCOVERED] if clean else [])]
    return [
        IterableSource(pages, name="pages"),
        IterableSource(["/products/chair", "/products/table"], name="products"),
    ]


# --- Starlette ---------------------------------------------------------------------------


def starlette_app(clean: bool = False) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    async def page(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.url.path)

    @not_in_sitemap
    async def search(request: Request) -> PlainTextResponse:
        return PlainTextResponse("results")

    site = Starlette(
        routes=[
            Route("/", page),
            Route("/about", page),
            Route("/contact", page),
            Mount("/products", routes=[Route("/{slug}", page)]),
            Route("/search", search),
            Route("/drafts/{slug}", page),
            Route("/subscribe", page, methods=["POST"]),
            Route("/robots.txt", page),
            Route("/sitemap.xml", page),  # the middleware answers it first
            Mount("/static", StaticFiles(directory=tempfile.gettempdir()), name="static"),
        ]
    )
    site.add_middleware(SitemapMiddleware, base_url=BASE, sources=sources(clean))
    return site


# --- Flask -------------------------------------------------------------------------------


def flask_app(clean: bool = False) -> Any:
    from flask import Flask, request

    site = Flask("routes_site")

    @site.route("/")
    @site.route("/about")
    @site.route("/contact")
    @site.route("/products/<slug>")
    @site.route("/drafts/<slug>")
    def page(slug: str = "") -> str:
        return request.path

    @site.route("/search")
    @not_in_sitemap
    def search() -> str:
        return "results"

    @site.post("/subscribe")
    def subscribe() -> str:
        return "subscribed"

    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app, base_url=BASE, sources=sources(clean)
    )
    return site


starlette = starlette_app()
starlette_clean = starlette_app(clean=True)
flask = flask_app()
flask_clean = flask_app(clean=True)
