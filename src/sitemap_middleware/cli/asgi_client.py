"""Drive an ASGI application in-process: its lifespan, then requests; no server, no socket.

:class:`ASGIClient` is the ASGI :class:`~.inprocess.Fetch`: a response whose
final body message never comes (the application raised, or returned before
it, as the middleware does when a source fails mid-stream) is a
:class:`~.inprocess.ResponseFailed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import anyio
import anyio.lowlevel

from ..core.spec import DEFAULT_PORTS
from ..servers.types import ASGIApp, Message
from .inprocess import Fetch, Head, ResponseFailed, Sink, StartupFailed

T = TypeVar("T")


class ASGIClient:
    """Requests to one ASGI application, as a server would make them."""

    def __init__(self, app: ASGIApp, base_url: str = "http://localhost/") -> None:
        self.app = app
        parts = urlsplit(base_url)
        self.scheme = parts.scheme or "http"
        self.host = parts.netloc or "localhost"
        self.server = (
            parts.hostname or "localhost",
            parts.port or DEFAULT_PORTS.get(self.scheme, 80),
        )
        self.state: dict[str, Any] = {}

    async def fetch(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> Head:
        """GET (or ``method``) ``path``; raises :class:`ResponseFailed` unless the response is
        complete."""
        lines = [(b"host", self.host.encode("ascii"))] + [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
        ]
        scope = http_scope(
            method, path.encode("ascii"), lines, self.scheme, self.server, state=dict(self.state)
        )
        start: Message | None = None
        complete = False

        def observe(message: Message) -> None:
            nonlocal start, complete
            if complete:
                raise ResponseFailed(
                    f"{path}: the application sent {message['type']} after the end"
                )
            if message["type"] == "http.response.start":
                if start is not None:
                    raise ResponseFailed(f"{path}: the application started two responses")
                start = message
            elif message["type"] == "http.response.body":
                if start is None:
                    raise ResponseFailed(f"{path}: the application sent a body before its status")
                body = message.get("body", b"")
                if body:
                    sink(body)
                complete = not message.get("more_body", False)

        try:
            await exchange(self.app, scope, observe)
        except Exception as exc:
            raise ResponseFailed(
                f"{path}: the application raised {type(exc).__name__}: {exc}",
                _head(start) if start is not None and not complete else None,
            ) from exc
        if start is None:
            raise ResponseFailed(f"{path}: the application returned without a response")
        if not complete:
            raise ResponseFailed(f"{path}: the response was cut off before its end", _head(start))
        return _head(start)


def _head(start: Message) -> Head:
    return Head(
        int(start["status"]),
        [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in start["headers"]],
    )


def http_scope(
    method: str,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    scheme: str = "http",
    server: tuple[str, int] = ("localhost", 80),
    *,
    root_path: str = "",
    http_version: str = "1.1",
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The scope of one request as uvicorn builds it from the request-target's bytes:
    ``path`` %-decoded (UTF-8, errors replaced), ``raw_path`` as sent. The target includes
    ``root_path``, as a server behind a prefix-keeping proxy receives it."""
    raw_path, _, query = target.partition(b"?")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": http_version,
        "method": method,
        "scheme": scheme,
        "path": unquote(raw_path.decode("latin-1")),
        "raw_path": raw_path,
        "root_path": root_path,
        "query_string": query,
        "headers": headers,
        "client": ("127.0.0.1", 49152),  # the first ephemeral port
        "server": server,
        "extensions": {},
    }
    if state is not None:
        scope["state"] = state
    return scope


async def exchange(
    app: ASGIApp,
    scope: MutableMapping[str, Any],
    observe: Callable[[Message], object],
    disconnect_after: int | None = None,
) -> None:
    """Call ``app`` with one request without a body, as a server does: every message it
    sends goes to ``observe`` (which may raise, as a broken connection does). The client
    goes away (``http.disconnect``) once the response ends, or after ``disconnect_after``
    body messages. The application's exceptions propagate."""
    gone = anyio.Event()
    request_sent = False
    bodies = 0

    async def receive() -> Message:
        nonlocal request_sent
        if not request_sent:
            request_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal bodies
        observe(message)
        if message["type"] != "http.response.body":
            return
        bodies += 1
        if not message.get("more_body", False):
            gone.set()
        if disconnect_after is not None and bodies >= disconnect_after:
            gone.set()
            await anyio.lowlevel.checkpoint()  # let the disconnect be noticed, as a server would

    try:
        await app(scope, receive, send)
    finally:
        gone.set()


async def with_lifespan(app: ASGIApp, base_url: str, work: Callable[[Fetch], Awaitable[T]]) -> T:
    """Run ``work`` with the :class:`Fetch` of an :class:`ASGIClient` for ``app``, between the
    app's lifespan startup and shutdown.

    As uvicorn's ``lifespan="auto"``: an application that raises on the
    lifespan scope before starting up does not support it and is used as is;
    one that reports ``lifespan.startup.failed`` raises :class:`StartupFailed`.
    Errors of ``work`` propagate as they are (not wrapped in an exception group).
    """
    client = ASGIClient(app, base_url)
    started, stop, stopped = anyio.Event(), anyio.Event(), anyio.Event()
    startup_sent = False
    startup_failure: list[str] = []
    outcome: list[T] = []
    error: list[Exception] = []

    async def receive() -> Message:
        nonlocal startup_sent
        if not startup_sent:
            startup_sent = True
            return {"type": "lifespan.startup"}
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: Message) -> None:
        if message["type"] == "lifespan.startup.failed":
            startup_failure.append(str(message.get("message", "")))
        if message["type"].startswith("lifespan.startup."):
            started.set()
        elif message["type"].startswith("lifespan.shutdown."):
            stopped.set()

    async def lifespan() -> None:
        scope = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": client.state,
        }
        try:
            await app(scope, receive, send)
        except Exception:
            pass
        finally:
            started.set()
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lifespan)
        await started.wait()
        if not startup_failure:
            try:
                outcome.append(await work(client.fetch))
            except Exception as exc:
                error.append(exc)
        stop.set()
        with anyio.move_on_after(30):
            await stopped.wait()
        group.cancel_scope.cancel()
    if startup_failure:
        raise StartupFailed(f"the application's startup failed: {startup_failure[0]}")
    if error:
        raise error[0]
    return outcome[0]
