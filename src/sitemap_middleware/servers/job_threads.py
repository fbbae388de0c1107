"""Threads the WSGI adapters start for one job each (pages kept current, a robots.txt
read), which end with it.

A source whose reads keep something for their thread's next read (Django's connection,
kept open for ``CONN_MAX_AGE``) registers its release with :func:`release_at_job_end`:
in a thread that ends with its job nothing reuses it, and the garbage collector would
close it unannounced (psycopg warns of a connection deleted while open).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

logger = logging.getLogger("sitemap_middleware")


class JobThread(threading.Thread):
    """A daemon thread that runs ``job``, then what the job's reads registered."""

    def __init__(self, job: Callable[[], object], name: str) -> None:
        super().__init__(target=job, name=name, daemon=True)
        self.releases: list[Callable[[], None]] = []

    def run(self) -> None:
        try:
            super().run()
        finally:
            run_releases(self.releases)


def release_at_job_end(release: Callable[[], None]) -> None:
    """Run ``release`` (once, however often registered) when this thread's job ends, if
    this is a :class:`JobThread`; in any other thread (a server's, asgiref's), which
    outlives the read and may reuse what it keeps, nothing."""
    thread = threading.current_thread()
    if isinstance(thread, JobThread) and release not in thread.releases:
        thread.releases.append(release)


def run_releases(releases: Iterable[Callable[[], None]]) -> None:
    """Each release, at the end of this thread's job; a failure is logged and the others
    still run (the job is done: what is left is the collector's)."""
    for release in releases:
        try:
            release()
        except Exception:
            name = threading.current_thread().name
            logger.exception("releasing what a read kept for %s failed", name)
