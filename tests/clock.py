"""A controlled monotonic clock for the pages kept current: a test advances it by an hour of
silence without waiting for it."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class Clock:
    """Seconds on a monotonic clock that moves only when told to."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def drive(app: T, clock: Clock) -> T:
    """Count the intervals of every live source of ``app`` (any adapter, or a ``Sitemap``) on
    ``clock``; ``app`` itself."""
    sitemap = getattr(app, "sitemap", app)
    for live in sitemap.current_pages.values():
        live.clock = clock
    return app


async def settled(app: object, seconds: float = 10.0) -> None:
    """Until no job runs in the background for ``app``'s live sources (one a request
    started): what a test that counts statements waits for before it counts."""
    import anyio.to_thread

    sitemap = getattr(app, "sitemap", app)
    for live in sitemap.current_pages.values():
        # The job may run on this event loop: wait elsewhere.
        assert await anyio.to_thread.run_sync(live.idle.wait, seconds), "a job never ended"
