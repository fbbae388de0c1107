"""Purges of surrogate keys, sent in the background: serving never waits on a CDN.

A :class:`Purger` is the application's (or :class:`~sitemap_middleware.contrib.varnish.
XkeyPurger`): ``purge(keys)`` drops every document filed under any of ``keys``, and raises
when it could not. :class:`PurgeQueue` calls it from a thread of its own, so that a purger
may block (an HTTP request): the keys queued meanwhile go out together with its next call.
A purge that raises is tried again after each of :data:`RETRY_DELAYS` (the keys queued
since join it), then given up and logged: the CDN then serves those documents until their
``s-maxage`` (and ``stale-while-revalidate``) have passed, no longer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

logger = logging.getLogger("sitemap_middleware")

RETRY_DELAYS = (1.0, 5.0, 30.0, 120.0)
"""Seconds before each new try of a purge that failed; then it is given up."""


@runtime_checkable
class Purger(Protocol):
    """Drops the cached documents filed under surrogate keys (a CDN's or a cache's API).

    Called in a thread of the middleware's own, never in a request's: it may block, and
    should bound its waits (a timeout), since the purges queued after it wait for it. It
    raises when the purge failed, to have it tried again."""

    def purge(self, keys: Sequence[str]) -> None:
        """Drop every document carrying any of ``keys``."""


class PurgeQueue:
    """The keys waiting to be purged, and the thread that purges them (started with the
    first keys)."""

    def __init__(self, purger: Purger, retry_delays: Sequence[float] = RETRY_DELAYS) -> None:
        self.purger = purger
        self.retry_delays = tuple(retry_delays)
        self._pending: dict[str, None] = {}  # an ordered set
        self._busy = False
        self._closed = False
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self.purged = 0
        """Calls of the purger that succeeded."""
        self.failures = 0
        """Calls of the purger that raised."""
        self.given_up = 0
        """Keys given up after every try failed."""

    def submit(self, keys: Iterable[str]) -> None:
        """Queue ``keys``; returns at once."""
        with self._condition:
            if self._closed:
                return
            for key in keys:
                self._pending[key] = None
            if not self._pending:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="sitemap-purges", daemon=True
                )
                self._thread.start()
            self._condition.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Until no key waits and no purge runs (sent, or given up); whether that came
        within ``timeout`` seconds."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self, grace: float = 10.0) -> None:
        """Let the purges queued go out (for at most ``grace`` seconds), then stop: a retry
        still waiting is given up."""
        self.wait(grace)
        with self._condition:
            self._closed = True
            self._condition.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(max(grace, 0.1))

    def _take(self, keys: dict[str, None], delay: float | None) -> bool:
        """Wait for keys (at most ``delay`` seconds, if given), then add the pending ones to
        ``keys``; False once closed."""
        with self._condition:
            if delay is None:
                self._condition.wait_for(lambda: self._pending or self._closed)
            else:
                self._condition.wait_for(lambda: self._closed, delay)
            if self._closed:
                self._busy = False
                self._condition.notify_all()
                return False
            keys.update(self._pending)
            self._pending.clear()
            self._busy = True
            return True

    def _run(self) -> None:
        keys: dict[str, None] = {}
        failed = 0
        while self._take(keys, None if not failed else self.retry_delays[failed - 1]):
            batch = list(keys)
            try:
                self.purger.purge(batch)
            except Exception as exc:
                self.failures += 1
                failed += 1
                if failed <= len(self.retry_delays):
                    logger.warning(
                        "sitemap purge of %d keys failed (%s: %s); retried in %gs",
                        len(batch),
                        type(exc).__name__,
                        str(exc)[:200],
                        self.retry_delays[failed - 1],
                    )
                    continue
                logger.error(
                    "sitemap purge of %d keys failed %d times (%s: %s); given up: those "
                    "documents stay cached until their s-maxage ends",
                    len(batch),
                    failed,
                    type(exc).__name__,
                    str(exc)[:200],
                )
                self.given_up += len(batch)
            else:
                self.purged += 1
                logger.debug("sitemap purged %d keys", len(batch))
            keys.clear()
            failed = 0
            with self._condition:
                self._busy = bool(self._pending)
                self._condition.notify_all()
        if keys:
            logger.warning("sitemap purge of %d keys given up: the middleware closed", len(keys))
            self.given_up += len(keys)
