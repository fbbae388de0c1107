"""Drive a WSGI application in-process (PEP 3333), as a server would; no socket.

:class:`WSGIClient` is the WSGI :class:`~.inprocess.Fetch`. Each request runs
in a worker thread (Django refuses database work on a thread with a running
event loop; async sources of the middleware run on its own loop anyway): the
application's iterable is iterated into the sink, and its ``close()`` is
called however the iteration ends. The status and headers given to
``start_response`` count once the first non-empty chunk comes (before it the
application may replace them with ``exc_info``). An exception out of the
iterable (the middleware's ``SitemapAborted`` when a source fails
mid-stream), out of ``close()``, a body shorter or longer than its
``Content-Length``, or no ``start_response`` at all is a
:class:`~.inprocess.ResponseFailed`.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import anyio.to_thread

from ..core.spec import DEFAULT_PORTS
from ..servers.types import WSGIApp
from .inprocess import Head, ResponseFailed, Sink


class WSGIClient:
    """Requests (GET unless told) to one WSGI application."""

    def __init__(self, app: WSGIApp, base_url: str = "http://localhost/") -> None:
        self.app = app
        parts = urlsplit(base_url)
        self.scheme = parts.scheme or "http"
        self.host = parts.netloc or "localhost"
        self.server_name = parts.hostname or "localhost"
        self.server_port = str(parts.port or DEFAULT_PORTS.get(self.scheme, 80))

    async def fetch(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> Head:
        """GET (or ``method``) ``path``; raises :class:`ResponseFailed` unless the response is
        complete."""
        return await anyio.to_thread.run_sync(self.request, path, headers, sink, method)

    def environ(self, path: str, headers: Mapping[str, str], method: str = "GET") -> dict[str, Any]:
        lines = [("host", self.host), *headers.items()]
        return wsgi_environ(
            method,
            path.encode("ascii"),
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in lines],
            self.scheme,
            (self.server_name, self.server_port),
        )

    def request(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> Head:
        """The request itself, synchronously (in the calling thread)."""
        response = WSGIResponse(path, sink, head_request=method == "HEAD")
        try:
            call_app(self.app, self.environ(path, headers, method), response)
        except ResponseFailed as exc:
            if exc.head is None and response.started:  # the body broke off
                exc.head = response.partial()
            raise
        return response.head()


def call_app(app: WSGIApp, environ: dict[str, Any], response: WSGIResponse) -> None:
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
        return ResponseFailed(f"{self.path}: the application raised {type(exc).__name__}: {exc}")

    def partial(self) -> Head | None:
        """The status and headers already given, when they are valid (the body aside)."""
        try:
            return self._given()
        except ResponseFailed:
            return None

    def _given(self) -> Head:
        if self.status is None:
            raise ResponseFailed(f"{self.path}: the application returned without a response")
        code = self.status.split(" ", 1)[0]
        if len(code) != 3 or not code.isdigit():
            raise ResponseFailed(f"{self.path}: the status {self.status!r} is not valid")
        return Head(int(code), [(name.lower(), value) for name, value in self.headers])

    def head(self) -> Head:
        head = self._given()
        length = head.header("content-length")
        if self.head_request or length is None or not length.strip().isdigit():
            return head  # nothing to measure the body against
        if int(length) != self.sent:
            raise ResponseFailed(
                f"{self.path}: the body has {self.sent:,} bytes, its Content-Length says {length}"
            )
        return head
