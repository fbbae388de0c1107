"""Concurrent reads of the same aggregates share one query, without going stale.

A burst of crawlers revalidating one page asks for the same summary many times
at once. Each key has at most one query running and one *round* waiting: a
request joins the waiting round, or opens it; the round's query starts only
once the running one has finished, so it always starts after every request
that joined it arrived. No request is ever answered from data older than
itself, and a burst of N requests costs about two queries instead of N.

Two flavours with the same rule: :class:`AsyncCoalescer` (tasks on one event
loop, ASGI) and :class:`ThreadCoalescer` (threads, WSGI).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import anyio


class _Round:
    def __init__(self, done: Any) -> None:
        self.done = done
        self.result: Any = None
        self.error: BaseException | None = None

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class AsyncCoalescer:
    """Rounds of one event loop's tasks."""

    def __init__(self) -> None:
        self._waiting: dict[Hashable, _Round] = {}
        self._running: dict[Hashable, _Round] = {}

    async def run(self, key: Hashable, query: Callable[[], Awaitable[Any]]) -> Any:
        joined = self._waiting.get(key)
        if joined is not None:
            await joined.done.wait()
            return joined.outcome()
        own = self._waiting[key] = _Round(anyio.Event())
        running = self._running.get(key)
        if running is not None:
            await running.done.wait()  # ours starts after it: after every joiner arrived
        del self._waiting[key]
        self._running[key] = own
        try:
            # Shielded: the others wait for this query even if its own request goes away.
            with anyio.CancelScope(shield=True):
                own.result = await query()
        except Exception as exc:
            own.error = exc
        finally:
            del self._running[key]
            own.done.set()
        return own.outcome()


class ThreadCoalescer:
    """Rounds of a threaded server's request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, _Round] = {}
        self._running: dict[Hashable, _Round] = {}

    def run(self, key: Hashable, query: Callable[[], Any]) -> Any:
        running: _Round | None = None
        with self._lock:
            joined = self._waiting.get(key)
            if joined is None:
                own = self._waiting[key] = _Round(threading.Event())
                running = self._running.get(key)
        if joined is not None:
            joined.done.wait()
            return joined.outcome()
        if running is not None:
            running.done.wait()
        with self._lock:
            del self._waiting[key]
            self._running[key] = own
        try:
            own.result = query()
        except Exception as exc:
            own.error = exc
        finally:
            with self._lock:
                del self._running[key]
            own.done.set()
        return own.outcome()
