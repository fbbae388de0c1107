"""Drive an ASGI or WSGI app by hand and keep every message it sends (for checks below HTTP).

Behaviour tests take the ``make_app`` fixture and run once through each adapter:
a WSGI exchange is recorded as the same ASGI-shaped messages, so every check
reads the same for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import anyio.to_thread

from sitemap_middleware import SitemapApp, SitemapWSGIApp, SitemapWSGIMiddleware
from sitemap_middleware.cli.asgi_client import exchange as exchange_messages
from sitemap_middleware.cli.asgi_client import http_scope
from sitemap_middleware.cli.inprocess import ResponseFailed
from sitemap_middleware.cli.wsgi_client import WSGIResponse, call_app, wsgi_environ
from sitemap_middleware.servers.types import Message

from .conftest import check_served

PATH_SAFE = "/:@!$&'()*+,;=-._~"
"""Characters a path keeps as they are in its request-target (the rest are %-escaped)."""


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


def sitemap_app(adapter: str, **settings: Any) -> Any:
    """The standalone sitemap app of one adapter (Django's: :mod:`tests.django_drivers`)."""
    if adapter.startswith("django"):
        from .django_drivers import APPS

        return APPS[adapter](**settings)
    return SitemapApp(**settings) if adapter == "asgi" else SitemapWSGIApp(**settings)


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
    scope = http_scope(
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
        await exchange_messages(app, scope, exchange.messages.append, disconnect_after)
    except Exception as exc:
        exchange.error = exc
    return exchange


def _check(exchange: Exchange, method: str) -> None:
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
    """One WSGI request, read as a server does (the CLI's WSGI client); the client may go
    away after n chunks. The answer is recorded as ASGI-shaped messages."""
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
        call_app(app, environ, response)
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
