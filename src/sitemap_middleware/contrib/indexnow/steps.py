"""The steps of pushing one source (or the queue), written once for sync and async sources.

Like :mod:`..core.handler`, a push is a generator: it yields each step (a :class:`PushStep`)
and gets the result sent back; :class:`.drivers.Driver` performs the steps, for a sync or
an async engine alike. So the order of the steps, the watermark rule and every answer's
handling live here and nowhere else.

One round of a source: claim the feed (lock and read its mark); none yet: write the
newest row's mark and stop (first use pushes nothing old); else read the rows after
the mark, post their URLs, and on acceptance advance the mark and commit; again until
no row is left, the endpoint refuses, or it keeps asking to wait.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ...sources.base import Changes, Mark
from .answers import Accepted, Backoff, Rejected, Retry, verdict
from .submission import Submission

logger = logging.getLogger("sitemap_middleware")

MISSING = object()
"""What :class:`Claim` gives for a feed without a mark yet."""
BUSY = object()
"""What :class:`Claim` gives when another pusher holds the feed and this one does not wait."""


@dataclass(frozen=True, slots=True)
class Claim:
    """Begin a transaction, lock the feed's row, read its mark (or :data:`MISSING`)."""

    feed: str


@dataclass(frozen=True, slots=True)
class Begin:
    """Write a feed's first mark (unless another pusher did) and commit."""

    feed: str
    mark: Mark


@dataclass(frozen=True, slots=True)
class StartMark:
    """The source's newest mark up to ``listed_until``."""

    listed_until: datetime


@dataclass(frozen=True, slots=True)
class ReadChanges:
    after: Mark
    listed_until: datetime
    limit: int


@dataclass(frozen=True, slots=True)
class ReadQueue:
    """The oldest ``limit`` queued URLs, as ``(id, url)``; with ``prefix``, only those that
    start with it (one site's, when sites share the queue)."""

    limit: int
    prefix: str | None = None


@dataclass(frozen=True, slots=True)
class Post:
    """POST the body to the endpoint: ``(status, Retry-After, body text)``, or an
    exception's text for a network error or timeout."""

    body: bytes


@dataclass(frozen=True, slots=True)
class Advance:
    """Write the feed's new mark (or empty the queue up to ``dequeue``) and commit."""

    feed: str
    mark: Mark | None = None
    dequeue: int | None = None
    prefix: str | None = None
    """With ``dequeue``: only the queued URLs that start with it (one site's)."""


@dataclass(frozen=True, slots=True)
class Release:
    """Roll back: the mark stays."""


@dataclass(frozen=True, slots=True)
class Wait:
    seconds: float


PushStep = Claim | Begin | StartMark | ReadChanges | ReadQueue | Post | Advance | Release | Wait


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    retry_after: str | None
    text: str


@dataclass
class Report:
    """What one round of a feed did."""

    name: str
    started: bool = False
    """First use: the mark was set to the newest row, nothing was pushed."""
    posts: int = 0
    urls: int = 0
    rows: int = 0
    retries: int = 0
    busy: bool = False
    """Another pusher held the feed: this round left it alone."""
    error: str | None = None
    sent: list[bytes] = field(default_factory=list)
    """With ``dry_run``: the bodies that would have been posted."""


@dataclass(frozen=True)
class Job:
    """One feed's push: what to read and how to post it."""

    name: str
    feed: str
    submission: Submission
    clock: Callable[[], datetime]
    rows_per_read: int
    backoff: Backoff
    max_retries: int = 5
    dry_run: bool = False
    lag: float = 0.0
    """Seconds the pushed rows stay behind the clock (writes that commit late)."""
    queue_prefix: str | None = None
    """The queue's job of one of several sites: only the queued URLs under the site's base
    URL are its (None: every queued URL, those of other hosts logged and dropped)."""

    def listed_until(self) -> datetime:
        """The latest lastmod pushed now."""
        return self.clock() - timedelta(seconds=self.lag)


Steps = Generator[PushStep, Any, Report]


def push_source(job: Job) -> Steps:
    """Push the rows of one source whose lastmod moved since its mark, up to the moment the
    round started (so that a round ends, however fast rows change)."""
    report = Report(job.name)
    pending: Mark | None = None  # with dry_run: where the next read starts
    listed_until = job.listed_until()
    while True:
        found = yield Claim(job.feed)
        if found is BUSY:
            report.busy = True
            return report
        if found is MISSING:
            if job.dry_run:
                yield Release()
            else:
                yield Begin(job.feed, (yield StartMark(listed_until)))
            report.started = True
            return report
        mark: Mark = pending or found
        changes: Changes = yield ReadChanges(mark, listed_until, job.rows_per_read)
        if not changes.marks:
            yield Release()
            return report
        post = job.submission.first_post(job.name, changes)
        if job.dry_run:
            yield Release()
            pending = post.mark
            if post.urls:
                report.sent.append(job.submission.body(post.urls))
                report.posts, report.urls = report.posts + 1, report.urls + len(post.urls)
            report.rows += post.rows
            continue
        done: Report | str = ACCEPTED
        if post.urls:  # else only rows without a URL: nothing to post, the mark moves on
            done = yield from _post(job, report, job.submission.body(post.urls), len(post.urls))
            if isinstance(done, Report):
                return done
        if done == ACCEPTED:
            report.rows += post.rows
            yield Advance(job.feed, post.mark)


def push_queue(job: Job) -> Steps:
    """Push the URLs the application queued (see :func:`.store.queue_urls`)."""
    report = Report(job.name)
    while True:
        found = yield Claim(job.feed)
        if found is BUSY:
            report.busy = True
            return report
        if found is MISSING:
            if job.queue_prefix is None:  # the shared queue's row: not made by install()
                yield Release()
                return report
            if not job.dry_run:  # a site's own queue row, made on its first push
                yield Begin(job.feed, Mark("", None))
                continue
        queued: list[tuple[int, str]] = yield ReadQueue(job.rows_per_read, job.queue_prefix)
        if not queued:
            yield Release()
            return report
        urls = job.submission.checked_urls(job.name, [url for _, url in queued])
        if job.dry_run:
            yield Release()
            if urls:
                report.sent.append(job.submission.body(urls))
                report.posts, report.urls = report.posts + 1, report.urls + len(urls)
            report.rows += len(queued)
            return report
        done: Report | str = ACCEPTED
        if urls:
            done = yield from _post(job, report, job.submission.body(urls), len(urls))
            if isinstance(done, Report):
                return done
        if done == ACCEPTED:
            report.rows += len(queued)
            yield Advance(job.feed, dequeue=queued[-1][0], prefix=job.queue_prefix)


ACCEPTED, AGAIN = "accepted", "again"


def _post(
    job: Job, report: Report, body: bytes, count: int
) -> Generator[PushStep, Any, Report | str]:
    """Post one batch while the feed is held: :data:`ACCEPTED` (the caller advances),
    :data:`AGAIN` after a wait (the feed released: claim it again, another pusher may have
    pushed meanwhile), or the report to end with (the feed released)."""
    answer = yield Post(body)
    outcome = (
        verdict(answer.status, answer.retry_after, answer.text, job.clock())
        if isinstance(answer, Answer)
        else Retry(f"network error: {answer}")
    )
    if isinstance(outcome, Accepted):
        job.backoff.reset()
        report.posts, report.urls = report.posts + 1, report.urls + count
        return ACCEPTED
    yield Release()
    if isinstance(outcome, Rejected):
        report.error = f"{job.name}: the endpoint rejected {count} URLs: {outcome.reason}"
        logger.error("IndexNow %s", report.error)
        return report
    if report.retries >= job.max_retries:
        report.error = (
            f"{job.name}: gave up after {report.retries + 1} attempts ({outcome.reason}); "
            "the mark is kept and the next round tries again"
        )
        logger.warning("IndexNow %s", report.error)
        return report
    report.retries += 1
    delay = job.backoff.delay(outcome.after)
    logger.warning("IndexNow %s: %s; trying again in %.1f s", job.name, outcome.reason, delay)
    yield Wait(delay)
    return AGAIN
