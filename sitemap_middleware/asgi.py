"""Pure ASGI adapter: moves bytes between the server, the sources and the core.

It decides nothing itself. Per request it reads the sources' summaries, asks
the core for the plan, and for a 200 pulls batches of rows, hands them to the
core's :class:`~sitemap_middleware.core.Body` and sends the chunks. The status
line goes out only once the first chunk is ready, so a source failing before
that becomes a 503; after it, the response is aborted (no closing tag, no
final empty chunk) so no client takes a truncated sitemap for a whole one.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from contextlib import aclosing
from datetime import UTC, datetime, tzinfo
from typing import Any

import anyio
import anyio.to_thread

from .core import Body, Request, Response, Sitemap
from .entry import BadRowStats
from .routing import Target
from .settings import make_settings
from .sources.base import AnySource, AsyncSource, Bucket, KeyRange, NotPageable
from .validators import Summary
from .xml import LimitExceeded

logger = logging.getLogger("sitemap_middleware")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SitemapAborted(RuntimeError):
    """A source failed after the response had started; the transfer was cut short."""


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
    return Request(scope["method"], headers)


async def chunks(
    source: AnySource, keys: KeyRange, body: Body, size: int
) -> AsyncGenerator[bytes, None]:
    """The chunks one source adds to a body, its rows closed however the iteration ends.

    A sync source is read *and rendered* in a worker thread, one chunk per
    hand-off (a hand-off costs about as much as rendering a hundred rows), and
    is closed in a thread too. Cancellation lands between chunks; cleanup is
    shielded from it so the connection always goes back to the pool.
    """
    if isinstance(source, AsyncSource):
        batches = source.batches(keys, size)
        try:
            async for batch in batches:
                chunk = body.feed(source.name, batch)
                if chunk:
                    yield chunk
        finally:
            with anyio.CancelScope(shield=True):
                await batches.aclose()  # type: ignore[attr-defined]
        return

    sync_batches = source.batches(keys, size)

    def next_chunk() -> bytes | None:
        for batch in sync_batches:
            chunk = body.feed(source.name, batch)
            if chunk:
                return chunk
        return None

    try:
        while True:
            ready: bytes | None = await anyio.to_thread.run_sync(next_chunk)
            if ready is None:
                return
            yield ready
    finally:
        close = getattr(sync_batches, "close", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(close)


async def summarize(source: AnySource, keys: KeyRange, naive_timezone: tzinfo) -> Summary:
    if isinstance(source, AsyncSource):
        return await source.summarize(keys, naive_timezone)
    return await anyio.to_thread.run_sync(source.summarize, keys, naive_timezone)


async def buckets(source: AnySource, width: int, naive_timezone: tzinfo) -> list[Bucket]:
    if isinstance(source, AsyncSource):
        return await source.buckets(width, naive_timezone)
    return await anyio.to_thread.run_sync(source.buckets, width, naive_timezone)


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


class SitemapMiddleware:
    """Serves the sitemap in front of any ASGI application.

    ``mode="intercept"`` (default): requests for ``path`` never reach the app.
    ``mode="fallback"``: the app answers first; only its 404 is replaced by the
    sitemap (its 404 body is dropped unread), so a real ``sitemap.xml`` wins.
    """

    def __init__(self, app: ASGIApp, /, *, sources: object, **settings: Any) -> None:
        """``settings`` are the fields of :class:`~sitemap_middleware.Settings`."""
        self.app = app
        self.sitemap = Sitemap(sources, make_settings(settings))

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source, counted since start."""
        return self.sitemap.stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        target = self.sitemap.route(route_path(scope))
        if target is None:
            return await self.app(scope, receive, send)
        if self.sitemap.settings.mode == "fallback":
            return await self._fallback(target, scope, receive, send)
        await self.serve(target, scope, receive, send)

    async def _fallback(self, target: Target, scope: Scope, receive: Receive, send: Send) -> None:
        swallowed = False

        async def send_unless_404(message: Message) -> None:
            nonlocal swallowed
            if message["type"] == "http.response.start" and message["status"] == 404:
                swallowed = True
                return
            if not swallowed:
                await send(message)

        await self.app(scope, receive, send_unless_404)
        if swallowed:
            await self.serve(target, scope, receive, send)

    async def serve(self, target: Target, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request for one of the sitemap's documents."""
        sitemap = self.sitemap
        request = request_from(scope)
        refusal = sitemap.method_not_allowed(request)
        if refusal is not None:
            return await _send(send, refusal, request.method)
        parts = sitemap.parts(target)
        if parts is None:
            return await _send(send, sitemap.not_found(), request.method)
        naive_timezone = sitemap.settings.naive_timezone
        try:
            summaries = [await summarize(source, keys, naive_timezone) for source, keys in parts]
        except Exception:
            logger.exception("sitemap %s: a source failed before the response", target)
            return await _send(send, sitemap.unavailable(), request.method)
        plan = sitemap.respond(request, target, parts, summaries, datetime.now(UTC))
        if not plan.stream:
            return await _send(send, plan, request.method)
        if plan.index:
            return await self._index(plan, summaries, send)
        await self._stream(target, plan, receive, send)

    async def _index(self, plan: Response, summaries: list[Summary], send: Send) -> None:
        """A sitemapindex: read the pages of sources whose data changed, then send it whole."""
        sitemap = self.sitemap
        naive_timezone = sitemap.settings.naive_timezone
        try:
            for source, summary in sitemap.index_needs(plan, summaries):
                sitemap.remember(
                    source, summary, await buckets(source, sitemap.page_rows, naive_timezone)
                )
            document = sitemap.index(plan)
        except (LimitExceeded, NotPageable) as exc:
            return await _send(send, sitemap.too_large(exc), "GET")
        except Exception:
            logger.exception("sitemap %s: a source failed before the index", sitemap.url)
            return await _send(send, sitemap.unavailable(), "GET")
        await send(_start(plan))
        await send({"type": "http.response.body", "body": document, "more_body": False})

    async def _stream(self, target: Target, plan: Response, receive: Receive, send: Send) -> None:
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
                await self._produce(target, plan, send)
            except Exception as exc:
                failure = exc
            group.cancel_scope.cancel()
        if failure is not None:
            raise SitemapAborted(
                f"sitemap {target}: transfer aborted after the response started"
            ) from failure

    async def _produce(self, target: Target, plan: Response, send: Send) -> None:
        """Send a urlset; raises only once the response has started."""
        sitemap = self.sitemap
        body = sitemap.body(plan)
        started = False
        try:
            for source, keys in plan.parts:
                async with aclosing(
                    chunks(source, keys, body, sitemap.settings.batch_size)
                ) as parts:
                    async for chunk in parts:
                        if not started:
                            await send(_start(plan))
                            started = True
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if body.urls == 0:
                # Every row was rejected: nothing valid to list (an empty urlset is invalid).
                return await _send(send, sitemap.not_found(), "GET")
            last = body.close()
        except Exception as exc:
            if started:
                logger.exception("sitemap %s: aborting the transfer", target)
                raise
            if isinstance(exc, LimitExceeded):
                return await _send(send, sitemap.too_large(exc), "GET")
            logger.exception("sitemap %s: a source failed before the first byte", target)
            return await _send(send, sitemap.unavailable(), "GET")
        if not started:
            await send(_start(plan))
        await send({"type": "http.response.body", "body": last, "more_body": False})


def _start(response: Response) -> Message:
    return {
        "type": "http.response.start",
        "status": response.status,
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers],
    }


async def _send(send: Send, response: Response, method: str) -> None:
    await send(_start(response))
    body = b"" if method == "HEAD" else response.body
    await send({"type": "http.response.body", "body": body, "more_body": False})


class SitemapApp(SitemapMiddleware):
    """The sitemap as a standalone ASGI app (404 for every other path), for ``Mount``."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(_not_found_app, **settings)
