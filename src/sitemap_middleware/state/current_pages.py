"""Pages kept current between recounts: validators for big tables without whole-table work
on any request.

A source's pages (count, checksum, newest served and earliest future lastmod of
each fixed key range) are read whole by a **recount**, one ``GROUP BY`` over
the table, and kept current in between by **refreshes**: the rows whose lastmod
moved since the last refresh (a range read on the lastmod column's index) name
the pages whose aggregates are read again, one key range each.

Requests are answered from the pages last known while these are within their
bounds: a request that finds a refresh or recount due starts one in the
background (never two at once), so steady traffic never waits. A request that
finds them lagging past a bound (a lone crawler after a silence: see
:meth:`CurrentPages.refresh_bound`, :meth:`CurrentPages.recount_bound`) does not answer
from them: an index runs the refresh or recount itself first (as the first index
of a process does), a page reads its own aggregates. A page's ``200`` always takes
the validators of the rows it streams (its own aggregates, read before its head),
and a source of at most ``exact_rows`` rows is read on every request. A job keeps
its pages only if it started after the reads of those they replace: jobs that end
out of order never move the pages back.

What a refresh cannot see waits for the next recount: deleted rows, edits that
leave the lastmod alone or move it back, rows inserted with a lastmod older
than the last refresh, and commits more than :data:`COMMIT_MARGIN` after their
lastmod. A recount runs at most once per ``recount_interval``, by default
:data:`COST_FACTOR` times its own last duration, so the database spends about
1/50 of a connection on recounts per process; a refresh at most once per
``refresh_interval``, or :data:`COST_FACTOR` times its read of the moved rows
when that is longer (a scan, without an index on the lastmod column). A job in
the background that fails is tried again after ``refresh_interval``, not before;
one a request runs itself makes that request a ``503``.

The tokens come from the rows' aggregates only, never from the process: two
replicas that have read the same data give the same validators.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..core.dates import AsOf, iso
from ..core.effects import Effects, read_changed, read_pages, summarize
from ..core.validators import Summary
from ..sources.base import AnySource, CutPages, Page, page_keys

logger = logging.getLogger("sitemap_middleware")

COMMIT_MARGIN = timedelta(seconds=60)
"""How long after its lastmod a row's commit is still found by a refresh."""
COST_FACTOR = 50
"""A refresh or recount runs at most once per this many times its own last duration."""
MAX_CHANGES = 10_000
"""More moved rows than this in one refresh (a bulk update): a recount reads them all."""


@dataclass(frozen=True, slots=True)
class CountedPages:
    """The pages of a source as last read, and the whole-source summary they make."""

    pages: dict[int, Page]
    ordered: list[Page]
    whole: Summary
    tokens: dict[int, str]
    """Each page's :func:`page_token` (asked for by every request for the page)."""

    @classmethod
    def of(cls, pages: dict[int, Page], listed_until: datetime) -> CountedPages:
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
        whole = Summary(newest, count, "live:" + digest.hexdigest()[:32], listed_until, expires)
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
class CurrentPages:
    """The pages of one live source, and when the reads they follow started."""

    source: AnySource
    page_size: int
    refresh_interval: float
    recount_interval: float | None
    exact_rows: int = 0
    """A source of at most this many rows (as last counted) is read exactly on every
    request: its index recounts it, its pages read their own aggregates."""
    clock: Callable[[], float] = time.monotonic
    """The monotonic clock the intervals are counted on (a test may drive its own)."""
    known: CountedPages | None = None
    cut: bool = False
    """The data holds a key below 0: the source is cut, and served exactly."""
    running: bool = False
    """A job started in the background runs (never two at once)."""
    running_since: float = float("-inf")
    running_recount: bool = False
    idle: threading.Event = field(default_factory=threading.Event)
    """Set while no job runs in the background: what a request past a bound waits for."""
    refreshed_at: float = float("-inf")
    """When the reads of the last refresh or recount the pages follow started: a change
    committed before that shows in them, unless only a recount can see it."""
    recounted_at: float = float("-inf")
    """When the reads of the last recount the pages follow started."""
    refresh_cost: float = 0.0
    """The last refresh's read of the moved rows (what its interval follows)."""
    refresh_took: float = 0.0
    """The last refresh's whole duration, the pages it read again included."""
    recount_cost: float = 0.0
    retry_at: float = float("-inf")
    """After a failed job in the background: no new one before this."""
    refreshes: int = 0
    recounts: int = 0
    since: datetime | None = None
    """Lastmods later than this are read by the next refresh."""
    recent: dict[Any, Any] = field(default_factory=dict)
    """``key -> lastmod`` of the rows the last refresh read: unchanged, they touch no page."""
    whole_read: tuple[str, Summary] | None = None
    """The source's summary as last read exactly (a root urlset's ``200`` reads it), with
    the token of the pages kept current it was read beside: while they keep that token,
    the root's ``304``s answer with it, so they carry the entity tag its ``200`` sent."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    pages_moved: Callable[[str, list[int] | None, str], None] | None = None
    """Told, once a refresh or recount moved the validators of pages it had counted before,
    the source's name, those pages (numbered from 1), or None when the pages themselves
    changed (one more, one less, cut), and the token of the pages after the change (the
    same on every replica that read the same rows): the purges of their documents."""

    def __post_init__(self) -> None:
        self.idle.set()

    @property
    def usable(self) -> bool:
        return self.known is not None and not self.cut

    @property
    def cheap(self) -> bool:
        """Small enough to be read exactly on every request (see :attr:`exact_rows`)."""
        known = self.known
        return known is not None and not self.cut and (known.whole.count or 0) <= self.exact_rows

    def recount_every(self) -> float:
        if self.recount_interval is not None:
            return self.recount_interval
        return max(self.refresh_interval, COST_FACTOR * self.recount_cost)

    def refresh_every(self) -> float:
        return max(self.refresh_interval, COST_FACTOR * self.refresh_cost)

    def refresh_bound(self) -> float:
        """*R*: a change a refresh finds shows in every answer this long after its commit.

        A refresh starts in the background once ``refresh_every`` has passed; a request that
        finds none started for twice that and the last refresh's whole duration (the time a
        busy site's background refresh takes to end) runs one before answering."""
        return 2 * self.refresh_every() + self.refresh_took

    def recount_bound(self) -> float:
        """*C*: :meth:`refresh_bound` for the changes only a recount finds."""
        return 2 * self.recount_every() + self.recount_cost

    def recount_due(self, clock: float) -> bool:
        return clock - self.recounted_at >= self.recount_every()

    def recount_overdue(self, clock: float) -> bool:
        return clock - self.recounted_at > self.recount_bound()

    def overdue(self, clock: float) -> bool:
        """Whether answering from the pages could miss a change older than its bound."""
        if self.recount_overdue(clock):
            return True
        return self.tracks and clock - self.refreshed_at > self.refresh_bound()

    @property
    def tracks(self) -> bool:
        """Whether a refresh can read anything (else recounts alone keep the pages)."""
        return not self.cut and self.source.tracks_changes

    def due(self, clock: float) -> bool:
        if clock < self.retry_at:
            return False
        if not self.tracks:
            return self.recount_due(clock)  # nothing a refresh could read
        return self.recount_due(clock) or clock - self.refreshed_at >= self.refresh_every()

    def claim(self, clock: float) -> bool:
        """Whether the caller may start the due refresh or recount in the background
        (nobody else does)."""
        with self.lock:
            if self.running or not self.due(clock):
                return False
            self._run(clock, self.known is None or self.recount_due(clock))
            return True

    def claim_recount(self) -> bool:
        """Whether the caller may recount now (no job runs in the background)."""
        with self.lock:
            if self.running:
                return False
            self._run(self.clock(), True)
            self.recounted_at = float("-inf")
            return True

    def _run(self, clock: float, recount: bool) -> None:
        self.running, self.running_since, self.running_recount = True, clock, recount
        self.idle.clear()

    def ended(self) -> None:
        """The job in the background has ended (kept its pages, or failed)."""
        with self.lock:
            self.running = False
            self.idle.set()

    def worth_waiting(self, clock: float) -> float | None:
        """How long a request past a bound may wait for the job running in the background
        (None: there is none, or its reads started too early to bring the pages within the
        bounds): at most the bound itself, then the request reads on its own."""
        with self.lock:
            if not self.running:
                return None
            since = clock - self.running_since
            if self.recount_overdue(clock):
                late = not self.running_recount or since > self.recount_bound()
                took = self.recount_cost
            else:
                late, took = since > self.refresh_bound(), self.refresh_took
            # A job that takes far longer than the last one (a stuck connection): read anew.
            return None if late else max(1.0, 4 * took)

    def kept_token(self) -> str | None:
        """The token of the pages kept current, as they are now."""
        known = self.known
        return None if known is None or self.cut else known.whole.token

    def read_whole(self, summary: Summary, token: str | None) -> None:
        """Remember the source's summary just read exactly, if the pages kept current still
        have the token they had before the read (``token``): a job that moved them meanwhile
        may have read a change the summary missed."""
        with self.lock:
            if token is not None and token == self.kept_token():
                self.whole_read = (token, summary)

    def whole_as_read(self, listed_until: datetime) -> Summary | None:
        """The summary last read exactly, if the pages kept current have not moved since
        and no lastmod it saw in the future is due by ``listed_until``."""
        with self.lock:
            if self.whole_read is None or self.known is None:
                return None
            token, summary = self.whole_read
            if token != self.known.whole.token or not summary.fresh(listed_until):
                return None
            return summary

    def page_summary(self, page: int, listed_until: datetime) -> Summary:
        """The summary of page ``page`` (from 1): an empty one when it has no rows."""
        assert self.known is not None
        known = self.known.pages.get(page - 1)
        if known is None:
            return Summary(None, 0, "p:0", listed_until)
        token = self.known.tokens[page - 1]
        return Summary(known.newest, known.count, token, listed_until, known.expires)

    def page_of(self, page: int, summary: Summary) -> Summary:
        """A page summary read exactly, with the token the pages kept current give it."""
        if summary.checksum is None:
            return summary
        return replace(summary, token=page_token(page_from(page - 1, summary)))

    def recounted(
        self,
        whole: tuple[list[Page], list[tuple[Any, Any]] | None],
        listed_until: datetime,
        now: datetime,
        started: float,
    ) -> None:
        """Keep the pages a recount started at ``started`` read, unless the pages already
        follow reads started later (two jobs that end out of order never move them back)."""
        pages, moved = whole
        with self.lock:
            if started < self.refreshed_at:
                return
            before = self.known if self.recounts else _UNCOUNTED
            self.recount_cost = max(0.0, self.clock() - started)
            self.recounted_at = self.refreshed_at = started
            self.recounts += 1
            self.cut = any(page.last is not None for page in pages)
            if self.cut:  # keys below 0: pages are cut, their validators read exactly
                self.known = None
            else:
                self.known = CountedPages.of({page.index: page for page in pages}, listed_until)
                # Rows that move while the table is read are found by the next refresh.
                self.since = now - COMMIT_MARGIN
                small = moved is not None and len(moved) <= MAX_CHANGES
                self.recent = _recent(moved) if moved is not None and small else {}
            after = self.known
        self._tell(before, after)

    def refreshed(
        self,
        summaries: dict[int, Summary],
        moved: list[tuple[Any, Any]],
        listed_until: datetime,
        now: datetime,
        started: float,
    ) -> None:
        """Keep the pages a refresh started at ``started`` read again (see :meth:`recounted`).

        Pages kept by a job that started earlier and ended meanwhile are older than these:
        the rows that moved since it read them are among ``moved``."""
        with self.lock:
            if started < self.refreshed_at or self.known is None:
                return
            before = self.known
            kept = dict(self.known.pages)
            for page, summary in summaries.items():
                if not summary.count:
                    kept.pop(page, None)
                else:
                    kept[page] = page_from(page, summary)
            self.known = CountedPages.of(kept, listed_until)
            self.refresh_took = max(0.0, self.clock() - started)
            self.recent = _recent(moved)
            self.since = now - COMMIT_MARGIN
            self.refreshed_at = started
            self.refreshes += 1
            after = self.known
        self._tell(before, after)

    def _tell(self, before: CountedPages | object | None, after: CountedPages | None) -> None:
        """Tell :attr:`pages_moved` which pages the job moved (outside the lock: it may queue)."""
        if self.pages_moved is None or before is _UNCOUNTED:
            return  # nothing was counted before in this process: nothing to compare
        assert before is None or isinstance(before, CountedPages)
        pages = moved_pages(before, after)
        if pages is None or pages:
            version = "none" if after is None else after.whole.token
            self.pages_moved(self.source.name, pages, version)


_UNCOUNTED = object()
"""Before a source's first recount: no validators were given yet."""


def moved_pages(before: CountedPages | None, after: CountedPages | None) -> list[int] | None:
    """The pages (numbered from 1) whose token moved between two counts; None when the pages
    themselves changed (one more, one less, or the source cut or no longer cut)."""
    if before is None or after is None:
        return None if before is not after else []
    if before.tokens.keys() != after.tokens.keys():
        return None
    return [index + 1 for index, token in after.tokens.items() if before.tokens[index] != token]


def keep_current(
    live: CurrentPages,
    now: datetime,
    as_of: AsOf,
    *,
    inline: bool = False,
    recount: bool = False,
) -> Effects[None]:
    """Run a refresh, or a recount when one is due (or ``recount``), yielding its reads.

    A job started in the background (claimed) logs a failure and leaves the pages as they
    were; one a request runs ``inline`` before answering (the pages lag past their bound)
    raises it, for the request to answer ``503``."""
    started = live.clock()
    listed_until = as_of.listed_until
    try:
        base, since = live.known, live.since
        if recount or base is None or since is None or live.recount_due(started):
            whole = yield from read_whole(live, now, as_of)
            live.recounted(whole, listed_until, now, started)
            return
        moved = yield from read_changed(live.source, since, as_of, MAX_CHANGES + 1)
        # What a refresh costs however long its interval: the pages it reads again are as
        # many as the writes, whenever they are read.
        live.refresh_cost = max(0.0, live.clock() - started)
        keys = [key for key, _ in moved if key is not None]
        if len(moved) > MAX_CHANGES or any(key < 0 for key in keys):
            # A bulk change or a key below 0: a recount reads it.
            whole = yield from read_whole(live, now, as_of)
            live.recounted(whole, listed_until, now, started)
            return
        touched = sorted(_touched(base, live.recent, live.page_size, moved, listed_until))
        parts = tuple((live.source, page_keys(page + 1, live.page_size)) for page in touched)
        summaries: Sequence[Summary] = []
        if parts:
            summaries = yield from summarize(parts, as_of)
        live.refreshed(
            dict(zip(touched, summaries, strict=True)), moved, listed_until, now, started
        )
    except CutPages:  # its keys say it is cut: a recount finds its cuts
        if inline:
            whole = yield from read_whole(live, now, as_of)
            live.recounted(whole, listed_until, now, started)
            return
        with live.lock:
            live.recounted_at = float("-inf")
    except Exception as exc:  # a failing database: the pages stay as last known
        if inline:
            raise
        logger.warning(
            "sitemap source %r: keeping its pages current failed (%s: %s); retried later",
            live.source.name,
            type(exc).__name__,
            str(exc)[:200],
        )
        live.retry_at = live.clock() + live.refresh_interval
    finally:
        if not inline:
            live.ended()


def read_whole(
    live: CurrentPages, now: datetime, as_of: AsOf
) -> Effects[tuple[list[Page], list[tuple[Any, Any]] | None]]:
    """Every page's aggregates, and first the rows that moved in the last minute: those the
    pages already count, so that the next refresh reads again only the pages of rows that
    moved after them (not for a source read on every request: no refresh follows)."""
    moved = None
    if live.source.tracks_changes and not live.cheap:
        since = now - COMMIT_MARGIN
        moved = yield from read_changed(live.source, since, as_of, MAX_CHANGES + 1)
    pages = yield from read_pages(live.source, live.page_size, as_of)
    return pages, moved


def _recent(moved: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    return {key: lastmod for key, lastmod in moved if key is not None}


def _touched(
    known: CountedPages,
    recent: dict[Any, Any],
    page_size: int,
    moved: Iterable[tuple[Any, Any]],
    listed_until: datetime,
) -> set[int]:
    """The pages whose aggregates must be read again: those of rows that moved since the
    last refresh, and those with a future lastmod ``listed_until`` has reached."""
    touched = {
        key // page_size
        for key, lastmod in moved
        if key is not None and recent.get(key, _NEVER) != lastmod
    }
    expires = known.whole.expires  # the earliest of the pages'
    if expires is not None and expires <= listed_until:
        for page in known.ordered:
            if page.expires is not None and page.expires <= listed_until:
                touched.add(page.index)
    return touched


_NEVER = object()
