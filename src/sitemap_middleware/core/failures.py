"""Logging a failing data source without flooding the log.

A database that is down fails every request until it is back. The first
failure is logged with its traceback; the next ones, while the failure lasts
(the same kind of exception), as one line each with a count. Recovery is said once
every source a failed request read has been read again without failing: a request
that read other sources (a list beside the database), or none (a ``304`` from pages
kept in memory), says nothing while the database is still down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from ..state.bad_rows import shorten

logger = logging.getLogger("sitemap_middleware")


class FailureLog:
    """The failure state of one sitemap's sources (shared by threads and tasks)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kind: type[BaseException] | None = None
        self._count = 0
        self._since = 0.0
        self._failing: set[str] = set()
        """The sources read by the failed requests, not read again without failing since."""

    def failed(self, message: str, error: BaseException, sources: Iterable[str] = ()) -> None:
        """Log ``message`` (it names the document) for a failed request that read
        ``sources`` (by name; one of them failed)."""
        with self._lock:
            first = self._kind is not type(error)
            if first:
                self._kind, self._count, self._since = type(error), 0, time.monotonic()
            self._count += 1
            self._failing.update(sources)
            count, seconds = self._count, time.monotonic() - self._since
        if first:
            logger.error(message, exc_info=error)
            return
        logger.error(
            "%s: %s (failing for %.0f s, %d failed requests; traceback logged at the first)",
            message,
            shorten(" ".join(f"{type(error).__name__}: {error}".split())),  # one line
            seconds,
            count,
        )

    def succeeded(self, path: str, sources: Iterable[str]) -> None:
        """A request for ``path`` read ``sources`` (by name) without failing."""
        if self._kind is None:  # the common case: nothing to say, no lock taken
            return
        with self._lock:
            self._failing.difference_update(sources)
            if self._failing:
                return  # a source that failed has not answered since
            kind, count, seconds = self._kind, self._count, time.monotonic() - self._since
            self._kind, self._count = None, 0
        if kind is not None:
            logger.warning(
                "sitemap %s: the sources answer again, after %d failed requests in %.0f s (%s)",
                path,
                count,
                seconds,
                kind.__name__,
            )
