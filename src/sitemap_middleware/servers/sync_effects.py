"""How the WSGI adapter reads the sources: sync ones in the request's thread, async ones on
one event loop in a background thread.

Concurrent requests for the same aggregates share one query (``state/coalesce.py``);
pages kept current are refreshed by threads of their own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Generator
from functools import partial
from typing import Any, TypeVar

from ..core.effects import Await, Effect, InBackground, ReadChanged, Summarize
from ..core.handler import Transfer, run_effects
from ..output.entry import Batch
from ..sources.base import AnySource, AsyncSource, KeyRange
from ..state.coalesce import ThreadCoalescer
from .job_threads import JobThread

T = TypeVar("T")


class SyncEffectRunner:
    """Performs the effects of the handler and of the pages kept current, for one middleware.

    ``background``: starts a job of pages kept current (default: in a thread of its own);
    the Django middleware defers one started inside a transaction to the request's thread.
    """

    def __init__(self, background: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.loop = _Loop()
        self._coalescer = ThreadCoalescer()
        self._background = background or start_thread

    def perform(self, effect: Effect) -> Any:
        """Read what the handler needs; concurrent requests for the same aggregates share one
        query."""
        # Keyed by the source object (its read holds it while the round runs): the sources of
        # two sites may share a name, never their reads.
        shared = self._coalescer.run
        if isinstance(effect, Summarize):
            # A shared summary carries ``listed_until`` it was read under: the body follows it.
            return [
                shared(
                    ("summary", id(source), keys, effect.as_of.naive_timezone),
                    partial(self.call, source, "summarize", keys, effect.as_of),
                )
                for source, keys in effect.parts
            ]
        if isinstance(effect, ReadChanged):
            arguments = (effect.since, effect.as_of, effect.limit)
            return self.call(effect.source, "changed", *arguments)
        if isinstance(effect, Await):
            return effect.done.wait(effect.timeout)
        if isinstance(effect, InBackground):
            # Pages kept current: the request goes on; the job's reads are its own.
            self._background(partial(run_effects, effect.job, self.perform))
            return None
        return shared(
            ("pages", id(effect.source), effect.page_size, effect.as_of.listed_until),
            partial(
                self.call,
                effect.source,
                "pages",
                effect.page_size,
                effect.as_of,
            ),
        )

    def call(self, source: AnySource, method: str, *args: Any) -> Any:
        bound = getattr(source, method)
        if isinstance(source, AsyncSource):
            return self.loop.call(bound, *args)
        return bound(*args)

    def batches(self, source: AnySource, keys: KeyRange, size: int) -> Generator[Batch, None, None]:
        """A source's batches as a plain iterator; closing it releases the rows."""
        if not isinstance(source, AsyncSource):
            yield from source.batches(keys, size)
            return
        iterator = source.batches(keys, size)
        try:
            while (batch := self.loop.call(_anext, iterator)) is not _END:
                yield batch
        finally:
            self.loop.call(_aclose, iterator)

    def transfer_chunks(self, transfer: Transfer) -> SyncTransferChunks:
        """The chunks of a transfer's parts: what :func:`~sitemap_middleware.core.sending.drive`
        asks for."""
        return SyncTransferChunks(self, transfer)

    def chunks(
        self, source: AnySource, keys: KeyRange, transfer: Transfer
    ) -> Generator[bytes, None, None]:
        """The chunks one source adds to a transfer; closing it releases the rows."""
        batches = self.batches(source, keys, transfer.batch_size)
        try:
            for batch in batches:
                if chunk := transfer.feed(source.name, batch):
                    yield chunk
        finally:
            batches.close()

    def close(self) -> None:
        """Stop the background event loop of async sources, if one was started."""
        self.loop.close()


def start_thread(job: Callable[[], None]) -> None:
    """Run a background job in a thread of its own, which ends with it."""
    JobThread(job, name="sitemap-pages").start()


class SyncTransferChunks:
    """The chunks of a transfer's parts, one part at a time, each's rows closed once done."""

    def __init__(self, reads: SyncEffectRunner, transfer: Transfer) -> None:
        self._reads = reads
        self._transfer = transfer
        self._index = -1
        self._chunks: Generator[bytes, None, None] | None = None

    def next(self, index: int) -> bytes | None:
        if index != self._index:
            self.close()
            self._chunks = self._reads.chunks(*self._transfer.parts[index], self._transfer)
            self._index = index
        assert self._chunks is not None
        return next(self._chunks, None)

    def close(self) -> None:
        current, self._chunks = self._chunks, None
        if current is not None:
            current.close()


class _Loop:
    """One event loop in a background thread, for async sources under a sync server.

    The thread is a daemon: servers never call :meth:`close`, and a process must
    still be able to exit (Python joins non-daemon threads before ``atexit``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pending: set[concurrent.futures.Future[Any]] = set()

    def call(self, function: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``function(*args)`` on the loop and wait for its result in this thread."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="sitemap-async-sources", daemon=True
                )
                self._thread.start()
            loop = self._loop
            future = asyncio.run_coroutine_threadsafe(_awaited(function, args), loop)
            self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future.result()

    @property
    def running(self) -> bool:
        return self._loop is not None

    def close(self, grace: float = 10.0) -> None:
        """Stop the loop once the reads in flight have ended (for at most ``grace`` seconds):
        a driver's worker thread (aiosqlite's, asyncpg's) hands its result to the loop, and
        one closed under it fails in that thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            pending = list(self._pending)
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        concurrent.futures.wait(pending, timeout=grace)
        asyncio.run_coroutine_threadsafe(_stop(loop), loop)
        thread.join(grace)
        loop.close()


async def _stop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what still runs on ``loop`` (past the grace), then stop it."""
    others = [task for task in asyncio.all_tasks(loop) if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    await loop.shutdown_asyncgens()
    loop.stop()


async def _awaited(function: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> T:
    return await function(*args)


_END = object()


async def _anext(iterator: Any) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _END


async def _aclose(iterator: Any) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()
