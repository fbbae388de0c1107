"""The IndexNow task of the ASGI lifespan (``indexnow.every``): a round every so many
seconds, from the application's startup to its shutdown. Several replicas may each run
it: the watermark's lock pushes each change once."""

from __future__ import annotations

import asyncio
import contextlib

from ...servers.types import ASGIApp, Message, Receive, Scope, Send


async def with_indexnow(
    middleware: object, app: ASGIApp, scope: Scope, receive: Receive, send: Send
) -> None:
    """The application's lifespan, with the IndexNow task of ``middleware`` (the ASGI
    adapter, whose sitemap and reads it uses) running from its startup to its shutdown."""
    task = PushTask(middleware)

    async def receive_and_watch() -> Message:
        message = await receive()
        if message["type"] == "lifespan.startup":
            task.start()
        elif message["type"] == "lifespan.shutdown":
            await task.stop()
        return message

    try:
        await app(scope, receive_and_watch, send)
    finally:
        await task.stop()


class PushTask:
    def __init__(self, middleware: object) -> None:
        self.middleware = middleware
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        from .pusher import IndexNow  # httpx, only when IndexNow is used

        pusher = IndexNow(self.middleware)
        indexnow = pusher.sitemap.settings.indexnow
        every = None if indexnow is None else indexnow.every
        assert every is not None
        self.task = asyncio.get_running_loop().create_task(pusher.run_every(every))

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
