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
from collections.abc import Callable

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
            for release in self.releases:
                try:
                    release()
                except Exception:  # the job is done; what is left is the collector's
                    logger.exception("releasing what a read kept for %s failed", self.name)


def release_at_job_end(release: Callable[[], None]) -> bool:
    """Run ``release`` (once, however often registered) when this thread's job ends, if
    this is a :class:`JobThread`; False in any other thread (a server's, asgiref's), which
    outlives the read and may reuse what it keeps."""
    thread = threading.current_thread()
    if not isinstance(thread, JobThread):
        return False
    if release not in thread.releases:
        thread.releases.append(release)
    return True
