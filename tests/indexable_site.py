"""A site with planted indexability faults, for ``check --audit-indexable``, on three frameworks.

The middleware serves its sitemap (an index of three sources: ``pages``, ``en``,
``de``) and adds its line to the site's ``robots.txt``; every other path is the
site's own, answered by :func:`answer` through Starlette, Flask or Django views. With
``clean``, the sitemap lists only the pages that are in order, and the one-way
hreflang alternate lists its URL back.

Planted (``FAULTS``: the finding each gives, as code, listed path, subject path):

* ``/moved``: ``301`` to ``/ok/1``; ``/gone``: ``404``;
* ``/meta-noindex``: ``<meta name="robots" content="noindex, follow">``;
* ``/header-noindex``: ``X-Robots-Tag: googlebot: noindex`` (Googlebot only);
* ``/canonical``: ``<link rel="canonical">`` to ``/ok/2``;
* ``/private/report``: robots.txt disallows ``/private/`` for Googlebot (Bingbot and the
  others read the ``*`` group, which allows it);
* ``/en/hello``: its sitemap entry lists ``/de/hallo`` as its German version; that page
  is in no sitemap and its head lists no alternate.

In order: ``/ok/1`` (its own canonical, absolute), ``/ok/2`` (a relative one),
``/ok/3`` (its own canonical in a ``Link`` header, and ``X-Robots-Tag:
otherbot: noindex``, of no concern), ``/admin/ok`` (the ``*`` group disallows only
``/admin/secret``), and ``/en/about`` with ``/de/ueber``, each listing the other in its
own sitemap entry, in another source's sitemap (no page request needed).

Module attributes: ``starlette``, ``starlette_clean``, ``flask``, ``flask_clean`` (for
``check --app``), built for ``INDEXABLE_BASE`` (default ``http://site.test/``), as
:func:`django_sources` and :func:`django_view` are for ``tests.indexable_django``
(``INDEXABLE_CLEAN=1``: the clean site).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from sitemap_middleware import Entry, IterableSource, SitemapMiddleware, SitemapWSGIMiddleware

from .threaded import serving_in_thread

BASE = os.environ.get("INDEXABLE_BASE", "http://site.test/")
CLEAN = os.environ.get("INDEXABLE_CLEAN") == "1"

ROBOTS_TXT = """\
User-agent: Googlebot
Disallow: /private/

User-agent: *
Disallow: /admin/secret
"""

GOOD_PAGES = ["/ok/1", "/ok/2", "/ok/3", "/admin/ok"]
FAULTY_PAGES = ["/moved", "/gone", "/meta-noindex", "/header-noindex", "/canonical"]
FAULTS = {
    ("indexable.redirect", "/moved", ""),
    ("indexable.status", "/gone", ""),
    ("indexable.noindex", "/meta-noindex", ""),
    ("indexable.noindex", "/header-noindex", ""),
    ("indexable.canonical", "/canonical", ""),
    ("indexable.robots", "/private/report", ""),
    ("indexable.hreflang", "/en/hello", "/de/hallo"),
}
"""Each finding the faulty site must give, and no other."""
SOURCES = ("/sitemap-pages", "/sitemap-en", "/sitemap-de")


@dataclass
class Answer:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: str = ""
    content_type: str = "text/html; charset=utf-8"


def _page(path: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head><title>{path}</title>{head}</head>"
        f"<body><h1>{path}</h1></body></html>"
    )


def answer(path: str, base: str = BASE, clean: bool = CLEAN) -> Answer:
    """The site's own answer for ``path`` (everything but the sitemap)."""
    url = base.rstrip("/") + path
    if path == "/robots.txt":
        return Answer(body=ROBOTS_TXT, content_type="text/plain")
    if path == "/ok/1":
        return Answer(body=_page(path, f'<link rel="canonical" href="{url}">'))
    if path == "/ok/2":
        return Answer(body=_page(path, '<link rel="canonical" href="/ok/2">'))
    if path == "/ok/3":
        headers = [("Link", f'<{url}>; rel="canonical"'), ("X-Robots-Tag", "otherbot: noindex")]
        return Answer(headers=headers, body=_page(path))
    if path == "/moved":
        return Answer(301, [("Location", base.rstrip("/") + "/ok/1")], "moved")
    if path == "/meta-noindex":
        return Answer(body=_page(path, '<meta name="robots" content="noindex, follow">'))
    if path == "/header-noindex":
        return Answer(headers=[("X-Robots-Tag", "googlebot: noindex")], body=_page(path))
    if path == "/canonical":
        other = base.rstrip("/") + "/ok/2"
        return Answer(body=_page(path, f'<link rel="canonical" href="{other}">'))
    if path == "/de/hallo":
        back = '<link rel="alternate" hreflang="en" href="/en/hello">' if clean else ""
        return Answer(body=_page(path, back))
    if path in ("/admin/ok", "/private/report", "/en/about", "/de/ueber", "/en/hello"):
        return Answer(body=_page(path))
    return Answer(404, body="not found", content_type="text/plain")


def sources(clean: bool = CLEAN) -> dict[str, list[Entry]]:
    listed = GOOD_PAGES if clean else [*GOOD_PAGES, *FAULTY_PAGES, "/private/report"]
    about = {"en": "/en/about", "de": "/de/ueber"}
    hello = {"en": "/en/hello", "de": "/de/hallo"}
    return {
        "pages": [Entry(path) for path in listed],
        "en": [Entry("/en/about", alternates=about), Entry("/en/hello", alternates=hello)],
        "de": [Entry("/de/ueber", alternates=about)],
    }


# --- Starlette ---------------------------------------------------------------------------


def starlette_app(base: str = BASE, clean: bool = CLEAN) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def view(request: Request) -> Response:
        found = answer(request.url.path, base, clean)
        return Response(
            found.body, found.status, dict(found.headers), media_type=found.content_type
        )

    site = Starlette(routes=[Route("/{path:path}", view)])
    site.add_middleware(SitemapMiddleware, base_url=base, sources=sources(clean))
    return site


# --- Flask -------------------------------------------------------------------------------


def flask_app(base: str = BASE, clean: bool = CLEAN) -> Any:
    from flask import Flask, Response, request

    site = Flask("indexable_site")

    @site.route("/", defaults={"path": ""})
    @site.route("/<path:path>")
    def view(path: str) -> Response:
        found = answer(request.path, base, clean)
        return Response(found.body, found.status, found.headers, content_type=found.content_type)

    site.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        site.wsgi_app, base_url=base, sources=sources(clean)
    )
    return site


# --- Django (settings: tests.indexable_django) -------------------------------------------


def django_sources() -> list[IterableSource]:
    return [IterableSource(entries, name=name) for name, entries in sources().items()]


def django_view(request: Any) -> Any:
    from django.http import HttpResponse

    found = answer(request.path)
    response = HttpResponse(found.body, status=found.status, content_type=found.content_type)
    for name, value in found.headers:
        response[name] = value
    return response


# --- A WSGI server in a thread -----------------------------------------------------------


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_wsgi(build: Callable[[str], Any]) -> Iterator[str]:
    """Serve ``build(base_url)`` on a free port of 127.0.0.1 in a thread; yield its base URL."""
    server = make_server(
        "127.0.0.1", 0, _unset, server_class=_ThreadingServer, handler_class=_QuietHandler
    )
    base = f"http://127.0.0.1:{server.server_port}/"
    server.set_app(build(base))
    with serving_in_thread(server):
        yield base


def _unset(environ: Any, start_response: Any) -> Any:
    raise RuntimeError("no application yet")


starlette = starlette_app(BASE, False)
starlette_clean = starlette_app(BASE, True)
flask = flask_app(BASE, False)
flask_clean = flask_app(BASE, True)
