"""The IndexNow task of the ASGI lifespan (``indexnow.every``): a round every so many
seconds, from the application's startup to its shutdown. Several replicas may each run
it: the watermark's lock pushes each change once."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from ...servers.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from .pusher import IndexNow


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

        if getattr(self.middleware, "sites", None) is None:
            pushers = [IndexNow(self.middleware)]
        else:  # each site of the mapping whose indexnow.every is set
            pushers = IndexNow.for_mapped_sites(self.middleware)
        timed = [(p, every) for p in pushers if (every := _every(p)) is not None]
        self.task = asyncio.get_running_loop().create_task(run_all(timed))

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _every(pusher: IndexNow) -> float | None:
    indexnow = pusher.sitemap.settings.indexnow
    return None if indexnow is None else indexnow.every


async def run_all(timed: list[tuple[IndexNow, float]]) -> None:
    """Push each pusher every so many seconds, one at a time, in one task (a thousand sites
    need no thousand tasks); the first round of each at once."""
    if not timed:
        return
    loop = asyncio.get_running_loop()
    due = [loop.time()] * len(timed)
    while True:
        now = loop.time()
        for i, (pusher, every) in enumerate(timed):
            if due[i] <= now:
                await pusher.run_every(every, rounds=1)
                due[i] = max(due[i] + every, loop.time())
        await asyncio.sleep(max(0.0, min(due) - loop.time()))
