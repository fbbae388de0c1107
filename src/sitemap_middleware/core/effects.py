"""What answering a request (or keeping pages current) needs read from the sources.

The handler (``core/handler.py``) and the pages kept current (``state/current_pages.py``)
are generators that yield these; an adapter performs each one (sync sources in a worker
thread under ASGI, async ones awaited) and sends the result back.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ..sources.base import AnySource, KeyRange, Page
from .dates import AsOf

if TYPE_CHECKING:
    from .validators import Summary

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Summarize:
    """Read the summary of every part (aggregates only), in order."""

    parts: tuple[tuple[AnySource, KeyRange], ...]
    as_of: AsOf
    """Lastmods later than its ``listed_until`` are future, bad fields."""


@dataclass(frozen=True, slots=True)
class ReadPages:
    """Read the pages (count and newest lastmod per key range) of one source."""

    source: AnySource
    page_size: int
    as_of: AsOf
    """As of the summary the pages are remembered under: its rows, its lastmods."""


@dataclass(frozen=True, slots=True)
class ReadChanged:
    """Read ``(key, lastmod)`` of the rows whose lastmod moved (see ``Source.changed``)."""

    source: AnySource
    since: datetime
    as_of: AsOf
    limit: int


@dataclass(frozen=True, slots=True)
class InBackground:
    """Start ``job`` (a generator of reads like the handler) without waiting for it: the
    adapter runs it in a thread (WSGI) or a task (ASGI) and answers None at once."""

    job: Generator[Any, Any, None]


@dataclass(frozen=True, slots=True)
class Await:
    """Wait until ``done`` is set (a job in the background has ended), at most ``timeout``
    seconds: the adapter blocks this request's thread (WSGI) or waits in a worker thread
    (ASGI), and answers whether it was set."""

    done: threading.Event
    timeout: float


Effect = Summarize | ReadPages | ReadChanged | InBackground | Await


Effects = Generator[Effect, object, T]
"""A generator that yields effects and returns what they gave (``yield from`` it)."""


def summarize(parts: tuple[tuple[AnySource, KeyRange], ...], as_of: AsOf) -> Effects[list[Summary]]:
    """The summary of each part, in order."""
    return _checked((yield Summarize(parts, as_of)), list)


def read_pages(source: AnySource, page_size: int, as_of: AsOf) -> Effects[list[Page]]:
    """The non-empty pages of a source (see ``Source.pages``)."""
    return _checked((yield ReadPages(source, page_size, as_of)), list)


def read_changed(
    source: AnySource, since: datetime, as_of: AsOf, limit: int
) -> Effects[list[tuple[Any, Any]]]:
    """``(key, lastmod)`` of the rows whose lastmod moved (see ``Source.changed``)."""
    return _checked((yield ReadChanged(source, since, as_of, limit)), list)


def in_background(job: Generator[Any, Any, None]) -> Effects[None]:
    """Start ``job`` without waiting for it."""
    yield InBackground(job)


def await_job(done: threading.Event, timeout: float) -> Effects[bool]:
    """Wait for the job in the background that sets ``done`` (whether it ended in time)."""
    return _checked((yield Await(done, timeout)), bool)


def _checked(result: object, kind: type[T]) -> T:
    if not isinstance(result, kind):
        raise TypeError(f"a read gave {type(result).__name__}, not {kind.__name__}")
    return result
