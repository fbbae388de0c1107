"""``/robots.txt`` under Django: the project's answer with the ``Sitemap:`` line added.

The project is asked for a plain GET (no validators, no ``Accept-Encoding``: what
:mod:`..robots` rewrites must be the whole, uncompressed file), as the WSGI and ASGI
adapters ask their application; the core decides the answer. An answer larger than
``robots.MAX_BYTES`` passes through as it is.

With ``robots_filter``, :func:`read_rules` and :func:`aread_rules` ask the project's views
below the middleware for the same file for the sitemap's own use, as the WSGI and ASGI
adapters do (given ``robots_filter.timeout``), through a request of the kind the server's
handler made: no middleware above this one, nor this one's ``Sitemap:`` line.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from itertools import chain

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse

from ...core import robots
from ...core.exchange import Request
from ...core.sitemap import Sitemap
from ...servers import asgi_robots, wsgi_robots
from ...state.robots_rules import MAX_BYTES, Answer
from .responses import complete, request_from
from .threads import begin_read, end_read, in_django, in_transaction, reading, thread_of_its_own


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


def plain_get(sitemap: Sitemap, request: HttpRequest) -> HttpRequest:
    """``GET /robots.txt`` with the base URL's ``Host``, as the handler that made
    ``request`` would make it (Django's ASGI one, or its WSGI one)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        return ASGIRequest(asgi_robots.scope_for(sitemap.site.origin, scope), io.BytesIO())
    return WSGIRequest(wsgi_robots.environ_for(sitemap.site.origin, request.META))


def read_rules(
    sitemap: Sitemap, request: HttpRequest, get_response: Callable[[HttpRequest], HttpResponseBase]
) -> None:
    """``robots_filter`` (sync): the project's robots.txt, asked in a thread of its own (the
    connections it opens there closed when it ends: :func:`.threads.begin_read`), or in this
    thread when a transaction is open in it (a ``TestCase``'s: no other thread's connection
    sees its rows)."""
    rules = sitemap.robots_rules
    assert rules is not None

    def call() -> Answer:
        with reading():
            return _read(get_response(plain_get(sitemap, request)))

    wsgi_robots.ask(rules, call, in_transaction)


async def aread_rules(
    sitemap: Sitemap,
    request: HttpRequest,
    get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]],
) -> None:
    """``robots_filter`` (async): the project's robots.txt, asked in a task of its own whose
    sync work runs in a thread of its own (not the request's, which a view that hangs would
    hold), or in this task when a transaction is open in the request's thread for sync work
    (a ``TestCase``'s)."""
    rules = sitemap.robots_rules
    assert rules is not None
    inline = False

    async def transaction() -> bool:
        nonlocal inline
        inline = await in_django(in_transaction)
        return inline

    context, end_thread = thread_of_its_own()

    async def call() -> Answer:
        if inline:
            return await _aread(await get_response(plain_get(sitemap, request)))
        try:  # in ``context``: the connections its thread opens are closed when it ends
            await sync_to_async(begin_read)()
            try:
                return await _aread(await get_response(plain_get(sitemap, request)))
            finally:
                await sync_to_async(end_read)()
        finally:
            end_thread()

    await asgi_robots.aask(rules, call, transaction, context)


def _read(response: HttpResponseBase) -> Answer:
    """The status and the first ``MAX_BYTES`` of the body of a project's answer, closed."""
    try:
        if not response.streaming:
            return response.status_code, response.content[:MAX_BYTES]
        body: list[bytes] = []
        size = 0
        for chunk in response:
            if size < MAX_BYTES:
                body.append(chunk)
                size += len(chunk)
        return response.status_code, b"".join(body)
    finally:
        _release(response)


async def _aread(response: HttpResponseBase) -> Answer:
    """:func:`_read` with awaits."""
    try:
        if not response.streaming:
            return response.status_code, response.content[:MAX_BYTES]
        body: list[bytes] = []
        size = 0
        async for chunk in response:
            if size < MAX_BYTES:
                body.append(chunk)
                size += len(chunk)
        return response.status_code, b"".join(body)
    finally:
        await sync_to_async(_release)(response)


def _release(response: HttpResponseBase) -> None:
    """What ``response.close()`` does but ``request_finished``: the request it answers is
    not the server's, whose connections Django would close (those of a ``TestCase``'s
    transaction too) while the sitemap still reads."""
    closers = response._resource_closers
    for closer in closers:
        closer()
    closers.clear()
    response.closed = True
