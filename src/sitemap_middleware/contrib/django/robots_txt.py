"""``/robots.txt`` under Django: the project's answer with the ``Sitemap:`` line added.

The project is asked for a plain GET (no validators, no ``Accept-Encoding``: what
:mod:`..robots` rewrites must be the whole, uncompressed file), as the WSGI and ASGI
adapters ask their application; the core decides the answer. An answer larger than
``robots.MAX_BYTES`` passes through as it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from itertools import chain

from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse

from ...core import robots
from ...core.exchange import Request
from ...core.sitemap import Sitemap
from .responses import complete, request_from


def as_plain_get(request: HttpRequest) -> None:
    """The request as the project is asked it: GET, without the fields the rewrite undoes."""
    request.method = "GET"
    request.META["REQUEST_METHOD"] = "GET"
    for key in list(request.META):
        if not robots.forwarded_environ(key):
            del request.META[key]
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        headers = [
            (name, value)
            for name, value in scope.get("headers", ())
            if robots.forwarded(name.decode("latin-1"))
        ]
        request.scope = {**scope, "method": "GET", "headers": headers}
    request.__dict__.pop("headers", None)  # Django's cached view of META


def serve(
    sitemap: Sitemap, request: HttpRequest, get_response: Callable[[HttpRequest], HttpResponseBase]
) -> HttpResponseBase:
    core = request_from(request)
    as_plain_get(request)
    response = get_response(request)
    if not response.streaming:
        return _answer(sitemap, core, response, [response.content])
    held: robots.Held[bytes] = robots.Held(core.method)
    rest = iter(response)
    for chunk in rest:
        if held.hold(chunk, chunk):
            return _passed(response, core, chain(held.release(), rest))
    return _answer(sitemap, core, response, held.items)


async def aserve(
    sitemap: Sitemap,
    request: HttpRequest,
    get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]],
) -> HttpResponseBase:
    core = request_from(request)
    as_plain_get(request)
    response = await get_response(request)
    if not response.streaming:
        return _answer(sitemap, core, response, [response.content])
    held: robots.Held[bytes] = robots.Held(core.method)
    rest = aiter(response)
    async for chunk in rest:
        if held.hold(chunk, chunk):
            return _passed(response, core, _achain(held.release(), rest))
    return _answer(sitemap, core, response, held.items)


def _answer(
    sitemap: Sitemap, core: Request, response: HttpResponseBase, chunks: list[bytes]
) -> HttpResponseBase:
    """The project's whole answer, rewritten, or passed on as it is."""
    headers = [(name, value) for name, value in response.items()]
    outcome = sitemap.robots(core, response.status_code, headers, b"".join(chunks))
    if outcome is None and not response.streaming:
        if core.method == "HEAD":
            response.content = b""
        return response
    if outcome is None:
        return _passed(response, core, iter(chunks))
    answer = complete(outcome, core.method)
    answer.cookies = response.cookies  # Set-Cookie lines live beside the headers in Django
    response.close()
    return answer


def _passed(
    response: HttpResponseBase, core: Request, body: Iterable[bytes] | AsyncIterator[bytes]
) -> HttpResponseBase:
    """The project's answer as it is (a HEAD without its body)."""
    passed = StreamingHttpResponse(
        () if core.method == "HEAD" else body, status=response.status_code
    )
    passed.headers = response.headers
    passed.cookies = response.cookies
    passed._resource_closers.append(response.close)
    return passed


async def _achain(first: list[bytes], rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    for chunk in first:
        yield chunk
    async for chunk in rest:
        yield chunk
