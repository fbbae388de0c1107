"""App drivers: build a sitemap app and send it one raw request, in-process, synchronously.

The hostile property tests speak only to an :class:`AppDriver`, so the same
properties run through every adapter: a driver turns an adapter-neutral
request (method token, raw request-target bytes, raw header lines) into what
its server interface expects, and the answer into a :class:`Reply`, with the
``Date`` a server writes (the application writing one, or any singleton field
twice, is one of the reply's problems).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from sitemap_middleware import BadRowStats, SitemapApp, SitemapWSGIApp
from sitemap_middleware.cli.asgi_client import http_scope
from sitemap_middleware.cli.inprocess import ResponseFailed
from sitemap_middleware.cli.wsgi_client import WSGIResponse, call_app, wsgi_environ
from sitemap_middleware.core.http import SINGLETON_FIELDS, format_http_date
from sitemap_middleware.servers.types import Message

from .driver import exchange_asgi

T = TypeVar("T")
RawHeaders = list[tuple[bytes, bytes]]


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


class AsgiDriver:
    """Calls the ASGI app directly on one long-lived event loop, as uvicorn would."""

    name = "asgi"
    async_sources = True

    def __init__(self) -> None:
        self._runner = asyncio.Runner()

    def make(self, sources: object, **settings: Any) -> SitemapApp:
        return SitemapApp(sources=sources, **settings)

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
        return self._runner.run(_exchange(app, _scope(method, target, headers)))

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        """Several requests, one after the other, in one run of the loop (anyio keeps its
        worker threads for the run: much faster than one run per request)."""

        async def each() -> list[Reply]:
            return [await _exchange(app, _scope(*request)) for request in requests]

        return self._runner.run(each())


def _scope(method: str, target: bytes, headers: RawHeaders | None) -> dict[str, Any]:
    """The ASGI scope of one request, as uvicorn builds it."""
    return http_scope(method, target, list(headers or []), "https", ("127.0.0.1", 8000))


async def _exchange(app: Callable[..., Awaitable[None]], scope: dict[str, Any]) -> Reply:
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


class WsgiDriver:
    """Calls the WSGI app as a server does: a PEP 3333 environ, the iterable read and closed."""

    name = "wsgi"
    async_sources = True  # run on the adapter's own event loop thread

    def make(self, sources: object, **settings: Any) -> SitemapWSGIApp:
        return SitemapWSGIApp(sources=sources, **settings)

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
        return _wsgi_exchange(app, environ)

    def requests(
        self, app: Any, requests: list[tuple[str, bytes, RawHeaders | None]]
    ) -> list[Reply]:
        return [self.request(app, *request) for request in requests]


def _wsgi_exchange(app: Callable[..., Iterable[bytes]], environ: dict[str, Any]) -> Reply:
    arrived = datetime.now(UTC)
    return _server_date(_wsgi_reply(app, environ), arrived)


def _wsgi_reply(app: Callable[..., Iterable[bytes]], environ: dict[str, Any]) -> Reply:
    problems: list[str] = []
    body: list[bytes] = []
    response = WSGIResponse(environ["PATH_INFO"], body.append, environ["REQUEST_METHOD"] == "HEAD")
    error: BaseException | None = None
    complete = False
    try:
        call_app(app, environ, response)
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


def _django_wsgi() -> AppDriver:
    from .django_drivers import DjangoWsgiDriver  # it imports this module

    return DjangoWsgiDriver()


def _django_asgi() -> AppDriver:
    from .django_drivers import DjangoAsgiDriver

    return DjangoAsgiDriver()


DRIVERS: dict[str, Callable[[], AppDriver]] = {
    "asgi": AsgiDriver,
    "wsgi": WsgiDriver,
    "django-wsgi": _django_wsgi,
    "django-asgi": _django_asgi,
}
"""Every adapter the hostile properties run through (Django's: its handlers around the
Django middleware, :mod:`tests.django_drivers`)."""
