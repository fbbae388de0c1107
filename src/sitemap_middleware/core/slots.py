"""How many documents this process generates at once (``max_generations``)."""

from __future__ import annotations

import threading


class Slot:
    """One document being made; :meth:`release` gives its place back (once)."""

    def __init__(self, slots: Slots) -> None:
        self._slots: Slots | None = slots

    def release(self) -> None:
        if self._slots is not None:
            self._slots.release()
            self._slots = None


class Slots:
    """How many documents this process is generating; at most ``limit`` at once.

    Generating reads rows and holds a database connection for the whole
    transfer, so a burst of crawlers could otherwise take every connection of
    the pool from the application. 304s and HEADs read aggregates only and are
    not counted. Shared by threads (WSGI) and tasks (ASGI), hence the lock.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.running = 0
        self._lock = threading.Lock()

    def acquire(self) -> Slot | None:
        with self._lock:
            if self.limit is not None and self.running >= self.limit:
                return None
            self.running += 1
        return Slot(self)

    def release(self) -> None:
        with self._lock:
            self.running -= 1
