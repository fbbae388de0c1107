"""App drivers for the Django middleware: Django's own WSGI and ASGI handlers, in-process.

Each app is a handler built while ``MIDDLEWARE`` lists the middleware first and
``SITEMAP_MIDDLEWARE`` holds the sources and settings (the tests' one Django project,
:mod:`tests.django_setup`), so requests go through Django's request handling, the
middleware's loading and its settings exactly as in a project. Other paths get the
project's 404, as the standalone apps of the other drivers answer (:class:`NoViews`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import unquote

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIHandler
from django.test import override_settings

from sitemap_middleware import BadRowStats
from sitemap_middleware.cli.wsgi_client import wsgi_environ
from sitemap_middleware.contrib.django import SitemapMiddleware
from sitemap_middleware.core.sitemap import Sitemap

from .app_drivers import RawHeaders, Reply, _exchange, _scope, _wsgi_exchange
from .django_setup import setup

T = TypeVar("T")
MIDDLEWARE = "sitemap_middleware.contrib.django.SitemapMiddleware"
urlpatterns: list[Any] = []


class NoViews:
    """Inside the sitemap's middleware: every other path resolves against no view (404).
    Sync and async, so the sitemap's middleware runs async under the ASGI handler."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: Any) -> Any:
        request.urlconf = __name__
        return self.get_response(request)


def handler(kind: type[BaseHandler], sources: object, **settings: Any) -> Any:
    """A Django handler whose middleware serves ``sources`` with ``settings``."""
    setup()
    options = {"sources": sources, **settings}
    middleware = [MIDDLEWARE, f"{__name__}.NoViews"]
    with override_settings(MIDDLEWARE=middleware, SITEMAP_MIDDLEWARE=options):
        return kind()


def middleware_of(app: Any) -> SitemapMiddleware:
    """The middleware inside a handler (Django wraps each one, keeping ``__wrapped__``)."""
    node = app._middleware_chain
    while not isinstance(node, SitemapMiddleware):
        node = node.__wrapped__
    return node


class DjangoApp:
    """A handler and its middleware, with what the behaviour tests ask of an app."""

    def __init__(self, app: Any, runner: asyncio.Runner | None = None) -> None:
        self.handler = app
        self.middleware = middleware_of(app)
        self._runner = runner

    @property
    def stats(self) -> dict[str, BadRowStats]:
        return self.middleware.stats

    @property
    def sitemap(self) -> Sitemap:
        return self.middleware.sitemap

    def recount(self) -> None:
        if self._runner is None:
            self.middleware.recount()
        else:
            self._runner.run(self.middleware.arecount())

    def close(self) -> None:
        self.middleware.close()


class DjangoWSGI(DjangoApp):
    """Django's WSGI handler as the behaviour tests' WSGI app (``make_app``)."""

    wsgi = True

    def __init__(self, sources: object, **settings: Any) -> None:
        super().__init__(handler(WSGIHandler, sources, **settings))

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.handler(environ, start_response)


class DjangoASGI(DjangoApp):
    """Django's ASGI handler as the behaviour tests' ASGI app (``make_app``)."""

    def __init__(self, sources: object, **settings: Any) -> None:
        super().__init__(handler(ASGIHandler, sources, **settings))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.handler(scope, receive, send)

    async def recount(self) -> None:  # type: ignore[override]  # as SitemapApp's
        await self.middleware.arecount()


APPS: dict[str, type[DjangoApp]] = {"django-wsgi": DjangoWSGI, "django-asgi": DjangoASGI}
"""The behaviour tests' apps, by adapter name (``tests.conftest.ADAPTERS``)."""


class DjangoWsgiDriver:
    """Django's WSGI handler, called as a WSGI server calls it."""

    name = "django-wsgi"
    async_sources = True

    def make(self, sources: object, **settings: Any) -> DjangoApp:
        return DjangoApp(handler(WSGIHandler, sources, **settings))

    def stats(self, app: Any) -> dict[str, BadRowStats]:
        stats: dict[str, BadRowStats] = app.stats
        return stats

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(work)

    def discard(self, app: Any) -> None:
        app.close()

    def close(self) -> None:
        pass

    def request(
        self, app: Any, method: str, target: bytes, headers: RawHeaders | None = None
    ) -> Reply:
        environ = wsgi_environ(
            method, target, list(headers or []), "https", ("127.0.0.1", "8000"), multithread=True
        )
        return _own(app, method, target, _wsgi_exchange(app.handler, environ))

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        return [self.request(app, *request) for request in requests]


class DjangoAsgiDriver:
    """Django's ASGI handler on one long-lived event loop, as uvicorn would call it."""

    name = "django-asgi"
    async_sources = True

    def __init__(self) -> None:
        self._runner = asyncio.Runner()

    def make(self, sources: object, **settings: Any) -> DjangoApp:
        return DjangoApp(handler(ASGIHandler, sources, **settings), self._runner)

    def stats(self, app: Any) -> dict[str, BadRowStats]:
        stats: dict[str, BadRowStats] = app.stats
        return stats

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(work)

    def discard(self, app: Any) -> None:
        pass

    def close(self) -> None:
        self._runner.close()

    def request(
        self, app: Any, method: str, target: bytes, headers: RawHeaders | None = None
    ) -> Reply:
        return self.requests(app, [(method, target, headers)])[0]

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        async def each() -> list[Reply]:
            return [
                _own(app, request[0], request[1], await _exchange(app.handler, _scope(*request)))
                for request in requests
            ]

        return self._runner.run(each())


def _own(app: DjangoApp, method: str, target: bytes, reply: Reply) -> Reply:
    """The reply as a server sends it. Header names in any case: Django's ASGI handler sends
    them as the response spells them (``Content-Type`` on the project's own answers and on
    the 400 it gives before any middleware runs), and HTTP ignores their case. A HEAD without
    the body a project's view made (the middleware's answers are left as they are)."""
    cased = {
        f"header {name!r}: {value!r} is malformed"
        for name, value in reply.headers
        if name != name.lower() and not any(c in value for c in b"\r\n\x00")
    }
    reply = replace(reply, problems=[p for p in reply.problems if p not in cased])
    path = unquote(target.decode("latin-1").partition("?")[0])
    ours = app.middleware.sitemap.route(path) is not None or path == "/robots.txt"
    return reply if ours or method != "HEAD" else replace(reply, body=b"")
