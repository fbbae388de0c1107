"""A one-line progress indicator on stderr, shown only when stderr is a terminal.

``render`` counts documents and bytes (:meth:`Progress.update`); ``check
--audit-indexable`` shows a bar of URLs done, their rate and what it found so far
(:meth:`Progress.count`). The line is redrawn in place, at most every ``interval``
seconds (the last one always), and ended by :meth:`Progress.close`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

BAR = 20
"""The bar's width in characters."""


class Progress:
    def __init__(
        self,
        stream: TextIO | None,
        enabled: bool = True,
        label: str = "render",
        interval: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.enabled = enabled and stream is not None and stream.isatty()
        self.label = label
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.last: float | None = None
        self.shown = False

    def due(self, final: bool = False) -> bool:
        """Whether a line shown now would be drawn: enabled, and the last one, or the first,
        or ``interval`` seconds after the one before."""
        if not self.enabled:
            return False
        return final or self.last is None or self.clock() - self.last >= self.interval

    def show(self, text: str, final: bool = False) -> None:
        """Redraw the line as ``label: text`` (when :meth:`due`)."""
        if self.stream is None or not self.due(final):
            return
        self.last = self.clock()
        self.stream.write(f"\r{self.label}: {text}\x1b[K")
        self.stream.flush()
        self.shown = True

    def update(self, done: int, total: int, size: int) -> None:
        self.show(f"{done}/{total} documents, {size / 1e6:.1f} MB", done >= total)

    def count(self, done: int, total: int, noun: str, extra: str = "") -> None:
        """A bar of ``done`` of ``total`` (a total that grows is fine), the rate per second
        since the start, and ``extra``."""
        if not self.due(done >= total):
            return
        filled = BAR * done // total if total > 0 else BAR
        elapsed = self.clock() - self.started
        rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 else "-/s"
        text = f"[{'#' * filled}{'.' * (BAR - filled)}] {done:,}/{total:,} {noun}, {rate}"
        self.show(text + (f", {extra}" if extra else ""), done >= total)

    def close(self) -> None:
        if self.shown and self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
