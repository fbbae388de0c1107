"""Records kept on disk rather than in memory: a temporary file of JSON lines.

What the indexability audit learns of every URL (the URLs themselves with ``all``, the
answer of each page, every finding) is written here as it goes and read back in runs
(from an offset, so many records) for the JSON report, so that memory holds a record
only while it is written or read.
"""

from __future__ import annotations

import json
import tempfile
import weakref
from collections.abc import Iterator
from typing import IO, Any


class Spill:
    """The file is made by the first record, and closed (so removed) by :meth:`close` or
    when the spill is no longer referenced."""

    def __init__(self) -> None:
        self._opened: IO[bytes] | None = None
        self._end = 0
        self._at_end = True

    @property
    def _file(self) -> IO[bytes]:
        if self._opened is None:
            self._opened = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the spill
            self._close = weakref.finalize(self, self._opened.close)
        return self._opened

    @property
    def end(self) -> int:
        """The offset the next record is written at."""
        return self._end

    def append(self, record: Any) -> None:
        if not self._at_end:
            self._file.seek(self._end)
            self._at_end = True
        line = json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n"
        self._file.write(line)
        self._end += len(line)

    def read(self, start: int, count: int) -> Iterator[Any]:
        """``count`` records from offset ``start``; other reads and writes may come between."""
        position = start
        for _ in range(count if self._opened is not None else 0):
            self._file.seek(position)
            self._at_end = False
            line = self._file.readline()
            position += len(line)
            yield json.loads(line)

    def close(self) -> None:
        if self._opened is not None:
            self._close()
