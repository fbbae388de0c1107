"""The core's requests and answers as Django's: a translation, no rule.

The request is read from what the server gave Django (the WSGI environ, the ASGI scope),
exactly as the WSGI and ASGI adapters read it, so the answers are the same. Django's
responses keep header names in one case-insensitive map and add a default
``Content-Type``: the core's headers replace them all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse

from ...core.exchange import Request, Response
from ...servers import asgi, wsgi


def is_asgi(request: HttpRequest) -> bool:
    """Whether Django's ASGI handler made the request (and will send the response)."""
    return isinstance(getattr(request, "scope", None), dict)


def route_path(request: HttpRequest) -> str:
    """The path below the mount point (``SCRIPT_NAME``, or the ASGI ``root_path``)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        return asgi.route_path(scope)
    return str(request.META.get("PATH_INFO", ""))


def request_from(request: HttpRequest) -> Request:
    """The core's request, read as the adapter of the server interface reads it."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        return asgi.request_from(scope)
    return wsgi.request_from(request.META)


def with_headers(response: HttpResponseBase, headers: list[tuple[str, str]]) -> None:
    """Exactly these headers (repeated names joined, as HTTP allows for list fields).

    Marked as logged: the core logs failures once per episode (``core/failures.py``), where
    Django's handler would log every 404 and 503 a crawler gets."""
    response._has_been_logged = True
    for name in list(response.headers):
        del response.headers[name]
    for name, value in headers:
        if name in response.headers:
            response.headers[name] = f"{response.headers[name]}, {value}"
        else:
            response.headers[name] = value


def complete(response: Response, method: str) -> HttpResponse:
    """A complete answer; a HEAD's without its body."""
    body = b"" if method == "HEAD" else response.body
    answer = HttpResponse(body, status=response.status)
    with_headers(answer, response.headers)
    return answer


def streaming(
    response: Response, body: Iterator[bytes] | AsyncIterator[bytes]
) -> StreamingHttpResponse:
    """A streamed answer: the status line and headers now, the bytes as the server pulls."""
    answer = StreamingHttpResponse(body, status=response.status)
    with_headers(answer, response.headers)
    return answer
