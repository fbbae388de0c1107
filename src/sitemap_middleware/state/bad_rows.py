"""Bad-row statistics: live counters per source, read as typed snapshots.

Counters live with the source objects (``source.bad_rows``), so an application
can read them however the middleware was built (Starlette's ``add_middleware``
builds it out of reach, on the first request). :func:`bad_row_stats` gives
those of every running sitemap by its URL, and ``middleware.stats`` those of
one. Counters are shared by threads (WSGI, ASGI worker threads): a lock guards
them.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

MAX_RECENT = 10
"""How many recent (key, reason) pairs each source keeps."""
MAX_VALUE = 200
"""Characters of a value (a key, a loc) kept in logs and statistics."""


def shorten(text: str, limit: int = MAX_VALUE) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit:,} more characters]"


class LanguageKey(NamedTuple):
    """The key of one language version of a row: ``(row key, language)``.

    It is a plain 2-tuple to everyone else (logs show ``(17, 'de')``); the
    statistics use it to count a row once however many languages it has.
    """

    row: Any
    lang: str

    def __repr__(self) -> str:
        return tuple.__repr__(self)


class BadRow(NamedTuple):
    """A recent problem: the row's key (its ``repr``, at most about 200 characters) and why."""

    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class BadRowStats:
    """The bad rows of one source, counted since the process started.

    A row is counted each time a document that holds it is generated (a
    counter, for rates and alerts); its URLs are those the row gives (one per
    language with ``languages``) that were left out or listed without a field.
    """

    rows_skipped: int = 0
    """Rows of which at least one URL was not listed."""
    urls_skipped: int = 0
    """URLs not listed."""
    rows_with_fields_dropped: int = 0
    """Rows listed without at least one bad optional field."""
    urls_with_fields_dropped: int = 0
    """URLs listed without at least one bad optional field."""
    recent: tuple[BadRow, ...] = ()
    """The last few distinct (key, reason) pairs, oldest first (at most ``MAX_RECENT``)."""

    @property
    def skipped(self) -> int:
        """``rows_skipped`` (the older name)."""
        return self.rows_skipped

    @property
    def fields_dropped(self) -> int:
        """``rows_with_fields_dropped`` (the older name)."""
        return self.rows_with_fields_dropped

    def __add__(self, other: BadRowStats) -> BadRowStats:
        recent = dict.fromkeys((*self.recent, *other.recent))
        return BadRowStats(
            self.rows_skipped + other.rows_skipped,
            self.urls_skipped + other.urls_skipped,
            self.rows_with_fields_dropped + other.rows_with_fields_dropped,
            self.urls_with_fields_dropped + other.urls_with_fields_dropped,
            tuple(recent)[-MAX_RECENT:],
        )


class Tally:
    """The live counters of one source."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # rows skipped, urls skipped, rows with fields dropped, urls with fields dropped
        self._counts = [0, 0, 0, 0]
        self._recent: OrderedDict[BadRow, None] = OrderedDict()

    def add(self, skipped: bool, rows: int, urls: int, problem: BadRow) -> None:
        at = 0 if skipped else 2
        with self._lock:
            self._counts[at] += rows
            self._counts[at + 1] += urls
            self._recent[problem] = None
            self._recent.move_to_end(problem)
            if len(self._recent) > MAX_RECENT:
                self._recent.popitem(last=False)

    def snapshot(self) -> BadRowStats:
        with self._lock:
            skipped, urls_skipped, dropped, urls_dropped = self._counts
            return BadRowStats(skipped, urls_skipped, dropped, urls_dropped, tuple(self._recent))


_create_lock = threading.Lock()


def tally_of(source: object) -> Tally:
    """The counters kept on a source object (made on first use)."""
    tally = vars(source).get("_bad_row_tally")
    if tally is None:
        with _create_lock:
            tally = vars(source).setdefault("_bad_row_tally", Tally())
    assert isinstance(tally, Tally)
    return tally


# Every sitemap built in this process, by object, with its URL and its sources' counters.
_running: weakref.WeakKeyDictionary[object, tuple[str, Mapping[str, Tally]]] = (
    weakref.WeakKeyDictionary()
)
_running_lock = threading.Lock()


def register(sitemap: object, url: str, tallies: Mapping[str, Tally]) -> None:
    with _running_lock:
        _running[sitemap] = (url, tallies)


def bad_row_stats() -> dict[str, dict[str, BadRowStats]]:
    """The bad-row statistics of every sitemap running in this process, by its URL
    (``https://example.com/sitemap.xml``), then by source name.

    Empty until a middleware is built (under Starlette's ``add_middleware``, on
    the first request). Middlewares serving one URL are added up; a source
    shared by them counts once.
    """
    with _running_lock:
        running = list(_running.values())
    found: dict[str, dict[str, dict[int, Tally]]] = {}
    for url, tallies in running:
        sources = found.setdefault(url, {})
        for name, tally in tallies.items():
            sources.setdefault(name, {})[id(tally)] = tally
    return {
        url: {
            name: sum((t.snapshot() for t in tallies.values()), BadRowStats())
            for name, tallies in sources.items()
        }
        for url, sources in found.items()
    }
