"""A response as events, written once for every adapter.

:func:`transfer_events` is the whole sending of a ``urlset``: a generator that
asks for each part's next chunk (:class:`NextChunk`) and yields what goes out
(:class:`Start`, :class:`Chunk`, :class:`End`), or :class:`Abort` when a failure
comes after the status line. :func:`response_events` does the same for a
complete response (a HEAD gets no body). An adapter drives them with
:func:`drive` (sync) or :func:`adrive` (async), reading the chunks its own way,
and translates each event into its protocol's messages; it decides nothing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass

from .exchange import Response
from .handler import SitemapAborted, Transfer


@dataclass(frozen=True, slots=True)
class Start:
    """The status line and headers."""

    response: Response


@dataclass(frozen=True, slots=True)
class Chunk:
    data: bytes


@dataclass(frozen=True, slots=True)
class End:
    """The body is complete, with these last bytes."""

    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Abort:
    """The body cannot be completed after it started: the adapter must abort the transfer
    short (raise), so that no client takes a truncated sitemap for a whole one."""

    error: SitemapAborted


@dataclass(frozen=True, slots=True)
class NextChunk:
    """Read the next chunk of the transfer's part ``index`` (None: the part is done)."""

    index: int


Event = Start | Chunk | End | Abort
Events = Generator[Event | NextChunk, bytes | None, None]


def response_events(response: Response, method: str) -> Iterator[Event]:
    """A complete response: its body unless the request was a HEAD."""
    yield Start(response)
    yield End(b"" if method == "HEAD" else response.body)


def transfer_events(transfer: Transfer) -> Events:
    """A ``urlset`` on its way out: the status line goes with the first chunk, so a failure
    until then is still a clean answer (see :meth:`Transfer.failed`)."""
    try:
        for index in range(len(transfer.parts)):
            while (chunk := (yield NextChunk(index))) is not None:
                if start := transfer.start():
                    yield Start(start)
                yield Chunk(chunk)
        last = transfer.finish()
    except Exception as exc:
        try:
            refusal = transfer.failed(exc)
        except Exception as error:
            aborted = SitemapAborted(
                f"sitemap {transfer.path}: transfer aborted after the response started"
            )
            aborted.__cause__ = error
            yield Abort(aborted)
            return
        yield from response_events(refusal, "GET")
        return
    if isinstance(last, Response):
        yield from response_events(last, "GET")
        return
    if start := transfer.start():
        yield Start(start)
    for chunk in last:
        yield Chunk(chunk)
    yield End()


def drive(events: Events, read: Callable[[int], bytes | None]) -> Generator[Event, None, None]:
    """The events, each :class:`NextChunk` answered by ``read(index)`` (or its error)."""
    step = _step(events, None, None)
    while step is not None:
        if not isinstance(step, NextChunk):
            yield step
            step = _step(events, None, None)
            continue
        try:
            chunk = read(step.index)
        except Exception as exc:
            step = _step(events, None, exc)
        else:
            step = _step(events, chunk, None)


async def adrive(
    events: Events, read: Callable[[int], Awaitable[bytes | None]]
) -> AsyncGenerator[Event, None]:
    """:func:`drive` for adapters that await their chunks."""
    step = _step(events, None, None)
    while step is not None:
        if not isinstance(step, NextChunk):
            yield step
            step = _step(events, None, None)
            continue
        try:
            chunk = await read(step.index)
        except Exception as exc:
            step = _step(events, None, exc)
        else:
            step = _step(events, chunk, None)


def _step(events: Events, reply: bytes | None, error: Exception | None) -> Event | NextChunk | None:
    """Send a chunk (or throw a read's error) into the events: the next one, or None at the
    end."""
    try:
        return events.throw(error) if error is not None else events.send(reply)
    except StopIteration:
        return None
