"""Every adapter, declared once, and the two ways the tests speak to them.

:data:`ADAPTERS` lists the server adapters the behaviour scenarios run through: the
ASGI and WSGI apps and middleware, and Django's middleware under Django's own WSGI and
ASGI handlers. Each :class:`Adapter` entry builds, for one adapter,

* the standalone sitemap app (404 for every other path): the ``make_app`` fixture of
  :mod:`tests.conftest`, and ``driver.make`` of the hostile property tests;
* the middleware around an application of its interface (``wrap``), where the adapter
  is one (Django's middleware wraps the project's views instead:
  :mod:`tests.contrib.django.test_django_middleware`).

Two ways to send requests, both in-process through :mod:`sitemap_middleware.testing`:

* :func:`call` (async): one request, every message the app sends kept as an
  :class:`Exchange` (a WSGI answer recorded as the same ASGI-shaped messages, so every
  check reads the same for both), each complete sitemap checked against the schema;
* :class:`AppDriver` (sync, :data:`DRIVERS`): a raw request-target and raw header lines
  in, a :class:`Reply` out, with the ``Date`` a server writes and the app's breaches of
  its server interface's rules as ``problems``.

A new adapter is one entry of :data:`ADAPTERS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal, Protocol, TypeVar
from urllib.parse import quote, unquote

import anyio.to_thread

from sitemap_middleware import (
    BadRowStats,
    SitemapApp,
    SitemapMiddleware,
    SitemapWSGIApp,
    SitemapWSGIMiddleware,
)
from sitemap_middleware.core.http import SINGLETON_FIELDS, format_http_date
from sitemap_middleware.servers.types import Message
from sitemap_middleware.testing import (
    ResponseFailed,
    WSGIResponse,
    asgi_exchange,
    asgi_scope,
    read_wsgi_app,
    wsgi_environ,
)

T = TypeVar("T")
RawHeaders = list[tuple[bytes, bytes]]
PATH_SAFE = "/:@!$&'()*+,;=-._~"
"""Characters a path keeps as they are in its request-target (the rest are %-escaped)."""


# --- the adapters ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    name: str
    interface: Literal["asgi", "wsgi"]
    """The server interface its apps speak."""
    app: Callable[..., Any]
    """``app(sources=..., base_url=..., ...)``: the standalone sitemap app."""
    wrap: Callable[..., Any] | None = None
    """``wrap(inner, sources=..., ...)``: the middleware around ``inner`` (an app of the
    same interface), or None when the adapter wraps something else."""
    as_sent: Callable[[Any, str, bytes, Reply], Reply] | None = None
    """What the server makes of a reply before sending it (``as_sent(app, method, target,
    reply)``), when not the reply as it is."""


def _django_wsgi(**settings: Any) -> DjangoApp:
    return DjangoWSGI(**settings)


def _django_asgi(**settings: Any) -> DjangoApp:
    return DjangoASGI(**settings)


def _django_as_sent(app: DjangoApp, method: str, target: bytes, reply: Reply) -> Reply:
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
    middleware = app.middleware
    routes = middleware.sites.routes if middleware.sites is not None else middleware.sitemap.routes
    ours = routes.match(path) is not None or path == "/robots.txt"
    return reply if ours or method != "HEAD" else replace(reply, body=b"")


ADAPTERS: dict[str, Adapter] = {
    adapter.name: adapter
    for adapter in (
        Adapter("asgi", "asgi", SitemapApp, SitemapMiddleware),
        Adapter("wsgi", "wsgi", SitemapWSGIApp, SitemapWSGIMiddleware),
        Adapter("django-wsgi", "wsgi", _django_wsgi, as_sent=_django_as_sent),
        Adapter("django-asgi", "asgi", _django_asgi, as_sent=_django_as_sent),
    )
}
"""Every adapter, by name (the name is the parameter of the tests run through each)."""


def sitemap_app(adapter: str, **settings: Any) -> Any:
    """The standalone sitemap app of one adapter."""
    return ADAPTERS[adapter].app(**settings)


# --- call(): every message of one exchange -------------------------------------------------


@dataclass
class Exchange:
    messages: list[Message] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.messages[0]["headers"]}

    @property
    def bodies(self) -> list[bytes]:
        return [m.get("body", b"") for m in self.messages if m["type"] == "http.response.body"]

    @property
    def body(self) -> bytes:
        return b"".join(self.bodies)

    @property
    def complete(self) -> bool:
        last = self.messages[-1] if self.messages else {}
        return last.get("type") == "http.response.body" and not last.get("more_body", False)


async def call(
    app: Any,
    method: str = "GET",
    path: str = "/sitemap.xml",
    headers: dict[str, str] | None = None,
    root_path: str = "",
    disconnect_after: int | None = None,
    wsgi: bool = False,
    http_version: str = "1.1",
) -> Exchange:
    """One request. ``disconnect_after=n``: the client goes away after n body messages.

    A :class:`SitemapWSGIMiddleware` (or any app with ``wsgi=True``) is called as a
    WSGI app in a worker thread, as a threaded WSGI server would.
    """
    if wsgi or isinstance(app, SitemapWSGIMiddleware) or getattr(app, "wsgi", False):
        exchange = await anyio.to_thread.run_sync(
            lambda: call_wsgi(app, method, path, headers, root_path, disconnect_after, http_version)
        )
        _check(exchange, method)
        return exchange
    target = quote(root_path + path, safe=PATH_SAFE).encode("ascii")
    lines = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = asgi_scope(
        method,
        target,
        lines,
        "https",
        ("example.com", 443),
        root_path=root_path,
        http_version=http_version,
    )
    exchange = await exchange_asgi(app, scope, disconnect_after)
    _check(exchange, method)
    return exchange


async def exchange_asgi(
    app: Any, scope: dict[str, Any], disconnect_after: int | None = None
) -> Exchange:
    """Call an ASGI app with one request and keep every message; the client goes away when
    the response ends, or after ``disconnect_after`` body messages."""
    exchange = Exchange()
    try:
        await asgi_exchange(app, scope, exchange.messages.append, disconnect_after)
    except Exception as exc:
        exchange.error = exc
    return exchange


def _check(exchange: Exchange, method: str) -> None:
    from .support import check_served  # it imports this module

    if exchange.complete and method == "GET":
        headers = exchange.headers
        check_served(
            exchange.status,
            headers.get("content-type", ""),
            exchange.body,
            headers.get("content-encoding"),
        )


def call_wsgi(
    app: Callable[..., Iterable[bytes]],
    method: str = "GET",
    path: str = "/sitemap.xml",
    headers: dict[str, str] | None = None,
    script_name: str = "",
    disconnect_after: int | None = None,
    http_version: str = "1.1",
) -> Exchange:
    """One WSGI request, read as a server does; the client may go away after n chunks. The
    answer is recorded as ASGI-shaped messages."""
    # ``path`` is PATH_INFO itself (latin-1 characters): its bytes make the request-target.
    target = quote(path.encode("latin-1"), safe=PATH_SAFE).encode("ascii")
    lines = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    environ = wsgi_environ(
        method,
        target,
        lines,
        "https",
        ("example.com", "443"),
        script_name=script_name,
        http_version=http_version,
        multithread=True,
    )
    bodies: list[Message] = []

    def sink(data: bytes) -> None:
        bodies.append({"type": "http.response.body", "body": data, "more_body": True})
        if disconnect_after is not None and len(bodies) >= disconnect_after:
            raise _ClientGone

    exchange = Exchange()
    response = WSGIResponse(path, sink, head_request=method == "HEAD")
    try:
        read_wsgi_app(app, environ, response)
        response.head()
        bodies.append({"type": "http.response.body", "body": b"", "more_body": False})
    except _ClientGone:
        pass  # the server stops reading (and closes the iterable)
    except ResponseFailed as exc:
        exchange.error = exc.__cause__ or exc
    if response.status is not None:
        start = {
            "type": "http.response.start",
            "status": int(response.status.split()[0]),
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers],
        }
        exchange.messages = [start, *bodies]
    return exchange


class _ClientGone(Exception):
    """The client went away: the server stops reading the application's answer."""


# --- drivers: raw requests, replies with the server's view --------------------------------


@dataclass
class Reply:
    """What a client would have received, and what the app did wrong below HTTP."""

    status: int
    headers: RawHeaders
    body: bytes
    complete: bool
    """The response ended normally (not aborted)."""
    error: BaseException | None = None
    """An exception that escaped the app."""
    problems: list[str] = field(default_factory=list)
    """Breaches of the server interface's own rules (message order, header types)."""

    def header(self, name: str) -> str | None:
        values = self.values(name)
        return values[0] if values else None

    def values(self, name: str) -> list[str]:
        key = name.lower().encode("latin-1")
        return [v.decode("latin-1") for k, v in self.headers if k.lower() == key]


class AppDriver(Protocol):
    name: str
    async_sources: bool
    """Whether the adapter serves async sources (async generators, AsyncEngine)."""

    def make(self, sources: object, **settings: Any) -> Any:
        """The adapter's standalone sitemap app (404 for every other path)."""

    def stats(self, app: Any) -> dict[str, BadRowStats]: ...

    def request(
        self, app: Any, method: str, target: bytes, headers: RawHeaders | None = None
    ) -> Reply:
        """One request; ``target`` is the raw request-target (``/path?query``, %-escaped)."""

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run setup work where the app's sources live (the event loop of async engines)."""

    def discard(self, app: Any) -> None:
        """Release what an app holds (a WSGI app's event loop thread)."""

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        """Several requests in turn, ``(method, target, headers)`` each."""

    def close(self) -> None: ...


class _Driver:
    """What both interfaces' drivers share: the adapter's app, its stats, the server's view
    of each reply."""

    async_sources = True  # a WSGI adapter runs them on its own event loop thread

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.name = adapter.name

    def make(self, sources: object, **settings: Any) -> Any:
        return self.adapter.app(sources=sources, **settings)

    def stats(self, app: Any) -> dict[str, BadRowStats]:
        stats: dict[str, BadRowStats] = app.stats
        return stats

    def _as_sent(self, app: Any, method: str, target: bytes, reply: Reply) -> Reply:
        as_sent = self.adapter.as_sent
        return reply if as_sent is None else as_sent(app, method, target, reply)


class AsgiDriver(_Driver):
    """Calls the ASGI app directly on one long-lived event loop, as uvicorn would."""

    def __init__(self, adapter: Adapter) -> None:
        super().__init__(adapter)
        self._runner = asyncio.Runner()

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
        """Several requests, one after the other, in one run of the loop (anyio keeps its
        worker threads for the run: much faster than one run per request)."""

        async def each() -> list[Reply]:
            return [
                self._as_sent(app, method, target, await asgi_reply(app, method, target, headers))
                for method, target, headers in requests
            ]

        return self._runner.run(each())


class WsgiDriver(_Driver):
    """Calls the WSGI app as a server does: a PEP 3333 environ, the iterable read and closed."""

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(work)

    def discard(self, app: Any) -> None:
        app.close()

    def close(self) -> None:
        pass

    def request(
        self, app: Any, method: str, target: bytes, headers: RawHeaders | None = None
    ) -> Reply:
        return self._as_sent(app, method, target, wsgi_reply(app, method, target, headers))

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        return [self.request(app, *request) for request in requests]


def driver(name: str) -> AppDriver:
    """A driver for the adapter ``name`` (close it when done)."""
    adapter = ADAPTERS[name]
    return AsgiDriver(adapter) if adapter.interface == "asgi" else WsgiDriver(adapter)


DRIVERS: dict[str, Callable[[], AppDriver]] = {name: partial(driver, name) for name in ADAPTERS}
"""Every adapter the hostile properties run through, as a driver factory."""

SERVER = ("127.0.0.1", 8000)
"""The server the drivers' requests come to."""


async def asgi_reply(
    app: Callable[..., Awaitable[None]],
    method: str,
    target: bytes,
    headers: RawHeaders | None = None,
) -> Reply:
    """One request to an ASGI app, as uvicorn makes it, as a :class:`Reply`."""
    scope = asgi_scope(method, target, list(headers or []), "https", SERVER)
    arrived = datetime.now(UTC)
    exchange = await exchange_asgi(app, scope)
    return _server_date(_reply(exchange.messages, exchange.error), arrived)


def _server_date(reply: Reply, arrived: datetime) -> Reply:
    """The reply with the ``Date`` the server writes (the application writes none): the clock
    when the request arrived, in whole seconds, as uvicorn's cached one is at most. A
    singleton field the application writes twice is a problem."""
    if reply.status == 0:
        return reply
    for name in SINGLETON_FIELDS:
        if len(reply.values(name)) > 1:
            reply.problems.append(f"{name} written twice: {reply.values(name)}")
    if reply.values("date"):
        reply.problems.append(f"the application wrote a Date: {reply.values('date')}")
    else:
        reply.headers.append((b"date", format_http_date(arrived).encode("ascii")))
    return reply


def _reply(messages: list[Message], error: BaseException | None) -> Reply:
    problems = []
    if not messages or messages[0]["type"] != "http.response.start":
        return Reply(0, [], b"", False, error, ["no http.response.start"])
    start = messages[0]
    headers = list(start.get("headers", []))
    for name, value in headers:
        if not isinstance(name, bytes) or not isinstance(value, bytes):
            problems.append(f"header {name!r}: {value!r} is not bytes")
        elif name != name.lower() or any(c in value for c in b"\r\n\x00"):
            problems.append(f"header {name!r}: {value!r} is malformed")
    bodies = messages[1:]
    if any(m["type"] != "http.response.body" for m in bodies):
        problems.append(f"unexpected messages after the start: {[m['type'] for m in bodies]}")
    body = b"".join(m.get("body", b"") for m in bodies)
    complete = bool(bodies) and not bodies[-1].get("more_body", False)
    if complete and any(not m.get("more_body", False) for m in bodies[:-1]):
        problems.append("a body message after the last one")
    return Reply(int(start["status"]), headers, body, complete, error, problems)


def wsgi_reply(
    app: Callable[..., Iterable[bytes]],
    method: str,
    target: bytes,
    headers: RawHeaders | None = None,
    server: tuple[str, int] = SERVER,
) -> Reply:
    """One request to a WSGI app, as a threaded server makes it, as a :class:`Reply`."""
    environ = wsgi_environ(
        method,
        target,
        list(headers or []),
        "https",
        (server[0], str(server[1])),
        multithread=True,
    )
    arrived = datetime.now(UTC)
    return _server_date(_wsgi_reply(app, environ), arrived)


def _wsgi_reply(app: Callable[..., Iterable[bytes]], environ: dict[str, Any]) -> Reply:
    problems: list[str] = []
    body: list[bytes] = []
    response = WSGIResponse(environ["PATH_INFO"], body.append, environ["REQUEST_METHOD"] == "HEAD")
    error: BaseException | None = None
    complete = False
    try:
        read_wsgi_app(app, environ, response)
        complete = True
        response.head()
    except ResponseFailed as exc:
        if exc.__cause__ is not None:
            error = exc.__cause__  # the application raised
        else:
            problems.append(str(exc))
    if response.status is None:
        return Reply(0, [], b"", False, error, ["start_response never called", *problems])
    status, header_lines = response.status, response.headers
    raw_headers: RawHeaders = []
    for name, value in header_lines:
        if not isinstance(name, str) or not isinstance(value, str):
            problems.append(f"header {name!r}: {value!r} is not a str")
            continue
        try:
            raw_headers.append((name.encode("latin-1"), value.encode("latin-1")))
        except UnicodeEncodeError:
            problems.append(f"header {name!r}: {value!r} is not latin-1")
    for name, value in raw_headers:
        if any(c in value for c in b"\r\n\x00"):
            problems.append(f"header {name!r}: {value!r} is malformed")
    return Reply(int(status.split()[0]), raw_headers, b"".join(body), complete, error, problems)


# --- Django: its middleware under Django's own handlers -------------------------------------
# Each app is a handler built while ``MIDDLEWARE`` lists the middleware first and
# ``SITEMAP_MIDDLEWARE`` holds the sources and settings (the tests' one Django project,
# :mod:`tests.django_setup`), so requests go through Django's request handling, the
# middleware's loading and its settings exactly as in a project. Other paths get the
# project's 404, as the standalone apps of the other adapters answer (:class:`NoViews`).
# Django is imported only here, when a Django app is made.

MIDDLEWARE = "sitemap_middleware.contrib.django.SitemapMiddleware"
urlpatterns: list[Any] = []
"""No views: the URLconf :class:`NoViews` gives every request (this module)."""


class NoViews:
    """Inside the sitemap's middleware: every other path resolves against no view (404).
    Sync and async, so the sitemap's middleware runs async under the ASGI handler."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        from asgiref.sync import iscoroutinefunction, markcoroutinefunction

        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: Any) -> Any:
        request.urlconf = __name__
        return self.get_response(request)


def handler(kind: type[Any], sources: object, **settings: Any) -> Any:
    """A Django handler (``WSGIHandler``, ``ASGIHandler``) whose middleware serves ``sources``
    with ``settings`` (or, with ``sources=None``, the ``sites`` of ``settings``)."""
    from django.test import override_settings

    from .django_setup import setup

    setup()
    options = settings if sources is None else {"sources": sources, **settings}
    middleware = [MIDDLEWARE, f"{__name__}.NoViews"]
    with override_settings(MIDDLEWARE=middleware, SITEMAP_MIDDLEWARE=options):
        return kind()


def middleware_of(app: Any) -> Any:
    """The middleware inside a handler (Django wraps each one, keeping ``__wrapped__``)."""
    from sitemap_middleware.contrib.django import SitemapMiddleware as DjangoMiddleware

    node = app._middleware_chain
    while not isinstance(node, DjangoMiddleware):
        node = node.__wrapped__
    return node


class DjangoApp:
    """A handler and its middleware, with what the behaviour tests ask of an app."""

    def __init__(self, app: Any) -> None:
        self.handler = app
        self.middleware = middleware_of(app)

    @property
    def stats(self) -> dict[str, BadRowStats]:
        stats: dict[str, BadRowStats] = self.middleware.stats
        return stats

    @property
    def sitemap(self) -> Any:
        return self.middleware.sitemap

    def recount(self) -> None:
        self.middleware.recount()

    def close(self) -> None:
        self.middleware.close()


class DjangoWSGI(DjangoApp):
    """Django's WSGI handler around the middleware, as a WSGI app."""

    wsgi = True

    def __init__(self, sources: object = None, **settings: Any) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        super().__init__(handler(WSGIHandler, sources, **settings))

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.handler(environ, start_response)


class DjangoASGI(DjangoApp):
    """Django's ASGI handler around the middleware, as an ASGI app."""

    def __init__(self, sources: object = None, **settings: Any) -> None:
        from django.core.handlers.asgi import ASGIHandler

        super().__init__(handler(ASGIHandler, sources, **settings))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.handler(scope, receive, send)

    async def recount(self) -> None:  # type: ignore[override]  # as SitemapApp's
        await self.middleware.arecount()
