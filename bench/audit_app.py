"""The site ``bench_audit.py`` audits: a Starlette app whose sitemap the middleware serves
(``AUDIT_URLS`` articles, pages of 1,000 URLs) and whose article pages are real HTML pages
with a ``Last-Modified`` (every tenth a day after its lastmod: an unannounced edit).

Run by uvicorn on 127.0.0.1; ``AUDIT_BASE`` is the URL it is reached at.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import Entry, Limits, SitemapMiddleware
from sitemap_middleware.core.http import format_http_date

URLS = int(os.environ.get("AUDIT_URLS", "5000"))
BASE = os.environ.get("AUDIT_BASE", "http://127.0.0.1:8000/")
START = datetime(2025, 1, 1, tzinfo=UTC)
PARAGRAPH = "<p>" + "A paragraph of the article, as long as a real one is. " * 12 + "</p>\n"


def lastmod(number: int) -> datetime:
    return START + timedelta(minutes=7 * number)


async def article(request: Request) -> HTMLResponse:
    number = int(request.path_params["number"])
    if not 0 <= number < URLS:
        return HTMLResponse("<h1>Not found</h1>", status_code=404)
    changed = lastmod(number) + timedelta(days=1 if number % 10 == 0 else 0)
    body = f"<!doctype html><title>Article {number}</title><h1>Article {number}</h1>\n"
    return HTMLResponse(body + PARAGRAPH * 8, headers={"Last-Modified": format_http_date(changed)})


app = Starlette(routes=[Route("/articles/{number:int}", article)])
app.add_middleware(
    SitemapMiddleware,
    base_url=BASE,
    limits=Limits(max_urls=1000),
    sources={"articles": [Entry(f"/articles/{i}", lastmod=lastmod(i)) for i in range(URLS)]},
)
