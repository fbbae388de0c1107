"""What answering a request (or keeping pages current) needs read from the sources.

The flow (``flow.py``) and the pages kept current (``live_pages.py``) are generators
that yield these; an adapter performs each one (sync sources in a worker thread under
ASGI, async ones awaited) and sends the result back.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from .sources.base import AnySource, KeyRange


@dataclass(frozen=True, slots=True)
class Summarize:
    """Read the summary of every part (aggregates only), in order."""

    parts: tuple[tuple[AnySource, KeyRange], ...]
    naive_timezone: tzinfo
    horizon: datetime
    """Lastmods later than this are future, bad fields (now + ``lastmod_tolerance``)."""


@dataclass(frozen=True, slots=True)
class ReadPages:
    """Read the pages (count and newest lastmod per key range) of one source."""

    source: AnySource
    width: int
    naive_timezone: tzinfo
    horizon: datetime
    """The horizon of the summary the pages are remembered under: its rows, its lastmods."""


@dataclass(frozen=True, slots=True)
class ReadChanges:
    """Read ``(key, lastmod)`` of the rows whose lastmod moved (see ``Source.changed``)."""

    source: AnySource
    since: datetime
    horizon: datetime
    naive_timezone: tzinfo
    limit: int


@dataclass(frozen=True, slots=True)
class Background:
    """Start ``job`` (a generator of reads like the flow) without waiting for it: the
    adapter runs it in a thread (WSGI) or a task (ASGI) and answers None at once."""

    job: Generator[Any, Any, None]


Need = Summarize | ReadPages | ReadChanges | Background
