"""How the ASGI adapter reads the sources: sync ones in worker threads, async ones awaited.

Concurrent requests for the same aggregates share one query (``state/coalesce.py``);
pages kept current are refreshed by tasks of their own. A ``urlset``'s chunks
come from :func:`chunks`: a sync source is read and rendered in a worker thread
that hands each chunk to the event loop as it is ready.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..core.dates import AsOf
from ..core.effects import Await, Effect, InBackground, ReadChanged, Summarize
from ..core.handler import Transfer, arun_effects
from ..core.validators import Summary
from ..sources.base import AnySource, AsyncSource, KeyRange, Page, SyncSource
from ..state.coalesce import AsyncCoalescer


class AsyncEffectRunner:
    """Performs the effects of the handler and of the pages kept current, for one middleware.

    ``background``: the context a job of pages kept current runs in (default: a copy of
    the request's that started it); the Django middleware gives one that outlives the
    request's thread for sync work.
    """

    def __init__(self, background: Callable[[], contextvars.Context] | None = None) -> None:
        self._coalescer = AsyncCoalescer()
        self._background = background
        self._jobs: set[asyncio.Task[None]] = set()  # held until done (the loop keeps weak refs)

    async def perform(self, effect: Effect) -> Any:
        """Read what the handler needs (sync sources in a worker thread, async ones awaited);
        concurrent requests for the same aggregates share one query."""
        # Keyed by the source object (its read holds it while the round runs): the sources of
        # two sites may share a name, never their reads.
        shared = self._coalescer.run
        if isinstance(effect, Summarize):
            # A shared summary carries ``listed_until`` it was read under: the body follows it.
            return [
                await shared(
                    ("summary", id(source), keys, effect.as_of.naive_timezone),
                    partial(summarize, source, keys, effect.as_of),
                )
                for source, keys in effect.parts
            ]
        if isinstance(effect, ReadChanged):
            return await changed(effect)
        if isinstance(effect, Await):  # the job may run in a thread: wait in one
            return await anyio.to_thread.run_sync(effect.done.wait, effect.timeout)
        if isinstance(effect, InBackground):
            # Pages kept current: the request goes on; the job's reads are its own.
            context = self._background() if self._background is not None else None
            job = arun_effects(effect.job, self.perform)
            task = asyncio.get_running_loop().create_task(job, context=context)
            self._jobs.add(task)
            task.add_done_callback(self._jobs.discard)
            return None
        return await shared(
            ("pages", id(effect.source), effect.page_size, effect.as_of.listed_until),
            partial(pages, effect.source, effect.page_size, effect.as_of),
        )

    async def call(self, source: AnySource, method: str, *args: Any) -> Any:
        """One read of a source by its method's name, where the source's reads belong
        (see :func:`read`): IndexNow's ``push_start`` and ``changes``."""
        return await read(source, method, *args)

    async def aclose(self, grace: float = 10.0) -> None:
        """Let the jobs of pages kept current that run in the background end, for at most
        ``grace`` seconds: their connections go back to the pool before the application
        disposes of its engine."""
        if self._jobs:
            await asyncio.wait(set(self._jobs), timeout=grace)


async def chunks(
    source: AnySource, keys: KeyRange, body: Transfer, size: int
) -> AsyncGenerator[bytes, None]:
    """The chunks one source adds to a body, its rows closed however the iteration ends.

    A sync source is read *and rendered* in a worker thread, which hands each
    chunk over as it is ready and goes on with the next one while the loop
    sends it (at most one chunk waits; see :class:`_Handoff`); its rows are
    closed in that thread too. Cancellation (a disconnect, a shutdown) lands
    between batches, never inside a database call: a driver interrupted
    mid-fetch leaves its connection in an unknown state. Cleanup is shielded
    too, so the connection always goes back to the pool.
    """
    if isinstance(source, AsyncSource):
        batches = source.batches(keys, size)
        try:
            while True:
                with anyio.CancelScope(shield=True):
                    batch = await anext(batches, None)
                if batch is None:
                    break
                # A pending cancellation lands here (no loop iteration when there is none).
                await anyio.lowlevel.checkpoint_if_cancelled()
                chunk = body.feed(source.name, batch)
                if chunk:
                    yield chunk
        finally:
            with anyio.CancelScope(shield=True):
                await batches.aclose()
        return

    if source.thread_bound:
        async for chunk in _bound_chunks(source, keys, body, size):
            yield chunk
        return

    handoff = _Handoff(asyncio.get_running_loop())
    sync_batches = source.batches(keys, size)

    def produce() -> None:
        try:
            for batch in sync_batches:
                chunk = body.feed(source.name, batch)
                if chunk and not handoff.put(chunk):
                    return  # the transfer ended: read no further
        finally:
            try:
                close = getattr(sync_batches, "close", None)
                if close is not None:
                    close()
            finally:
                handoff.done()

    worker = asyncio.ensure_future(anyio.to_thread.run_sync(produce))
    try:
        while (ready := await handoff.get()) is not None:
            yield ready
        await worker  # its failure, if any, after the chunks it made
    finally:
        handoff.stop()
        with anyio.CancelScope(shield=True):
            await asyncio.wait([worker])  # it stops after its current batch
            if not worker.cancelled():
                worker.exception()  # raised above already, or superseded by what ended us


async def _bound_chunks(
    source: SyncSource, keys: KeyRange, body: Transfer, size: int
) -> AsyncGenerator[bytes, None]:
    """:func:`chunks` of a source bound to a thread (``thread_bound``): each step, up to
    the next chunk, runs in :meth:`~SyncSource.in_thread`, and the rows are closed there.
    The next step starts as a chunk is handed over, so the thread renders it while the
    loop sends the one before; the thread is free between steps (other reads, and the
    request's own sync work, take turns in it)."""
    batches = iter(source.batches(keys, size))

    def step() -> bytes | None:
        for batch in batches:
            if chunk := body.feed(source.name, batch):
                return chunk
        return None

    def close() -> None:
        close = getattr(batches, "close", None)
        if close is not None:
            close()

    def next_step() -> asyncio.Future[bytes | None]:
        return asyncio.ensure_future(source.in_thread(step))

    pending = next_step()
    try:
        # Shielded: cancellation lands between steps, never inside a database call.
        while (chunk := await asyncio.shield(pending)) is not None:
            pending = next_step()
            await anyio.lowlevel.checkpoint_if_cancelled()
            yield chunk
    finally:
        with anyio.CancelScope(shield=True):
            await asyncio.wait([pending])  # the step under way ends first
            if not pending.cancelled():
                pending.exception()  # raised above already, or superseded by what ended us
            await source.in_thread(close)


class AsyncTransferChunks:
    """The chunks of a transfer's parts (:func:`chunks`), one part at a time, each closed
    once done: what :func:`~sitemap_middleware.core.sending.adrive` asks for.

    A gzip-coded transfer's chunks are compressed in a thread of the loop's executor,
    one at a time and in order, while the next one is rendered: zlib lets other
    threads run while it works, so on two cores the compression adds little more than
    its last chunk's to a request. Only the document's last chunk
    (:meth:`~sitemap_middleware.core.handler.Transfer.finish`) is compressed on the loop.
    """

    def __init__(self, transfer: Transfer) -> None:
        self._transfer = transfer
        self._index = -1
        self._chunks: AsyncGenerator[bytes, None] | None = None
        self._encode = transfer.defer_gzip()
        self._encoding: asyncio.Future[bytes] | None = None  # the chunk being compressed

    async def next(self, index: int) -> bytes | None:
        if index != self._index:
            await self._close_part()
            source, keys = self._transfer.parts[index]
            self._chunks = chunks(source, keys, self._transfer, self._transfer.batch_size)
            self._index = index
        assert self._chunks is not None
        if self._encode is None:
            return await anext(self._chunks, None)
        if self._encoding is None:
            plain = await anext(self._chunks, None)
            if plain is None:
                return None
            self._encoding = self._compress(plain)
        plain = await anext(self._chunks, None)  # rendered while the one before is compressed
        # Shielded: on cancellation it runs on, and aclose waits for it.
        coded = await asyncio.shield(self._encoding)
        self._encoding = self._compress(plain) if plain is not None else None
        return coded

    def _compress(self, plain: bytes) -> asyncio.Future[bytes]:
        """Compress in a thread that starts at once (a task would start only once the loop
        next waits, and an async source's next chunk may be rendered before that)."""
        assert self._encode is not None
        return asyncio.get_running_loop().run_in_executor(None, self._encode, plain)

    async def _close_part(self) -> None:
        current, self._chunks = self._chunks, None
        if current is not None:
            await current.aclose()

    async def aclose(self) -> None:
        encoding, self._encoding = self._encoding, None
        try:
            await self._close_part()
        finally:
            if encoding is not None:  # the transfer ended early: let the compression end
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([encoding])
                if not encoding.cancelled():
                    encoding.exception()  # superseded by what ended the transfer


class _Handoff:
    """Chunks from the worker thread that renders them to the event loop that sends them.

    The worker never waits for the loop to ask for a chunk (a thread hand-off each
    way costs about as much as rendering a hundred rows); it waits only while one
    chunk is already waiting, so memory holds at most three chunks: one being sent,
    one waiting, one being gathered (and, gzip-coded, one being compressed: see
    :class:`TransferChunks`).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._chunks: deque[bytes] = deque()
        self._room = threading.Semaphore(1)
        self._ready = asyncio.Event()
        self._finished = False
        self._stopped = False

    def put(self, chunk: bytes) -> bool:
        """In the worker: hand a chunk over (waiting while one waits); False once the loop
        wants no more."""
        self._room.acquire()
        if self._stopped:
            return False
        self._chunks.append(chunk)
        self._loop.call_soon_threadsafe(self._ready.set)
        return True

    def done(self) -> None:
        """In the worker: no more chunks."""
        self._finished = True
        if not self._stopped:
            self._loop.call_soon_threadsafe(self._ready.set)

    async def get(self) -> bytes | None:
        """In the loop: the next chunk, or None once the worker is done."""
        while not self._chunks:
            if self._finished:
                return None
            await self._ready.wait()
            self._ready.clear()
        chunk = self._chunks.popleft()
        self._room.release()
        return chunk

    def stop(self) -> None:
        """In the loop: take no more chunks, and let a waiting worker go on to end."""
        self._stopped = True
        self._chunks.clear()
        self._room.release()


async def read(source: AnySource, method: str, *args: Any) -> Any:
    """Call a source's read: a sync source's in :meth:`~SyncSource.in_thread` (a worker
    thread, or the thread its reads belong to, Django's), an async source's awaited."""
    call = getattr(source, method)
    if isinstance(source, AsyncSource):
        return await call(*args)
    return await source.in_thread(partial(call, *args))


async def summarize(source: AnySource, keys: KeyRange, as_of: AsOf) -> Summary:
    summary: Summary = await read(source, "summarize", keys, as_of)
    return summary


async def pages(source: AnySource, page_size: int, as_of: AsOf) -> list[Page]:
    found: list[Page] = await read(source, "pages", page_size, as_of)
    return found


async def changed(effect: ReadChanged) -> list[tuple[Any, Any]]:
    rows: list[tuple[Any, Any]] = await read(
        effect.source, "changed", effect.since, effect.as_of, effect.limit
    )
    return rows
