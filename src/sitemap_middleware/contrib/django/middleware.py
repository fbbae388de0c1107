"""Django middleware (``settings.MIDDLEWARE``): the sitemap in front of the project's views.

An adapter like :mod:`~sitemap_middleware.servers.wsgi` and
:mod:`~sitemap_middleware.servers.asgi`, and as thin: it routes, runs the handler with the
reads of the mode Django runs it in (sync under the WSGI handler, async under the ASGI
handler), and turns the events of the answer into a ``HttpResponse`` or a
``StreamingHttpResponse`` (an async iterator under ASGI). Django needs
the status and headers when the response is returned, and the core gives them with the
first chunk: so the first chunk is made before returning, the rest as the server pulls.
A failure after that raises out of the iterator; Django's handlers let it through and the
server aborts the transfer, so no client takes a truncated sitemap for a whole one.
The rows and the slot are released however the iteration ends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar, cast

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponseBase

from ...core.handler import Transfer, arun_effects, handle, run_effects
from ...core.routing import Target
from ...core.sending import Chunk, End, Event, Start, adrive, drive, transfer_events
from ...core.sitemap import Response, Sitemap
from ...core.sites import ServesSites, Sites, purge_served, sitemaps_of
from ...servers.async_effects import AsyncEffectRunner, AsyncTransferChunks
from ...servers.resolving import afind, find
from ...servers.sync_effects import SyncEffectRunner, SyncTransferChunks, start_thread
from . import robots_txt
from .conf import SETTING, configured
from .responses import complete, is_asgi, request_from, route_path, streaming
from .threads import background_context, reads_stay_here

T = TypeVar("T")
GetResponse = Callable[[HttpRequest], HttpResponseBase]
AsyncGetResponse = Callable[[HttpRequest], Awaitable[HttpResponseBase]]


class SitemapMiddleware(ServesSites):
    """Serves the sitemap ``settings.SITEMAP_MIDDLEWARE`` describes (see :mod:`.conf`).

    Put it first in ``MIDDLEWARE``: the middleware listed before it see its answers on
    their way out, and some change them (``GZipMiddleware`` compresses a second time,
    ``ConditionalGetMiddleware`` replaces the validators); ``manage.py check`` warns.
    ``mode="fallback"`` lets the project's views answer first; only a 404 is replaced.
    """

    sync_capable = True
    async_capable = True
    setting = SETTING
    """The Django setting read; a subclass naming another serves a second sitemap."""

    def __init__(self, get_response: GetResponse | AsyncGetResponse) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
        self.configured = configured(self.setting)
        self.served = self.configured.served()
        self._sync = SyncEffectRunner(background=self._start_background)
        self._deferred = threading.local()  # jobs a request's thread runs once answered
        # A refresh started by a request outlives the request's thread for sync work.
        self._async = AsyncEffectRunner(background=background_context)

    def recount(self) -> None:
        """Read the pages of every source kept current whole, now (see ``freshness``)."""
        for sitemap in sitemaps_of(self.served):
            for live in sitemap.current_pages.values():
                while not live.claim_recount():
                    time.sleep(0.01)  # a refresh is running: it ends soon
                run_effects(sitemap.keep_current(live), self._sync.perform)

    async def arecount(self) -> None:
        """:meth:`recount` on the running event loop (async sources bound to it)."""
        for sitemap in sitemaps_of(self.served):
            for live in sitemap.current_pages.values():
                while not live.claim_recount():  # noqa: ASYNC110 (a refresh may run in a thread)
                    await asyncio.sleep(0.01)
                await arun_effects(sitemap.keep_current(live), self._async.perform)

    def purge(self, source: str | None = None, *, host: str | None = None) -> list[str]:
        """Purge the documents of one source (the root included), or every document, from
        the CDN, through ``SITEMAP_MIDDLEWARE['purger']``: after a bulk write, say. With
        ``'sites'``, those of the site of ``host`` (every site's, with none). Returns the
        surrogate keys queued at once; the purge runs in the background, retried when it
        fails."""
        return purge_served(self.served, source, host)

    def close(self, grace: float = 10.0) -> None:
        """Let a job of pages kept current that runs in a thread of its own end (for at most
        ``grace`` seconds: its connection goes back to the pool) and the purges queued go
        out, then stop the background event loop of async sources read under WSGI, if one
        runs. Under ASGI, :meth:`aclose` waits for the jobs on the event loop."""
        if not self.is_async:
            for sitemap in sitemaps_of(self.served):
                for live in sitemap.current_pages.values():
                    live.idle.wait(grace)
        if self.served.purges is not None:
            self.served.purges.close(grace)
        self._sync.close()

    async def aclose(self, grace: float = 10.0) -> None:
        """Let the jobs of pages kept current that run on this event loop end (for at most
        ``grace`` seconds), then :meth:`close`."""
        await self._async.aclose(grace)
        self.close(grace)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        get_response: GetResponse = self.get_response
        path = route_path(request)
        if isinstance(self.served, Sites):
            return self._per_host(self.served, path, request, get_response)
        target = self.sitemap.routes.match(path)
        if target is None:
            if self.sitemap.wants_robots(path, request_from(request).method):
                return robots_txt.serve(self.sitemap, request, get_response)
            return get_response(request)
        if self.sitemap.settings.mode == "fallback":
            response = get_response(request)
            if response.status_code != 404:
                return response
        return self.serve(target, request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        get_response: AsyncGetResponse = self.get_response
        path = route_path(request)
        if isinstance(self.served, Sites):
            return await self._aper_host(self.served, path, request, get_response)
        target = self.sitemap.routes.match(path)
        if target is None:
            if self.sitemap.wants_robots(path, request_from(request).method):
                return await robots_txt.aserve(self.sitemap, request, get_response)
            return await get_response(request)
        if self.sitemap.settings.mode == "fallback":
            response = await get_response(request)
            if response.status_code != 404:
                return response
        return await self.aserve(target, request)

    def _per_host(
        self, sites: Sites, path: str, request: HttpRequest, get_response: GetResponse
    ) -> HttpResponseBase:
        """A request with ``'sites'``: the host's sitemap answers (or 400, 404, 503), the
        resolver asked only for a path of ours."""
        core_request = request_from(request)
        robots = sites.routes.match(path) is None
        if robots and not sites.wants_robots(path, core_request.method):
            return get_response(request)
        if not robots and sites.settings.mode == "fallback":
            response = get_response(request)
            if response.status_code != 404:
                return response
        found = find(sites, core_request, self._sync.loop.call)
        if robots:
            if isinstance(found, Response):  # no site here: the project's robots.txt as it is
                return get_response(request)
            return robots_txt.serve(found, request, get_response)
        if isinstance(found, Response):
            return complete(found, core_request.method)
        target = found.routes.match_claimed(path)
        return self.serve(target, request, found)

    async def _aper_host(
        self, sites: Sites, path: str, request: HttpRequest, get_response: AsyncGetResponse
    ) -> HttpResponseBase:
        """:meth:`_per_host` with awaits (a sync resolver in Django's thread for sync work)."""
        core_request = request_from(request)
        robots = sites.routes.match(path) is None
        if robots and not sites.wants_robots(path, core_request.method):
            return await get_response(request)
        if not robots and sites.settings.mode == "fallback":
            response = await get_response(request)
            if response.status_code != 404:
                return response
        found = await afind(sites, core_request, _in_django_thread)
        if robots:
            if isinstance(found, Response):
                return await get_response(request)
            return await robots_txt.aserve(found, request, get_response)
        if isinstance(found, Response):
            return complete(found, core_request.method)
        target = found.routes.match_claimed(path)
        return await self.aserve(target, request, found)

    def serve(
        self, target: Target, request: HttpRequest, sitemap: Sitemap | None = None
    ) -> HttpResponseBase:
        """Answer a request for one of the sitemap's documents (sync: WSGI; ``sitemap``: the
        host's, with ``'sites'``)."""
        core_request = request_from(request)
        sitemap = sitemap or self.sitemap
        if sitemap.robots_rules is not None:
            robots_txt.read_rules(sitemap, request, cast(GetResponse, self.get_response))
        handling = handle(sitemap, core_request, target, datetime.now(UTC))
        try:
            outcome = run_effects(handling, self._sync.perform)
        finally:
            self._run_deferred()
        if isinstance(outcome, Response):
            return complete(outcome, core_request.method)
        body = _body(outcome, self._sync.transfer_chunks(outcome))
        # Started (the first chunk is made): closed, and the rows released, however it ends.
        start = next(body)
        assert isinstance(start, Response)
        chunks = cast(Iterator[bytes], body)
        if is_asgi(request):  # a sync middleware below Django's ASGI handler: see _in_thread
            return streaming(start, ClosedWithTask(_in_thread(chunks), request))
        return streaming(start, chunks)

    def _start_background(self, job: Callable[[], None]) -> None:
        """A refresh or recount in a thread of its own, unless the request's thread is in a
        transaction (a ``TestCase``'s: no other connection sees its rows) or on SQLite's
        in-memory test database (another connection's read would meet its table locks):
        then the job runs in this thread once the answer is planned (:meth:`_run_deferred`,
        :func:`.threads.reads_stay_here`)."""
        if reads_stay_here():
            self._deferred.__dict__.setdefault("jobs", []).append(job)
        else:
            start_thread(job)

    def _run_deferred(self) -> None:
        jobs = self._deferred.__dict__.pop("jobs", [])
        for job in jobs:
            job()

    async def aserve(
        self, target: Target, request: HttpRequest, sitemap: Sitemap | None = None
    ) -> HttpResponseBase:
        """Answer a request for one of the sitemap's documents (async: ASGI)."""
        core_request = request_from(request)
        sitemap = sitemap or self.sitemap
        if sitemap.robots_rules is not None:
            get_response = cast(AsyncGetResponse, self.get_response)
            await robots_txt.aread_rules(sitemap, request, get_response)
        handling = handle(sitemap, core_request, target, datetime.now(UTC))
        outcome = await arun_effects(handling, self._async.perform)
        if isinstance(outcome, Response):
            return complete(outcome, core_request.method)
        body = ClosedWithTask(_abody(outcome, AsyncTransferChunks(outcome)), request)
        start = await anext(body)
        assert isinstance(start, Response)
        return streaming(start, cast(AsyncIterator[bytes], body))


class ClosedWithTask(Generic[T]):
    """An async body closed once the task that sends it ends, however it ends.

    Django's ASGI handler reads a streamed body through a wrapper of its own and closes
    only that: when the client leaves (Django 5 cancels the sending task) the body would
    stay suspended, its rows and slot held, until the garbage collector finds it. And it
    closes the request's body file only when the response ends normally, not when an
    aborted transfer raises: closed here too.
    """

    def __init__(self, body: AsyncGenerator[T, None], request: HttpRequest) -> None:
        self._body = body
        self._request = request
        self._bound = False

    def __aiter__(self) -> ClosedWithTask[T]:
        return self

    async def __anext__(self) -> T:
        if not self._bound:
            self._bound = True
            task = asyncio.current_task()
            if task is not None:
                task.add_done_callback(self._close)
        return await anext(self._body)

    def _close(self, task: asyncio.Task[Any]) -> None:
        stream = getattr(self._request, "_stream", None)
        if stream is not None and hasattr(stream, "close"):
            stream.close()
        closing = task.get_loop().create_task(self._body.aclose())
        _CLOSING.add(closing)  # held until done (the loop keeps weak references)
        closing.add_done_callback(_CLOSING.discard)


_CLOSING: set[asyncio.Task[None]] = set()


async def _in_django_thread(resolver: Callable[[str], Any], host: str) -> Any:
    """A sync resolver where Django runs sync work (its connections, a test's transaction)."""
    return await sync_to_async(resolver)(host)


def _start(event: Event) -> Response:
    """The status line and headers: the first event of every transfer."""
    if not isinstance(event, Start):  # pragma: no cover - transfer_events starts so
        raise RuntimeError(f"a transfer began with {event!r}")
    return event.response


def _data(event: Event) -> bytes:
    """A body event's bytes; an abort raises, so the server aborts the transfer."""
    if isinstance(event, Chunk | End):
        return event.data
    if isinstance(event, Start):  # pragma: no cover - one status line per transfer
        raise RuntimeError("a second status line")
    raise event.error


def _body(transfer: Transfer, parts: SyncTransferChunks) -> Iterator[Response | bytes]:
    """The status line and headers, then the bytes; the rows and the slot released at the
    end, whatever ends it."""
    events = drive(transfer_events(transfer), parts.next)
    try:
        yield _start(next(events))
        for event in events:
            if data := _data(event):
                yield data
    finally:
        try:
            events.close()
            parts.close()
        finally:
            transfer.close()


def _next(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)


async def _in_thread(chunks: Iterator[bytes]) -> AsyncGenerator[bytes, None]:
    """A sync body for Django's ASGI handler, each chunk made in the request's thread: given
    a sync iterator, the handler would read the whole body into memory before sending it."""
    try:
        while (chunk := await sync_to_async(_next)(chunks)) is not None:
            yield chunk
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            await sync_to_async(close)()


async def _abody(
    transfer: Transfer, parts: AsyncTransferChunks
) -> AsyncGenerator[Response | bytes, None]:
    """:func:`_body` read with awaits."""
    events = adrive(transfer_events(transfer), parts.next)
    try:
        yield _start(await anext(events))
        async for event in events:
            if data := _data(event):
                yield data
    finally:
        try:
            await events.aclose()
            await parts.aclose()
        finally:
            transfer.close()
