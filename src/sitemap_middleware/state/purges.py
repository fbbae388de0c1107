"""Purges of surrogate keys, sent in the background: serving never waits on a CDN.

A :class:`Purger` is the application's (or :class:`~sitemap_middleware.contrib.varnish.
XkeyPurger`): ``purge(keys)`` drops every document filed under any of ``keys``, and raises
when it could not. :class:`PurgeQueue` calls it from a thread of its own, so that a purger
may block (an HTTP request): the keys queued meanwhile go out together with its next call.
A purge that raises is tried again after each of :data:`RETRY_DELAYS` (the keys queued
since join it), then given up and logged: the CDN then serves those documents until their
``s-maxage`` (and ``stale-while-revalidate``) have passed, no longer.

Every replica learns of a change by itself and queues its purge. A purger that also
:class:`Claims` purges (:class:`~sitemap_middleware.sources.sqlalchemy.ClaimedPurger`)
sends each change once across replicas: a purge a refresh queues carries the token of the
pages after the change, the same on every replica that read the same rows, and only the
replica that claims (key, token) first sends it.
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


@runtime_checkable
class Claims(Protocol):
    """A purger that sends each change once across replicas."""

    def claim(self, changes: Sequence[tuple[str, str]]) -> set[str]:
        """Of ``changes`` (a key, the version of the documents it names), the keys this
        process is first to claim, to purge; raises when the claims cannot be read (the
        keys are then purged anyway: twice is harmless, never is stale)."""


class PurgeQueue:
    """The keys waiting to be purged, and the thread that purges them (started with the
    first keys)."""

    def __init__(self, purger: Purger, retry_delays: Sequence[float] = RETRY_DELAYS) -> None:
        self.purger = purger
        self.retry_delays = tuple(retry_delays)
        self._pending: dict[str, str | None] = {}  # key -> the version it purges, if any
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

        self.claimed_elsewhere = 0
        """Keys another replica had claimed for the same version (not sent from here)."""

    def submit(self, keys: Iterable[str], version: str | None = None) -> None:
        """Queue ``keys``; returns at once. ``version``: the token of the documents after the
        change, for a purger that :class:`Claims` (None: an explicit purge, always sent)."""
        with self._condition:
            if self._closed:
                return
            for key in keys:
                # An explicit purge of a key stays explicit whatever change joins it.
                known = key in self._pending and self._pending[key] is None
                self._pending[key] = None if version is None or known else version
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

    def _take(self, keys: dict[str, str | None], delay: float | None) -> bool:
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
            for key, version in self._pending.items():
                keys[key] = None if key in keys and keys[key] is None else version
            self._pending.clear()
            self._busy = True
            return True

    def _claimed(self, keys: dict[str, str | None]) -> list[str]:
        """The keys to send from here: each explicit one, and each change this replica
        claimed first (all of them when the claims cannot be read)."""
        changes = [(key, version) for key, version in keys.items() if version is not None]
        if not changes or not isinstance(self.purger, Claims):
            return list(keys)
        try:
            won = self.purger.claim(changes)
        except Exception as exc:
            logger.warning(
                "sitemap purge claims unreadable (%s: %s); purging %d keys from here",
                type(exc).__name__,
                str(exc)[:200],
                len(changes),
            )
            return list(keys)
        self.claimed_elsewhere += len(changes) - len(won)
        return [key for key, version in keys.items() if version is None or key in won]

    def _run(self) -> None:
        keys: dict[str, str | None] = {}
        decided: set[str] = set()  # the keys of the batch already claimed (or not)
        failed = 0
        while self._take(keys, None if not failed else self.retry_delays[failed - 1]):
            fresh = {key: version for key, version in keys.items() if key not in decided}
            for key in set(fresh) - set(self._claimed(fresh)):
                del keys[key]
            decided.update(fresh)
            batch = list(keys)
            try:
                if batch:
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
                if batch:
                    self.purged += 1
                    logger.debug("sitemap purged %d keys", len(batch))
            keys.clear()
            decided.clear()
            failed = 0
            with self._condition:
                self._busy = bool(self._pending)
                self._condition.notify_all()
        if keys:
            logger.warning("sitemap purge of %d keys given up: the middleware closed", len(keys))
            self.given_up += len(keys)
