"""Sites for the lastmod audit (``check --audit-lastmod``), with scripted lastmods and pages.

``ScriptedSite`` is a WSGI application: a sitemap index at ``/sitemap.xml``
listing one ``urlset`` per scenario, and the pages they list under ``/p/``,
each answering with its scripted status and ``Last-Modified`` (or 405 to
``HEAD``). It counts every page request (method and path) and the most page
requests in flight at once; each page takes ``page_seconds`` to answer so
that overlaps show. :func:`serve` runs it under a threaded HTTP server on
127.0.0.1; ``tests.audit_site:app`` is one for ``check --app``, and
``middleware_app`` a Starlette site whose sitemap the middleware serves.

Scenarios (``SCENARIOS``: child name -> pages), ``now`` being the site's start:

* ``stamp``: 20 pages, every lastmod the same instant (a build stamp); pages
  modified a day before it;
* ``future``: 12 pages, distinct lastmods, 3 of them 10 days ahead;
* ``older``: 12 pages, 8 of them modified a day after their lastmod;
* ``missing``: 10 pages, 4 without Last-Modified, 3 whose Last-Modified is the
  response's Date, 3 honest;
* ``nohead``: 10 pages answering 405 to HEAD, honest to GET;
* ``status``: 10 pages, one 404 and one 301;
* ``good``: 10 honest pages, lastmods with a date only or to the second.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from sitemap_middleware import Entry, Limits, SitemapMiddleware
from sitemap_middleware.core.http import format_http_date

from .threaded import serving_in_thread

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML = '<?xml version="1.0" encoding="UTF-8"?>'
StartResponse = Callable[[str, list[tuple[str, str]]], object]


@dataclass(frozen=True)
class Page:
    lastmod: str | None
    last_modified: datetime | None
    status: int = 200
    head_allowed: bool = True
    generated: bool = False
    """Last-Modified is the time of the response."""


def _w3c(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def scenarios(now: datetime) -> dict[str, list[Page]]:
    day = timedelta(days=1)
    base = now - 100 * day

    def honest(i: int) -> Page:
        return Page(_w3c(base + i * day), base + i * day - timedelta(hours=1))

    stamp = now.replace(microsecond=0) - timedelta(hours=2)
    return {
        "stamp": [Page(_w3c(stamp), base + i * day) for i in range(20)],
        "future": [
            Page(_w3c(now + 10 * day), base) if i % 4 == 1 else honest(i) for i in range(12)
        ],
        "older": [
            Page(_w3c(base + i * day), base + (i + 1) * day) if i < 8 else honest(i)
            for i in range(12)
        ],
        "missing": [
            Page(_w3c(base + i * day), None)
            if i < 4
            else Page(_w3c(base + i * day), None, generated=True)
            if i < 7
            else honest(i)
            for i in range(10)
        ],
        "nohead": [
            Page(_w3c(base + i * day), base + i * day, head_allowed=False) for i in range(10)
        ],
        "status": [
            Page(_w3c(base + i * day), base, status={3: 404, 6: 301}.get(i, 200)) for i in range(10)
        ],
        "good": [
            Page((base + i * day).date().isoformat(), base + i * day + timedelta(hours=5))
            if i % 2
            else honest(i)
            for i in range(10)
        ],
    }


@dataclass
class ScriptedSite:
    origin: str = "http://127.0.0.1"
    page_seconds: float = 0.0
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    starts: list[float] = field(default_factory=list)
    agents: set[str] = field(default_factory=set)
    peak: int = 0

    def __post_init__(self) -> None:
        self.children = scenarios(self.now)
        self._lock = threading.Lock()
        self._active = 0

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.starts.clear()
            self.agents.clear()
            self.peak = 0

    def page_requests(self) -> int:
        return sum(n for (_, path), n in self.requests.items() if path.startswith("/p/"))

    def loc(self, child: str, number: int) -> str:
        return f"{self.origin}/p/{child}/{number}"

    def __call__(self, environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        if path == "/sitemap.xml":
            return _reply(start, method, 200, _index(self), "application/xml")
        name = path.removeprefix("/sitemap-").removesuffix(".xml")
        if path.startswith("/sitemap-") and name in self.children:
            return _reply(start, method, 200, _urlset(self, name), "application/xml")
        if path.startswith("/p/"):
            self.agents.add(environ.get("HTTP_USER_AGENT", ""))
            return self._page(start, method, path)
        return _reply(start, method, 404, b"not found")

    def _page(self, start: StartResponse, method: str, path: str) -> Iterable[bytes]:
        with self._lock:
            self.requests[(method, path)] += 1
            self.starts.append(time.monotonic())
            self._active += 1
            self.peak = max(self.peak, self._active)
        try:
            time.sleep(self.page_seconds)
            _, child, number = path.rsplit("/", 2)
            page = self.children[child][int(number)]
            if method == "HEAD" and not page.head_allowed:
                return _reply(start, method, 405, b"", extra=[("Allow", "GET")])
            headers = []
            if page.generated:
                headers.append(("Last-Modified", format_http_date(datetime.now(UTC))))
            elif page.last_modified is not None:
                headers.append(("Last-Modified", format_http_date(page.last_modified)))
            if page.status == 301:
                headers.append(("Location", f"{self.origin}/elsewhere"))
            return _reply(start, method, page.status, b"<p>page</p>", "text/html", headers)
        finally:
            with self._lock:
                self._active -= 1


def _index(site: ScriptedSite) -> bytes:
    items = "".join(
        f"<sitemap><loc>{site.origin}/sitemap-{name}.xml</loc></sitemap>" for name in site.children
    )
    return f'{XML}<sitemapindex xmlns="{NS}">{items}</sitemapindex>'.encode()


def _urlset(site: ScriptedSite, name: str) -> bytes:
    items = []
    for number, page in enumerate(site.children[name]):
        lastmod = f"<lastmod>{page.lastmod}</lastmod>" if page.lastmod else ""
        items.append(f"<url><loc>{site.loc(name, number)}</loc>{lastmod}</url>")
    return f'{XML}<urlset xmlns="{NS}">{"".join(items)}</urlset>'.encode()


def _reply(
    start: StartResponse,
    method: str,
    status: int,
    body: bytes,
    content_type: str = "text/plain",
    extra: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    reasons = {200: "OK", 301: "Moved Permanently", 404: "Not Found", 405: "Method Not Allowed"}
    headers = [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        ("Date", format_http_date(datetime.now(UTC))),
        ("ETag", f'"{hash(body) & 0xFFFFFFFF:x}"'),
        *(extra or []),
    ]
    start(f"{status} {reasons[status]}", headers)
    return [] if method == "HEAD" else [body]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(site: ScriptedSite) -> Iterator[str]:
    """Serve ``site`` on a free port of 127.0.0.1 in a thread; yield its origin."""
    server = make_server(
        "127.0.0.1", 0, site, server_class=_ThreadingServer, handler_class=_QuietHandler
    )
    site.origin = f"http://127.0.0.1:{server.server_port}"
    with serving_in_thread(server):
        yield site.origin


# ``check --app tests.audit_site:app http://site.test/sitemap.xml``: answered in-process.
app = ScriptedSite(origin="http://site.test")

MIDDLEWARE_BASE = "https://example.com/"
ARTICLES = datetime(2024, 3, 1, tzinfo=UTC)


def _article_lastmod(number: int) -> datetime:
    return ARTICLES + timedelta(days=number)


async def article(request: Request) -> PlainTextResponse:
    number = int(request.path_params["number"])
    # Articles 0-9 changed on their lastmod; 10-19 a day after it (an unannounced edit).
    changed = _article_lastmod(number) + timedelta(days=number >= 10)
    return PlainTextResponse("article", headers={"Last-Modified": format_http_date(changed)})


def create_middleware_app() -> Starlette:
    site = Starlette(routes=[Route("/articles/{number:int}", article)])
    entries = [Entry(f"/articles/{i}", lastmod=_article_lastmod(i)) for i in range(20)]
    site.add_middleware(
        SitemapMiddleware,
        base_url=MIDDLEWARE_BASE,
        limits=Limits(max_urls=10),  # two children: articles-1 and articles-2
        sources={"articles": entries},
    )
    return site


middleware_app = create_middleware_app()
