"""In-process clients for ASGI and WSGI applications: test a sitemap without a server.

They call the application as a server does and keep what a client on the wire
would see, which a client that returns a parsed response hides:

* the status, and the header lines *as sent* (in order, a line sent twice kept twice);
* the body as the chunks it was sent in (a streamed sitemap arrives in several);
* whether the transfer completed, or was aborted part way (as the middleware does
  when a source fails mid-stream: a crawler must see a broken transfer, never a
  well-formed but truncated sitemap);
* the exception that escaped the application, if one did.

:meth:`ASGIClient.request` and :meth:`WSGIClient.request` return all of that as a
:class:`Response`. :meth:`ASGIClient.fetch` and :meth:`WSGIClient.fetch` stream the body
to a callable instead (the ``sitemap-middleware render`` command writes 50 MB files through
them) and raise :class:`ResponseFailed` when the response does not end properly;
:func:`with_lifespan` runs an ASGI application's startup and shutdown around them.

Only the standard library and anyio are imported: the clients work in any install.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote, unquote_to_bytes, urlsplit

import anyio
import anyio.lowlevel
import anyio.to_thread

__all__ = [
    "ASGIClient",
    "Fetch",
    "Response",
    "ResponseFailed",
    "ResponseHead",
    "Sink",
    "StartupFailed",
    "WSGIClient",
    "WSGIResponse",
    "asgi_exchange",
    "asgi_scope",
    "read_wsgi_app",
    "with_lifespan",
    "wsgi_environ",
]

T = TypeVar("T")
Message = MutableMapping[str, Any]
"""An ASGI message."""
ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Sink = Callable[[bytes], object]
"""Where a streamed body goes, chunk by chunk (a file's ``write``, ``list.append``)."""

_PORTS = {"http": 80, "https": 443}


# --- what the clients return -------------------------------------------------------------


@dataclass
class Response:
    """One response as a client on the wire receives it."""

    status: int
    """The status code; 0 when the application never started a response."""
    headers: list[tuple[str, str]] = field(default_factory=list)
    """The header lines as sent: in order, names in the case sent, a repeated line kept."""
    chunks: list[bytes] = field(default_factory=list)
    """The body as the application sent it, one item per non-empty chunk."""
    complete: bool = False
    """The response ended normally; False when it was aborted (or cut off by the client)."""
    error: BaseException | None = None
    """The exception that escaped the application, or why the response is not valid."""

    @property
    def body(self) -> bytes:
        """The chunks joined."""
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        """The first value of the header ``name`` (any case), or None."""
        values = self.header_values(name)
        return values[0] if values else None

    def header_values(self, name: str) -> list[str]:
        """Every value of the header ``name`` (any case), one per line sent."""
        key = name.lower()
        return [value for line, value in self.headers if line.lower() == key]


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """The status and headers of a streamed response (:meth:`ASGIClient.fetch`)."""

    status: int
    headers: list[tuple[str, str]]
    """The header lines in order, names in lowercase."""

    def header(self, name: str) -> str | None:
        """The first value of the header ``name`` (lowercase), or None."""
        return next((v for k, v in self.headers if k == name), None)


class ResponseFailed(RuntimeError):
    """The application did not give a complete response. ``head`` is the status and headers
    when it had started one (its body broke off); the application's own exception, if it
    raised, is the ``__cause__``."""

    def __init__(self, message: str, head: ResponseHead | None = None) -> None:
        super().__init__(message)
        self.head = head


class StartupFailed(RuntimeError):
    """The application's lifespan startup failed."""


class Fetch(Protocol):
    """GET (or ``method``) ``path`` with ``headers``: the body goes to ``sink`` chunk by chunk
    as the application produces it, the status and headers come back; a response that does
    not end properly raises :class:`ResponseFailed`."""

    async def __call__(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> ResponseHead: ...


def _origin(base_url: str) -> tuple[str, str, str, int]:
    """Scheme, Host header, server name and port of ``base_url``."""
    parts = urlsplit(base_url)
    scheme = parts.scheme or "http"
    return (
        scheme,
        parts.netloc or "localhost",
        parts.hostname or "localhost",
        parts.port or _PORTS.get(scheme, 80),
    )


def _lines(headers: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    return list(headers.items()) if isinstance(headers, Mapping) else list(headers)


class _ClientGone(Exception):
    """The client went away: the server stops reading the application's answer."""


# --- ASGI --------------------------------------------------------------------------------


class ASGIClient:
    """Requests to one ASGI application, as a server (uvicorn) would make them.

    ``base_url`` gives the scheme, the ``Host`` header and the server's name and port.
    Requests carry no body. Lifespan: see :func:`with_lifespan`.
    """

    def __init__(self, app: ASGIApp, base_url: str = "http://localhost/") -> None:
        self.app = app
        self.scheme, self.host, name, port = _origin(base_url)
        self.server = (name, port)
        self.state: dict[str, Any] = {}
        """The lifespan's state, copied into each request's scope."""

    def scope(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """The scope of one request (``path``: the request-target, %-escaped)."""
        lines = [(b"host", self.host.encode("latin-1"))] + [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in _lines(headers)
        ]
        return asgi_scope(
            method, path.encode("ascii"), lines, self.scheme, self.server, state=dict(self.state)
        )

    async def request(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        *,
        disconnect_after: int | None = None,
    ) -> Response:
        """One request; everything the client received, as a :class:`Response`. The
        application's exceptions are the response's ``error``, never raised.
        ``disconnect_after=n``: the client goes away after n body messages."""
        response = Response(0)
        ended = False
        bodies = 0

        def observe(message: Message) -> None:
            nonlocal ended, bodies
            if message["type"] == "http.response.start" and response.status == 0:
                response.status = int(message["status"])
                response.headers = [
                    (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
                ]
            elif message["type"] == "http.response.body" and response.status and not ended:
                if disconnect_after is not None and bodies >= disconnect_after:
                    return  # sent after the client went away: nobody receives it
                bodies += 1
                if message.get("body"):
                    response.chunks.append(bytes(message["body"]))
                ended = not message.get("more_body", False)

        try:
            await asgi_exchange(
                self.app, self.scope(method, path, headers), observe, disconnect_after
            )
        except Exception as exc:
            response.error = exc
        response.complete = ended and response.error is None
        return response

    async def fetch(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> ResponseHead:
        """GET (or ``method``) ``path``, the body to ``sink`` as it comes (a :class:`Fetch`);
        raises :class:`ResponseFailed` unless the response is complete."""
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
            await asgi_exchange(self.app, self.scope(method, path, headers), observe)
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


def _head(start: Message) -> ResponseHead:
    return ResponseHead(
        int(start["status"]),
        [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in start["headers"]],
    )


def asgi_scope(
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


async def asgi_exchange(
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


async def with_lifespan(
    app: ASGIApp, base_url: str, work: Callable[[ASGIClient], Awaitable[T]]
) -> T:
    """Run ``work`` with an :class:`ASGIClient` for ``app``, between the app's lifespan
    startup and shutdown (the sources a startup hook opens are open for the requests).

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
                outcome.append(await work(client))
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


# --- WSGI --------------------------------------------------------------------------------


class WSGIClient:
    """Requests to one WSGI application (PEP 3333), as a server makes them.

    The application's iterable is read chunk by chunk, and its ``close()`` called however
    the reading ends. The status and headers given to ``start_response`` count once the
    first non-empty chunk comes (before it the application may replace them with
    ``exc_info``). ``base_url`` gives the scheme, the ``Host`` header and the server's name
    and port. Requests carry no body.
    """

    def __init__(self, app: WSGIApp, base_url: str = "http://localhost/") -> None:
        self.app = app
        self.scheme, self.host, self.server_name, port = _origin(base_url)
        self.server_port = str(port)

    def environ(
        self,
        path: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        method: str = "GET",
    ) -> dict[str, Any]:
        """The environ of one request (``path``: the request-target, %-escaped)."""
        lines = [("host", self.host), *_lines(headers)]
        return wsgi_environ(
            method,
            path.encode("ascii"),
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in lines],
            self.scheme,
            (self.server_name, self.server_port),
        )

    def request(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        *,
        disconnect_after: int | None = None,
    ) -> Response:
        """One request, in the calling thread; everything the client received, as a
        :class:`Response`. The application's exceptions are the response's ``error``, never
        raised. ``disconnect_after=n``: the client goes away after n chunks (the server
        stops reading and closes the iterable)."""
        chunks: list[bytes] = []

        def sink(data: bytes) -> None:
            chunks.append(bytes(data))
            if disconnect_after is not None and len(chunks) >= disconnect_after:
                raise _ClientGone

        reader = WSGIResponse(path, sink, head_request=method == "HEAD")
        error: BaseException | None = None
        complete = False
        try:
            read_wsgi_app(self.app, self.environ(path, headers, method), reader)
            reader.head()
            complete = True
        except _ClientGone:
            pass
        except ResponseFailed as exc:
            error = exc.__cause__ or exc
        if reader.status is None:
            return Response(0, [], chunks, False, error)
        status = reader.status.split(" ", 1)[0]
        return Response(
            int(status) if status.isdigit() else 0, list(reader.headers), chunks, complete, error
        )

    async def fetch(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> ResponseHead:
        """GET (or ``method``) ``path`` in a worker thread, the body to ``sink`` as it comes
        (a :class:`Fetch`); raises :class:`ResponseFailed` unless the response is complete.
        A worker thread, because Django refuses database work on a thread with a running
        event loop."""
        return await anyio.to_thread.run_sync(self.fetch_sync, path, headers, sink, method)

    def fetch_sync(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> ResponseHead:
        """:meth:`fetch` in the calling thread. An exception out of the iterable or its
        ``close()``, a body shorter or longer than its ``Content-Length``, or no
        ``start_response`` at all raises :class:`ResponseFailed`."""
        response = WSGIResponse(path, sink, head_request=method == "HEAD")
        try:
            read_wsgi_app(self.app, self.environ(path, headers, method), response)
        except ResponseFailed as exc:
            if exc.head is None and response.started:  # the body broke off
                exc.head = response.partial()
            raise
        return response.head()


def read_wsgi_app(app: WSGIApp, environ: dict[str, Any], response: WSGIResponse) -> None:
    """Call ``app`` and read its answer into ``response``, as a server does: the iterable's
    ``close()`` runs however the reading ends. Raises :class:`ResponseFailed` (with the
    application's own exception as its cause) when the application raises."""
    try:
        result = app(environ, response.start_response)
    except ResponseFailed:
        raise
    except Exception as exc:
        raise response.raised(exc) from exc
    try:
        response.read(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            try:
                close()
            except Exception as exc:
                raise ResponseFailed(
                    f"{response.path}: the application's close() raised {type(exc).__name__}: {exc}"
                ) from exc


def wsgi_environ(
    method: str,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    scheme: str = "http",
    server: tuple[str, str] = ("localhost", "80"),
    *,
    script_name: str = "",
    http_version: str = "1.1",
    multithread: bool = False,
) -> dict[str, Any]:
    """A PEP 3333 environ for one request without a body, as a server builds it from the
    request-target's bytes (``target``, below ``script_name``): ``PATH_INFO`` holds the
    %-decoded bytes as latin-1 characters; repeated header lines are joined with commas."""
    raw_path, _, query = target.partition(b"?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": script_name,
        "PATH_INFO": unquote_to_bytes(raw_path).decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "SERVER_NAME": server[0],
        "SERVER_PORT": server[1],
        "SERVER_PROTOCOL": f"HTTP/{http_version}",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": multithread,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in headers:
        key = name.decode("latin-1").upper().replace("-", "_")
        key = key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"
        text = value.decode("latin-1")
        environ[key] = f"{environ[key]},{text}" if key in environ else text
    return environ


class WSGIResponse:
    """What one request's ``start_response``, ``write()`` and iterable gave: the body to
    ``sink``, the status and headers checked by :meth:`head`. A response to a HEAD
    (``head_request``) has no body to measure against its ``Content-Length``."""

    def __init__(self, path: str, sink: Sink, head_request: bool = False) -> None:
        self.path = path
        self.sink = sink
        self.head_request = head_request
        self.status: str | None = None
        self.headers: list[tuple[str, str]] = []
        """As given to ``start_response``."""
        self.sent = 0
        """Body bytes passed on: once there are any, the status is final."""
        self.started = False

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], object]:
        if exc_info is not None:
            try:
                if self.started:  # PEP 3333: too late to replace what was sent
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise ResponseFailed(f"{self.path}: start_response called twice without exc_info")
        self.status, self.headers = status, list(headers)
        return self.write

    def write(self, data: bytes) -> None:
        """The legacy ``write()`` callable."""
        if self.status is None:
            raise ResponseFailed(f"{self.path}: write() before start_response")
        self._pass(data)

    def _pass(self, data: bytes) -> None:
        if data:
            self.started = True
            self.sent += len(data)
            self.sink(data)

    def read(self, result: Iterable[bytes]) -> None:
        """Pass the iterable's chunks on (its ``close()`` is the caller's)."""
        try:
            chunks = iter(result)
        except Exception as exc:
            raise self.raised(exc) from exc
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except ResponseFailed:
                raise
            except Exception as exc:
                raise self.raised(exc) from exc
            if chunk and self.status is None:
                raise ResponseFailed(f"{self.path}: the application sent a body before its status")
            self._pass(chunk)  # the sink's own errors (a full disk) pass as they are

    def raised(self, exc: Exception) -> ResponseFailed:
        """The failure for an exception of the application (its cause set by the caller)."""
        return ResponseFailed(f"{self.path}: the application raised {type(exc).__name__}: {exc}")

    def partial(self) -> ResponseHead | None:
        """The status and headers already given, when they are valid (the body aside)."""
        try:
            return self._given()
        except ResponseFailed:
            return None

    def _given(self) -> ResponseHead:
        if self.status is None:
            raise ResponseFailed(f"{self.path}: the application returned without a response")
        code = self.status.split(" ", 1)[0]
        if len(code) != 3 or not code.isdigit():
            raise ResponseFailed(f"{self.path}: the status {self.status!r} is not valid")
        return ResponseHead(int(code), [(name.lower(), value) for name, value in self.headers])

    def head(self) -> ResponseHead:
        """The status and headers (names in lowercase); raises :class:`ResponseFailed` when
        the status is invalid or the body's length is not its ``Content-Length``."""
        head = self._given()
        length = head.header("content-length")
        if self.head_request or length is None or not length.strip().isdigit():
            return head  # nothing to measure the body against
        if int(length) != self.sent:
            raise ResponseFailed(
                f"{self.path}: the body has {self.sent:,} bytes, its Content-Length says {length}"
            )
        return head
