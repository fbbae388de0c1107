"""SQLite's hash of a row's stored values, for the checksum of a summary.

SQLite has no hash function, and its date functions read a lastmod in whole seconds
(milliseconds at best): a loc's text columns and a lastmod's fraction would be
outside the checksum. ``sitemap_row_hash`` is registered on each connection that
reads an aggregate: the CRC-32 of the stored values (each as SQLite's blob of it, so
no text is decoded and no value can fail), one call per row. It depends on the
stored values alone, so every process and replica computes the same checksum.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.ext.asyncio import AsyncConnection

ROW_HASH = "sitemap_row_hash"
"""The SQL name of the function."""

_NULL = b"n"  # a length prefix starts with a digit: NULL differs from every value


def row_hash(*values: bytes | None) -> int:
    """The CRC-32 of ``values`` (blobs or NULL), each prefixed with its length so that
    no two sequences of values give the same bytes: ``('ab', 'c')`` is not ``('a', 'bc')``."""
    crc = 0
    for value in values:
        if value is None:
            crc = zlib.crc32(_NULL, crc)
        else:
            crc = zlib.crc32(value, zlib.crc32(b"%d:" % len(value), crc))
    return crc


def _register(conn: Connection) -> None:
    # Registered once per DB-API connection: redefining a function expires the
    # connection's prepared statements, and fails while one of them is running. The
    # check runs on the DB-API cursor: a connection's setup, not one of the source's reads.
    record = conn.connection
    if record.info.get(ROW_HASH):
        return
    dbapi: Any = record.dbapi_connection
    cursor = dbapi.cursor()
    try:
        cursor.execute("SELECT count(*) FROM pragma_function_list WHERE name = ?", (ROW_HASH,))
        (found,) = cursor.fetchone()
    finally:
        cursor.close()
    if not found:
        dbapi.create_function(ROW_HASH, -1, row_hash, deterministic=True)
    record.info[ROW_HASH] = True


def ensure(conn: Connection) -> None:
    """Make ``sitemap_row_hash`` callable on ``conn`` (a SQLite connection)."""
    _register(conn)


async def ensure_async(conn: AsyncConnection) -> None:
    """:func:`ensure` on an async connection (aiosqlite): checked without a hop to the
    driver's thread once registered."""
    raw = await conn.get_raw_connection()
    if not raw.info.get(ROW_HASH):
        await conn.run_sync(_register)
