"""The audits' politeness: at most ``concurrency`` requests in flight, and each connection
rests ``delay`` seconds after each answer before its next request.

Both audits of ``check`` (``--audit-lastmod``, ``--audit-indexable``) send every page request
through one :class:`Pace`, which also counts them and the most in flight at once.
:meth:`Pace.stream` works through a list of any length without holding it: the items are
taken as they are needed and each result handed on, in the items' order, as it comes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio
import httpx

from .fetch import Exchange, request

T = TypeVar("T")
R = TypeVar("R")


class Pace:
    def __init__(self, client: httpx.AsyncClient, concurrency: int, delay: float) -> None:
        self.client = client
        self.concurrency = concurrency
        self.delay = delay
        self.requests = 0
        self.peak = 0
        self.active = 0

    async def send(
        self, method: str, url: str, headers: dict[str, str], read_limit: int | None
    ) -> Exchange:
        """One request (raises :class:`~.fetch.NetworkError`), then this connection's rest."""
        self.requests += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            # The body is read (up to a bound) so that the connection can serve the next
            # request: one closed unread would cost a new connection per page.
            exchange = await request(self.client, method, url, headers, read_limit)
        finally:
            self.active -= 1
        await anyio.sleep(self.delay)
        return exchange

    async def each(self, items: list[T], work: Callable[[T], Awaitable[R]]) -> list[R]:
        """``work`` on every item, at most ``concurrency`` at once; the results in order."""
        results: dict[int, R] = {}
        pending = iter(enumerate(items))

        async def worker() -> None:
            for position, item in pending:
                results[position] = await work(item)

        async with anyio.create_task_group() as group:
            for _ in range(min(self.concurrency, len(items))):
                group.start_soon(worker)
        return [results[position] for position in range(len(items))]

    async def stream(
        self,
        items: Iterable[T],
        work: Callable[[T], Awaitable[R]],
        done: Callable[[T, R], None],
        window: int = 16,
    ) -> None:
        """``work`` on every item, at most ``concurrency`` at once; ``done(item, result)`` in
        the items' order. At most ``window`` times ``concurrency`` results wait for an
        earlier one: a worker that has gone that far ahead waits before taking its next."""
        pending = enumerate(items)
        results: dict[int, tuple[T, R]] = {}
        ahead = max(1, window) * self.concurrency
        handed = 0
        moved = anyio.Event()

        async def worker() -> None:
            nonlocal handed, moved
            for position, item in pending:
                while position >= handed + ahead:
                    await moved.wait()
                results[position] = (item, await work(item))
                if position != handed:
                    continue
                while handed in results:
                    done(*results.pop(handed))
                    handed += 1
                moved.set()
                moved = anyio.Event()

        async with anyio.create_task_group() as group:
            for _ in range(self.concurrency):
                group.start_soon(worker)
