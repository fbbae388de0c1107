"""Pure ASGI adapter: translates between ASGI messages and the core.

It decides nothing itself. It routes, runs the handler with its reads
(:mod:`.async_effects`), and turns the events of the answer (:mod:`..core.sending`) into
``http.response.start`` and ``http.response.body`` messages, watching for the
client's disconnect; an aborted transfer raises, so the server cuts the
response short (no final empty chunk) and no client takes a truncated sitemap
for a whole one. With ``mode="fallback"`` it sits between the server and the
application's own messages; ``/robots.txt`` is :mod:`.asgi_robots`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Unpack

import anyio
import anyio.to_thread

from ..core.handler import SitemapAborted, Transfer, arun_effects, handle
from ..core.routing import Target
from ..core.sending import Chunk, End, Event, Start, adrive, response_events, transfer_events
from ..core.sitemap import Request, Response, Sitemap
from ..core.sites import ServesSites, Sites, configure, purge_served, sitemaps_of
from ..settings import AdapterOptions, Settings
from ..state.purges import Purger
from .asgi_robots import read_rules, robots_txt
from .async_effects import AsyncEffectRunner, AsyncTransferChunks
from .resolving import afind
from .types import ASGIApp, Message, Receive, Scope, Send


def route_path(scope: Scope) -> str:
    """The path below the mount point, as Starlette's routing computes it."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if root_path and (path == root_path or path.startswith(root_path + "/")):
        return path[len(root_path) :]
    return path


def request_from(scope: Scope) -> Request:
    headers: dict[str, list[str]] = {}
    for name, value in scope.get("headers", ()):
        headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return Request(scope["method"], headers, str(scope.get("http_version", "1.1")))


async def _not_found_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


class SitemapMiddleware(ServesSites):
    """Serves the sitemap in front of any ASGI application.

    ``mode="intercept"`` (default): requests for ``path`` never reach the app.
    ``mode="fallback"``: the app answers first; only its 404 is replaced by the
    sitemap (its 404 body is dropped unread), so a real ``sitemap.xml`` wins.

    ``sites=`` instead of ``sources=`` and ``base_url=``: a sitemap per host (see
    :class:`~sitemap_middleware.SiteConfig`).
    """

    def __init__(
        self,
        app: ASGIApp,
        /,
        *,
        sources: object = None,
        sites: object = None,
        purger: Purger | None = None,
        **settings: Unpack[AdapterOptions],
    ) -> None:
        """``settings`` are the fields of :class:`~sitemap_middleware.Settings`; beside
        ``sites=`` they are shared by every site (no ``base_url``). ``purger`` is told the
        surrogate keys of the documents that changed (see :meth:`purge`)."""
        self._start(app, configure(sources, sites, settings, purger))

    def _start(self, app: ASGIApp, served: Sitemap | Sites) -> None:
        self.app = app
        self.served = served
        self.reads = AsyncEffectRunner()
        """Performs the handler's reads; IndexNow given this middleware reads through it."""

    @property
    def settings(self) -> Settings:
        """The settings (with ``sites=``: those shared by every site)."""
        return self.served.settings

    async def recount(self) -> None:
        """Read the pages of every source kept current whole, now (see ``freshness``): after
        a bulk delete, say, rather than waiting for the next recount."""
        for sitemap in sitemaps_of(self.served):
            for live in sitemap.current_pages.values():
                while not live.claim_recount():  # noqa: ASYNC110 (a refresh may run in a thread)
                    await asyncio.sleep(0.01)
                await arun_effects(sitemap.keep_current(live), self.reads.perform)

    def purge(self, source: str | None = None, *, host: str | None = None) -> list[str]:
        """Purge the documents of one source (the root included), or every document, from
        the CDN, through the ``purger``: after a bulk write, say. With ``sites=``, those of
        the site of ``host`` (every site's, with none). Returns the surrogate keys queued at
        once (a ``ValueError`` for a source it does not serve); the purge runs in the
        background, retried when it fails."""
        return purge_served(self.served, source, host)

    async def aclose(self, grace: float = 10.0) -> None:
        """Let the jobs of pages kept current that run in the background end (for at most
        ``grace`` seconds), so that their connections go back to the pool, and the purges
        queued go out. The lifespan's shutdown does it before the application's own
        shutdown (which may dispose of the engine); an app served without a lifespan calls
        it."""
        await self.reads.aclose(grace)
        if self.served.purges is not None:
            await anyio.to_thread.run_sync(self.served.purges.close, grace)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                return await self._lifespan(scope, receive, send)
            return await self.app(scope, receive, send)
        path = route_path(scope)
        if isinstance(self.served, Sites):
            return await self._per_host(self.served, path, scope, receive, send)
        target = self.sitemap.routes.match(path)
        if target is None:
            if self.sitemap.wants_robots(path, scope["method"]):
                request = request_from(scope)
                return await robots_txt(
                    self.sitemap,
                    self.app,
                    request,
                    (scope, receive, send),
                    lambda outcome: _send(send, outcome, request.method),
                )
            return await self.app(scope, receive, send)
        if self.sitemap.settings.mode == "fallback":
            return await self._fallback(target, scope, receive, send)
        await self.serve(target, scope, receive, send)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def receive_then_close() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await self.aclose()
            return message

        if self._pushes_indexnow():
            from ..contrib.indexnow.background import with_indexnow

            return await with_indexnow(self, self.app, scope, receive_then_close, send)
        return await self.app(scope, receive_then_close, send)

    def _pushes_indexnow(self) -> bool:
        """Whether the lifespan runs IndexNow's pushes: ``indexnow.every`` set for the
        sitemap, or for a site of a ``sites=`` mapping (a resolver's are pushed by the CLI)."""
        configs = self.sites.configs if self.sites is not None else None
        settings = [c.indexnow for c in configs.values()] if configs else [self.settings.indexnow]
        return any(s is not None and s.every is not None for s in settings)

    async def _per_host(
        self, sites: Sites, path: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A request with ``sites=``: the host's sitemap answers (or 400, 404, 503), the
        resolver asked only for a path of ours."""
        method = scope["method"]
        robots = sites.routes.match(path) is None
        if robots and not sites.wants_robots(path, method):
            return await self.app(scope, receive, send)
        if robots or sites.settings.mode == "intercept":
            return await self._for_host(sites, path, robots, scope, receive, send)

        async def then() -> None:
            await self._for_host(sites, path, False, scope, receive, send)

        await self._fallback(then, scope, receive, send)

    async def _for_host(
        self, sites: Sites, path: str, robots: bool, scope: Scope, receive: Receive, send: Send
    ) -> None:
        request = request_from(scope)
        found = await afind(sites, request)
        if robots:
            if isinstance(found, Response):  # no site here: the app's robots.txt as it is
                return await self.app(scope, receive, send)
            return await robots_txt(
                found,
                self.app,
                request,
                (scope, receive, send),
                lambda outcome: _send(send, outcome, request.method),
            )
        if isinstance(found, Response):
            return await _send(send, found, request.method)
        target = found.routes.match_claimed(path)
        await self.serve(target, scope, receive, send, found)

    async def _fallback(
        self,
        then: Target | Callable[[], Awaitable[None]],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        swallowed = False

        async def send_unless_404(message: Message) -> None:
            nonlocal swallowed
            if message["type"] == "http.response.start" and message["status"] == 404:
                swallowed = True
                return
            if not swallowed:
                await send(message)

        await self.app(scope, receive, send_unless_404)
        if not swallowed:
            return
        if callable(then):
            return await then()
        await self.serve(then, scope, receive, send)

    async def serve(
        self,
        target: Target,
        scope: Scope,
        receive: Receive,
        send: Send,
        sitemap: Sitemap | None = None,
    ) -> None:
        """Answer a request for one of the sitemap's documents (``sitemap``: the host's,
        with ``sites=``)."""
        request = request_from(scope)
        sitemap = sitemap or self.sitemap
        if sitemap.robots_rules is not None:
            await read_rules(sitemap, self.app, scope)
        handling = handle(sitemap, request, target, datetime.now(UTC))
        outcome = await arun_effects(handling, self.reads.perform)
        if isinstance(outcome, Response):
            return await _send(send, outcome, request.method)
        try:
            await self._stream(target, outcome, receive, send)
        finally:
            outcome.close()

    async def _stream(
        self, target: Target, transfer: Transfer, receive: Receive, send: Send
    ) -> None:
        failure: BaseException | None = None

        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch_disconnect)
            try:
                await _produce(transfer, send)
            except Exception as exc:
                failure = exc
            group.cancel_scope.cancel()
        if isinstance(failure, SitemapAborted):
            raise failure
        if failure is not None:  # sending failed
            raise SitemapAborted(
                f"sitemap {transfer.path}: transfer aborted after the response started"
            ) from failure


async def _produce(transfer: Transfer, send: Send) -> None:
    """Send a urlset; raises (:class:`SitemapAborted`) only once the response has started."""
    parts = AsyncTransferChunks(transfer)
    try:
        async for event in adrive(transfer_events(transfer), parts.next):
            await _emit(send, event)
    finally:
        await parts.aclose()


async def _emit(send: Send, event: Event) -> None:
    """An event as ASGI messages."""
    if isinstance(event, Start):
        await send(_start(event.response))
    elif isinstance(event, Chunk):
        await send({"type": "http.response.body", "body": event.data, "more_body": True})
    elif isinstance(event, End):
        await send({"type": "http.response.body", "body": event.data, "more_body": False})
    else:
        raise event.error


def _start(response: Response) -> Message:
    return {
        "type": "http.response.start",
        "status": response.status,
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers],
    }


async def _send(send: Send, response: Response, method: str) -> None:
    for event in response_events(response, method):
        await _emit(send, event)


class SitemapApp(SitemapMiddleware):
    """The sitemap as a standalone ASGI app (404 for every other path), for ``Mount``."""

    def __init__(
        self,
        *,
        sources: object = None,
        sites: object = None,
        purger: Purger | None = None,
        **settings: Unpack[AdapterOptions],
    ) -> None:
        self._start(_not_found_app, configure(sources, sites, settings, purger))
