"""Concurrent reads of the same aggregates share one query, without going stale.

A burst of crawlers revalidating one page asks for the same summary many times
at once. Each key has at most one query running and one *round* waiting: a
request joins the waiting round, or opens it; the round's query starts only
once the running one has finished, so it always starts after every request
that joined it arrived. No request is ever answered from data older than
itself, and a burst of N requests costs about two queries instead of N.

The rule is written once, without waiting (:meth:`Rounds.take_part`); two
flavours wait as their servers do: :class:`AsyncCoalescer` (tasks on one event
loop, ASGI) and :class:`ThreadCoalescer` (threads, WSGI).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Generator, Hashable
from typing import Any

import anyio


class _Round:
    def __init__(self, done: Any) -> None:
        self.done = done
        self.result: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        """Its opener went away before its query started: nobody runs it."""

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class _Query:
    """Run the round's query now; send back ``(result, error)``."""


QUERY = _Query()
Part = Generator[Any, Any, _Round]
"""A request's part in the rounds: yields an event to wait for (its ``wait()``, then
``send(None)``) or :data:`QUERY`; returns the round whose outcome answers it."""


class Rounds:
    """The rounds of every key: at most one running and one waiting."""

    def __init__(self) -> None:
        self._waiting: dict[Hashable, _Round] = {}
        self._running: dict[Hashable, _Round] = {}

    def take_part(self, key: Hashable, new_done: Callable[[], Any]) -> Part:
        """Join the waiting round of ``key``, or open it (``new_done()``: its event) and run
        its query once the running one has finished. The steps between two yields are
        atomic for the driver (a lock held by threads)."""
        while (joined := self._waiting.get(key)) is not None:
            yield joined.done
            if not joined.abandoned:
                return joined
            # Its opener went away before the query: join the next round, or open it.
        own = self._waiting[key] = _Round(new_done())
        running = self._running.get(key)
        if running is not None:
            try:
                yield running.done  # ours starts after it: after every joiner arrived
            except BaseException:  # the request went away (closed, cancelled) meanwhile
                del self._waiting[key]
                own.abandoned = True
                own.done.set()  # its joiners take part again
                raise
        del self._waiting[key]
        self._running[key] = own
        try:
            own.result, own.error = yield QUERY
        finally:  # a query that ended the request (not an Exception) ends the round too
            del self._running[key]
            own.done.set()
        return own


class AsyncCoalescer:
    """Rounds of one event loop's tasks."""

    def __init__(self) -> None:
        self._rounds = Rounds()

    async def run(self, key: Hashable, query: Callable[[], Awaitable[Any]]) -> Any:
        part = self._rounds.take_part(key, anyio.Event)
        try:
            step = next(part)
            while True:
                if step is QUERY:
                    try:
                        # Shielded: the others wait for it even if its own request goes away.
                        with anyio.CancelScope(shield=True):
                            reply: Any = (await query(), None)
                    except Exception as exc:
                        reply = (None, exc)
                else:
                    await step.wait()
                    reply = None
                step = part.send(reply)
        except StopIteration as stop:
            return stop.value.outcome()
        finally:
            part.close()


class ThreadCoalescer:
    """Rounds of a threaded server's request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rounds = Rounds()

    def run(self, key: Hashable, query: Callable[[], Any]) -> Any:
        part = self._rounds.take_part(key, threading.Event)
        try:
            with self._lock:
                step = next(part)
            while True:
                if step is QUERY:
                    try:
                        reply: Any = (query(), None)
                    except Exception as exc:
                        reply = (None, exc)
                else:
                    step.wait()
                    reply = None
                with self._lock:
                    step = part.send(reply)
        except StopIteration as stop:
            return stop.value.outcome()
        except BaseException:
            with self._lock:
                part.close()
            raise
