"""A site whose ``robots.txt`` the ``robots_filter`` tests control, behind every adapter.

:class:`Site` puts the sitemap in front of an application that answers ``/robots.txt`` as
:class:`RobotsServed` says (its rules, a status, an exception, a view that hangs until
released, a sync or an async view), through one of :data:`KINDS`: the ASGI middleware
around Starlette, the WSGI middleware around a WSGI app, and Django's middleware under
Django's WSGI and ASGI handlers, the views below it (:class:`RobotsViews`). Django is
imported only when a Django site is made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from sitemap_middleware import SitemapMiddleware, SitemapWSGIMiddleware
from sitemap_middleware.core.sitemap import Sitemap
from sitemap_middleware.testing import ASGIClient, WSGIClient
from sitemap_middleware.testing import Response as ClientResponse

BASE = "https://example.com/"
LOCS = ["/", "/public/a", "/private/b", "/private/c", "/drafts/d"]
DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow: /\n"
ALLOWED = ["/", "/public/a", "/drafts/d"]
"""The locs :data:`DISALLOW_PRIVATE` leaves in."""
KINDS = ["asgi", "wsgi", "django-wsgi", "django-asgi"]
ASYNC_KINDS = ("asgi", "django-asgi")
"""The kinds whose application can have an async robots.txt view."""
UNAVAILABLE = b"Sitemap temporarily unavailable\n"


@dataclass
class RobotsServed:
    """What the app answers for /robots.txt, changed by the tests; each request counted."""

    status: int = 200
    body: bytes = DISALLOW_PRIVATE
    raises: bool = False
    hangs: bool = False
    """The view waits for ``release`` (30 s at most) before it answers."""
    view: str = "async"
    """``sync``: a sync view (in Starlette's thread pool; Django's only kind under WSGI)."""
    release: threading.Event = field(default_factory=threading.Event)
    asked: list[str] = field(default_factory=list)
    answered: int = 0
    """How many requests the view has answered (or raised for)."""

    def answer_sync(self, host: str) -> tuple[int, bytes]:
        self.asked.append(host)
        try:
            if self.hangs:
                self.release.wait(30)
            return self._answer()
        finally:
            self.answered += 1

    async def answer_async(self, host: str) -> tuple[int, bytes]:
        self.asked.append(host)
        try:
            deadline = time.monotonic() + 30
            hanging = self.hangs
            while hanging and not self.release.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110
                await anyio.sleep(0.01)  # released from another thread
            return self._answer()
        finally:
            self.answered += 1

    def _answer(self) -> tuple[int, bytes]:
        if self.raises:
            raise RuntimeError("robots.txt view failed")
        return self.status, self.body


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def starlette_app(served: RobotsServed) -> Starlette:
    async def robots(request: Request) -> Response:
        status, body = await served.answer_async(request.headers.get("host", ""))
        return PlainTextResponse(body, status_code=status)

    def robots_sync(request: Request) -> Response:  # Starlette runs it in its thread pool
        status, body = served.answer_sync(request.headers.get("host", ""))
        return PlainTextResponse(body, status_code=status)

    endpoint = robots_sync if served.view == "sync" else robots
    return Starlette(routes=[Route("/robots.txt", endpoint)])


def wsgi_app(served: RobotsServed) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ["PATH_INFO"] != "/robots.txt":
            start_response("404 Not Found", [("content-type", "text/plain")])
            return [b""]
        status, body = served.answer_sync(environ.get("HTTP_HOST", ""))
        start_response(f"{status} X", [("content-type", "text/plain")])
        return [body]

    return app


# --- Django: the project's views below the sitemap's middleware ---------------------------

_BUILDING: list[RobotsServed] = []
"""What the views of the Django handler being built answer (Django makes the middleware)."""


class RobotsViews:
    """Below the sitemap's middleware: ``/robots.txt`` answered as :class:`RobotsServed`
    says (an exception raised here becomes Django's 500), every other path a 404. Sync and
    async, so the sitemap's middleware runs async under the ASGI handler; there a sync view
    runs in Django's thread for sync work, as Django runs a sync view."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        from asgiref.sync import iscoroutinefunction, markcoroutinefunction

        self.served = _BUILDING[-1]
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: Any) -> Any:
        if self.is_async:
            return self._acall(request)
        if request.path_info != "/robots.txt":
            return _text(404, b"")
        return _text(*self.served.answer_sync(request.headers.get("host", "")))

    async def _acall(self, request: Any) -> Any:
        from asgiref.sync import sync_to_async

        if request.path_info != "/robots.txt":
            return _text(404, b"")
        host = request.headers.get("host", "")
        if self.served.view == "sync":
            return _text(*await sync_to_async(self.served.answer_sync)(host))
        return _text(*await self.served.answer_async(host))


def _text(status: int, body: bytes) -> Any:
    from django.http import HttpResponse

    return HttpResponse(body, status=status, content_type="text/plain")


def django_app(kind: str, served: RobotsServed, **settings: Any) -> Any:
    """Django's WSGI or ASGI handler, the sitemap's middleware first and the views below."""
    from django.core.handlers.asgi import ASGIHandler
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import override_settings

    from .adapters import MIDDLEWARE, DjangoApp
    from .django_setup import setup

    setup()
    _BUILDING.append(served)
    try:
        with override_settings(
            MIDDLEWARE=[MIDDLEWARE, f"{__name__}.RobotsViews"], SITEMAP_MIDDLEWARE=settings
        ):
            return DjangoApp(WSGIHandler() if kind == "django-wsgi" else ASGIHandler())
    finally:
        _BUILDING.pop()


class Site:
    """One sitemap in front of an app whose robots.txt the test controls."""

    def __init__(self, kind: str, served: RobotsServed, **settings: Any) -> None:
        self.kind = kind
        self.served = served
        options: dict[str, Any] = {"sources": {"pages": LOCS}, "base_url": BASE, **settings}
        self.middleware: Any
        if kind == "asgi":
            self.middleware = SitemapMiddleware(starlette_app(served), **options)
        elif kind == "wsgi":
            self.middleware = SitemapWSGIMiddleware(wsgi_app(served), **options)
        else:
            self.middleware = django_app(kind, served, **options)
        self.clock = Clock()
        rules = self.sitemap.robots_rules
        if rules is not None:
            rules.clock = self.clock

    @property
    def sitemap(self) -> Sitemap:
        sitemap: Sitemap = self.middleware.sitemap
        return sitemap

    @property
    def app(self) -> Any:
        """What the server calls."""
        return self.middleware.handler if self.kind.startswith("django") else self.middleware

    def get(self, path: str = "/sitemap.xml", headers: dict[str, str] | None = None) -> Any:
        """One request (an ASGI one on an event loop of its own)."""
        if self.kind in ASYNC_KINDS:
            return anyio.run(self.aget, path, headers)
        return WSGIClient(self.app, BASE).request("GET", path, headers)

    async def aget(
        self, path: str = "/sitemap.xml", headers: dict[str, str] | None = None
    ) -> ClientResponse:
        """One request on the running event loop (a WSGI one from a worker thread)."""
        if self.kind in ASYNC_KINDS:
            return await ASGIClient(self.app, BASE).request("GET", path, headers)
        client = WSGIClient(self.app, BASE)
        return await anyio.to_thread.run_sync(lambda: client.request("GET", path, headers))

    def listed(self) -> list[str]:
        return listed(self.get())


def listed(response: Any) -> list[str]:
    """The locs of :data:`LOCS` a 200's urlset lists."""
    assert response.status == 200, response
    text = response.body.decode()
    return [loc for loc in LOCS if f"<loc>{BASE.rstrip('/')}{loc}</loc>" in text]
