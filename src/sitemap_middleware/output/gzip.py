"""Deterministic gzip for streamed documents.

zlib's gzip wrapper (``wbits=31``) writes a header with no file name and a
zero timestamp, so the same chunks give the same bytes on every replica. Each
chunk is sync-flushed: a client can inflate what it has received so far, and
an aborted transfer is a truncated gzip stream (no trailer), never a valid
file.
"""

from __future__ import annotations

import zlib

GZIP_WBITS = 31


class GzipStream:
    def __init__(self, level: int = 6) -> None:
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, GZIP_WBITS, 9)

    def chunk(self, data: bytes) -> bytes:
        return self._compressor.compress(data) + self._compressor.flush(zlib.Z_SYNC_FLUSH)

    def finish(self, data: bytes = b"") -> bytes:
        return self._compressor.compress(data) + self._compressor.flush(zlib.Z_FINISH)


def gzip_whole(data: bytes, level: int = 6) -> bytes:
    stream = GzipStream(level)
    return stream.finish(data)
