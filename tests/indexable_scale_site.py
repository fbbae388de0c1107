"""A site whose sitemaps list many URLs, for ``check --audit-indexable all`` at scale.

Two sources, ``en`` and ``de``, of ``INDEXABLE_URLS`` URLs in all (default 20,000;
sitemaps of 5,000 URLs), each English page and its German one listing each other as
hreflang alternates in their sitemap entries. The entries are generated for each
request, so the site itself holds none of them: what the audit keeps is what grows.
Every page answers ``200`` with its own canonical, except a few planted faults (in
each :data:`EVERY` pairs): the German entry of pair 1 lists no alternate (nor does its
page), so the English URL's alternate does not list it back; the English page of pair
2 answers ``404``; the German page of pair 3 is ``noindex``.

``app`` is a factory (``check --app tests.indexable_scale_site:app``), read at each call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from sitemap_middleware import Entry, IterableSource, Limits, SitemapMiddleware

BASE = "http://site.test/"
EVERY = 5_000
ROBOTS_TXT = "User-agent: *\nDisallow: /admin/\n"


def findings(urls: int) -> dict[str, int]:
    """How many findings of each kind the site of ``urls`` URLs has."""
    pairs = urls // 2
    planted = {code: sum(1 for i in range(pairs) if i % EVERY == n) for n, code in _CODES.items()}
    return {code: count for code, count in planted.items() if count}


_CODES = {1: "indexable.hreflang", 2: "indexable.status", 3: "indexable.noindex"}


def sources(urls: int) -> list[IterableSource]:
    pairs = range(urls // 2)

    def both(i: int) -> dict[str, str]:
        return {"en": f"/en/{i}", "de": f"/de/{i}"}

    def english() -> Iterator[Entry]:
        return (Entry(f"/en/{i}", alternates=both(i)) for i in pairs)

    def german() -> Iterator[Entry]:
        return (Entry(f"/de/{i}", alternates={} if i % EVERY == 1 else both(i)) for i in pairs)

    return [
        IterableSource(english, name="en", version=lambda: "1", alternates=2),
        IterableSource(german, name="de", version=lambda: "1", alternates=2),
    ]


def build(urls: int, base: str = BASE) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, PlainTextResponse, Response
    from starlette.routing import Route

    async def robots(request: Request) -> Response:
        return PlainTextResponse(ROBOTS_TXT)

    async def page(request: Request) -> Response:
        language, number = request.path_params["language"], request.path_params["number"]
        if language == "en" and number % EVERY == 2:
            return PlainTextResponse("not found", 404)
        url = f"{base}{language}/{number}"
        head = f'<link rel="canonical" href="{url}">'
        if language == "de" and number % EVERY == 3:
            head += '<meta name="robots" content="noindex">'
        return HTMLResponse(f"<!doctype html><html><head>{head}</head><body>{number}</body>")

    routes = [Route("/robots.txt", robots), Route("/{language}/{number:int}", page)]
    site = Starlette(routes=routes)
    site.add_middleware(
        SitemapMiddleware, base_url=base, limits=Limits(max_urls=5_000), sources=sources(urls)
    )
    return site


def app() -> Any:
    return build(int(os.environ.get("INDEXABLE_URLS", "20000")))
