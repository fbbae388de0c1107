"""Pages kept current between recounts: validators for big tables without whole-table work
on any request.

A source's pages (count, checksum, newest served and earliest future lastmod of
each fixed key range) are read whole by a **recount**, one ``GROUP BY`` over
the table, and kept current in between by **refreshes**: the rows whose lastmod
moved since the last refresh (a range read on the lastmod column's index) name
the pages whose aggregates are read again, one key range each. Requests are
answered from the pages last known; a request that finds a refresh or recount
due starts one in the background (never two at once), and only the very first
index of a process waits for its recount.

What a refresh cannot see waits for the next recount: deleted rows, edits that
leave the lastmod alone or move it back, rows inserted with a lastmod older
than the last refresh, and commits more than :data:`COMMIT_MARGIN` after their
lastmod. A recount runs at most once per ``recount_interval``, by default
:data:`COST_FACTOR` times its own last duration, so the database spends about
1/50 of a connection on recounts per process; a refresh at most once per
``refresh_interval``, or :data:`COST_FACTOR` times its read of the moved rows
when that is longer (a scan, without an index on the lastmod column). A job
that fails is tried again after ``refresh_interval``, not before.

The tokens come from the rows' aggregates only, never from the process: two
replicas that have read the same data give the same validators.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from .dates import iso
from .needs import Reads, read_changes, read_pages, summarize
from .sources.base import AnySource, CutPages, Page, page_keys
from .validators import Summary, horizon_of

logger = logging.getLogger("sitemap_middleware")

COMMIT_MARGIN = timedelta(seconds=60)
"""How long after its lastmod a row's commit is still found by a refresh."""
COST_FACTOR = 50
"""A refresh or recount runs at most once per this many times its own last duration."""
MAX_CHANGES = 10_000
"""More moved rows than this in one refresh (a bulk update): a recount reads them all."""


@dataclass(frozen=True, slots=True)
class Known:
    """The pages of a source as last read, and the whole-source summary they make."""

    pages: dict[int, Page]
    ordered: list[Page]
    whole: Summary
    tokens: dict[int, str]
    """Each page's :func:`page_token` (asked for by every request for the page)."""

    @classmethod
    def of(cls, pages: dict[int, Page], horizon: datetime) -> Known:
        indexes = sorted(pages)
        ordered = [pages[index] for index in indexes]
        tokens = {index: page_token(pages[index]) for index in indexes}
        digest = hashlib.sha256()
        for token in tokens.values():
            digest.update(token.encode("utf-8", "surrogatepass"))
            digest.update(b"\x1f")
        newest = max((b.newest for b in ordered if b.newest is not None), default=None)
        expires = min((b.expires for b in ordered if b.expires is not None), default=None)
        count = sum(b.count for b in ordered)
        whole = Summary(newest, count, "live:" + digest.hexdigest()[:32], horizon, expires)
        return cls(pages, ordered, whole, tokens)


def page_token(page: Page) -> str:
    """A page's token: the same whether its aggregates came from a recount or a refresh."""
    return f"p:{page.count}:{page.checksum}:{iso(page.newest)}:{iso(page.expires)}"


def page_from(index: int, summary: Summary) -> Page:
    """The page ``index`` (from 0) as a page's own summary describes it."""
    return Page(
        index, summary.count or 0, summary.newest, None, summary.checksum or "", summary.expires
    )


@dataclass
class LivePages:
    """The pages of one live source, and when they were last refreshed and recounted."""

    source: AnySource
    width: int
    refresh_interval: float
    recount_interval: float | None
    known: Known | None = None
    cut: bool = False
    """The data holds a key below 0: the source is cut, and served exactly."""
    running: bool = False
    refreshed_at: float = float("-inf")
    recounted_at: float = float("-inf")
    refresh_cost: float = 0.0
    recount_cost: float = 0.0
    retry_at: float = float("-inf")
    """After a failed job: no new job before this."""
    refreshes: int = 0
    recounts: int = 0
    since: datetime | None = None
    """Lastmods later than this are read by the next refresh."""
    recent: dict[Any, Any] = field(default_factory=dict)
    """``key -> lastmod`` of the rows the last refresh read: unchanged, they touch no page."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def usable(self) -> bool:
        return self.known is not None and not self.cut

    def recount_every(self) -> float:
        if self.recount_interval is not None:
            return self.recount_interval
        return max(self.refresh_interval, COST_FACTOR * self.recount_cost)

    def refresh_every(self) -> float:
        return max(self.refresh_interval, COST_FACTOR * self.refresh_cost)

    def recount_due(self, clock: float) -> bool:
        return clock - self.recounted_at >= self.recount_every()

    def due(self, clock: float) -> bool:
        if clock < self.retry_at:
            return False
        if self.cut or not self.source.tracks_changes:
            return self.recount_due(clock)  # nothing a refresh could read
        return self.recount_due(clock) or clock - self.refreshed_at >= self.refresh_every()

    def claim(self, clock: float) -> bool:
        """Whether the caller may run the due refresh or recount (nobody else is)."""
        with self.lock:
            if self.running or not self.due(clock):
                return False
            self.running = True
            return True

    def claim_recount(self) -> bool:
        """Whether the caller may recount now (nobody is refreshing or recounting)."""
        with self.lock:
            if self.running:
                return False
            self.running = True
            self.recounted_at = float("-inf")
            return True

    def page_summary(self, page: int, horizon: datetime) -> Summary:
        """The summary of page ``page`` (from 1): an empty one when it has no rows."""
        assert self.known is not None
        known = self.known.pages.get(page - 1)
        if known is None:
            return Summary(None, 0, "p:0", horizon)
        token = self.known.tokens[page - 1]
        return Summary(known.newest, known.count, token, horizon, known.expires)

    def seed(
        self,
        whole: tuple[list[Page], list[tuple[Any, Any]] | None],
        horizon: datetime,
        now: datetime,
        cost: float,
    ) -> Known | None:
        """Pages read whole by a request (the first index, :func:`read_whole`): kept, as a
        recount's are, unless a recount is running or done; the pages the request is to
        use (None when the source must be cut)."""
        pages = whole[0]
        with self.lock:
            if self.known is None and not self.running:
                _recounted(self, *whole, horizon, now, time.monotonic() - cost)  # may cut
            if self.known is not None:
                return self.known
        if any(page.last is not None for page in pages):
            return None
        # A recount in the background has not finished: this request's own reading.
        return Known.of({page.index: page for page in pages}, horizon)

    def page_of(self, page: int, summary: Summary) -> Summary:
        """A page summary read exactly, with the token the pages kept current give it."""
        if summary.checksum is None:
            return summary
        return replace(summary, token=page_token(page_from(page - 1, summary)))


def keep_current(
    live: LivePages, now: datetime, naive_timezone: tzinfo, tolerance: int
) -> Reads[None]:
    """Run the due recount or refresh of ``live`` (claimed by the caller), yielding its
    reads; a failure is logged and leaves the pages as they were."""
    started = time.monotonic()
    horizon = horizon_of(now, tolerance)
    try:
        if live.recount_due(started):
            whole = yield from read_whole(live, now, naive_timezone, horizon)
            _recounted(live, *whole, horizon, now, started)
            return
        assert live.since is not None and live.known is not None
        moved = yield from read_changes(
            live.source, live.since, horizon, naive_timezone, MAX_CHANGES + 1
        )
        # What a refresh costs however long its interval: the pages it reads again are as
        # many as the writes, whenever they are read.
        live.refresh_cost = time.monotonic() - started
        keys = [key for key, _ in moved if key is not None]
        if len(moved) > MAX_CHANGES or any(key < 0 for key in keys):
            live.recounted_at = float("-inf")  # a bulk change or a key below 0: recount next
            live.refreshed_at = time.monotonic()
            return
        touched = sorted(_touched(live, moved, horizon))
        parts = tuple((live.source, page_keys(page + 1, live.width)) for page in touched)
        summaries: Sequence[Summary] = []
        if parts:
            summaries = yield from summarize(parts, naive_timezone, horizon)
        kept = dict(live.known.pages)
        for page, summary in zip(touched, summaries, strict=True):
            if not summary.count:
                kept.pop(page, None)
            else:
                kept[page] = page_from(page, summary)
        live.known = Known.of(kept, horizon)
        live.recent = _recent(moved)
        live.since = now - COMMIT_MARGIN
        live.refreshed_at = time.monotonic()
        live.refreshes += 1
    except CutPages:
        live.recounted_at = float("-inf")
    except Exception as exc:  # a failing database: the pages stay as last known
        logger.warning(
            "sitemap source %r: keeping its pages current failed (%s: %s); retried later",
            live.source.name,
            type(exc).__name__,
            str(exc)[:200],
        )
        live.retry_at = time.monotonic() + live.refresh_interval
    finally:
        live.running = False


def read_whole(
    live: LivePages, now: datetime, naive_timezone: tzinfo, horizon: datetime
) -> Reads[tuple[list[Page], list[tuple[Any, Any]] | None]]:
    """Every page's aggregates, and first the rows that moved in the last minute: those the
    pages already count, so that the next refresh reads again only the pages of rows that
    moved after them."""
    moved = None
    if live.source.tracks_changes:
        since = now - COMMIT_MARGIN
        moved = yield from read_changes(
            live.source, since, horizon, naive_timezone, MAX_CHANGES + 1
        )
    pages = yield from read_pages(live.source, live.width, naive_timezone, horizon)
    return pages, moved


def _recounted(
    live: LivePages,
    pages: list[Page],
    moved: list[tuple[Any, Any]] | None,
    horizon: datetime,
    now: datetime,
    started: float,
) -> None:
    live.cut = any(page.last is not None for page in pages)
    if live.cut:  # keys below 0: pages are cut, their validators read exactly
        live.known = None
        live.recounted_at = time.monotonic()
        return
    live.known = Known.of({page.index: page for page in pages}, horizon)
    # Rows that move while the table is read are found by the next refresh.
    live.since = now - COMMIT_MARGIN
    live.recent = _recent(moved) if moved is not None and len(moved) <= MAX_CHANGES else {}
    live.recounted_at = live.refreshed_at = time.monotonic()
    live.recount_cost = live.recounted_at - started
    live.recounts += 1


def _recent(moved: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    return {key: lastmod for key, lastmod in moved if key is not None}


def _touched(live: LivePages, moved: Iterable[tuple[Any, Any]], horizon: datetime) -> set[int]:
    """The pages whose aggregates must be read again: those of rows that moved since the
    last refresh, and those with a future lastmod the horizon has reached."""
    assert live.known is not None
    recent = live.recent
    touched = {
        key // live.width
        for key, lastmod in moved
        if key is not None and recent.get(key, _NEVER) != lastmod
    }
    expires = live.known.whole.expires  # the earliest of the pages'
    if expires is not None and expires <= horizon:
        for page in live.known.ordered:
            if page.expires is not None and page.expires <= horizon:
                touched.add(page.index)
    return touched


_NEVER = object()
