"""A one-line progress indicator on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled and stream.isatty()
        self.shown = False

    def update(self, done: int, total: int, size: int) -> None:
        if not self.enabled:
            return
        self.stream.write(f"\rrender: {done}/{total} documents, {size / 1e6:.1f} MB\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
