"""Where IndexNow pushing has got to, in the application's own database.

Two small tables, created once by :func:`install` (idempotent), in the database of each
source's engine:

* ``sitemap_indexnow``: one row per feed (a source of a site: ``"<base URL> <source>"``)
  holding the mark of the last row accepted by the endpoint;
* ``sitemap_indexnow_queue``: URLs the application asks to push (rows that are gone have
  no lastmod to be found by), written in the application's own transaction with
  :func:`queue_urls` and removed once the endpoint accepted them.

Once across replicas: a push holds its feed's row locked from reading the mark until the
endpoint answered and the new mark is committed: ``SELECT ... FOR UPDATE`` on
PostgreSQL (a second pusher waits, then goes on from the new mark), SQLite's write
lock (``BEGIN IMMEDIATE``; a second pusher finding it taken skips the round). A
crash between an accepted post and the commit leaves the old mark: that one batch is
pushed again (at-least-once).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql import Executable

from ...sources.base import Mark

metadata = MetaData()
WATERMARKS = Table(
    "sitemap_indexnow",
    metadata,
    Column("feed", String(600), primary_key=True),
    Column("lastmod", String(64), nullable=False),
    Column("row_key", String(600), nullable=True),
)
QUEUE = Table(
    "sitemap_indexnow_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("url", Text, nullable=False),
)
QUEUE_FEED = "~queue"
"""The row whose lock guards the queue."""


def install(connection: Connection | Engine) -> None:
    """Create the tables if they do not exist (a connection in a transaction, or an
    engine). For an ``AsyncEngine``: ``async with engine.begin() as conn:
    await conn.run_sync(install)``."""
    if isinstance(connection, Engine):
        with connection.begin() as conn:
            install(conn)
        return
    metadata.create_all(connection)
    dialect = connection.dialect.name
    connection.execute(start_statement(dialect, QUEUE_FEED, Mark("", None)))


def queue_urls(connection: Connection, urls: Iterable[str]) -> None:
    """Ask the pusher to push ``urls`` (a deleted row's, say), in the caller's transaction:
    they go out with the next push once it commits. An ``AsyncConnection``:
    ``await conn.run_sync(queue_urls, urls)``."""
    rows = [{"url": url} for url in urls]
    if rows:
        connection.execute(insert(QUEUE), rows)


def lock_statement(dialect: str, feed: str) -> Executable:
    """The statement that reads a feed's mark and holds its row until the commit."""
    stmt = select(WATERMARKS.c.lastmod, WATERMARKS.c.row_key).where(WATERMARKS.c.feed == feed)
    return stmt.with_for_update() if dialect == "postgresql" else stmt


BEGIN = {"sqlite": "BEGIN IMMEDIATE"}
"""How a dialect takes its write lock before reading (PostgreSQL locks the row itself)."""


def mark_of(row: Any) -> Mark | None:
    return None if row is None else Mark(row[0], row[1])


def start_statement(dialect: str, feed: str, mark: Mark) -> Executable:
    """The first mark of a feed, unless another pusher wrote one meanwhile."""
    values = {"feed": feed, "lastmod": mark.lastmod, "row_key": mark.key}
    if dialect == "postgresql":
        return postgresql.insert(WATERMARKS).values(values).on_conflict_do_nothing()
    return sqlite.insert(WATERMARKS).values(values).on_conflict_do_nothing()


def advance_statement(feed: str, mark: Mark) -> Executable:
    return (
        update(WATERMARKS)
        .where(WATERMARKS.c.feed == feed)
        .values(lastmod=mark.lastmod, row_key=mark.key)
    )


def queue_feed(base_url: str) -> str:
    """The row whose lock guards one site's part of the queue (sites sharing a database)."""
    return f"{QUEUE_FEED} {base_url}"


def queued_statement(limit: int, prefix: str | None = None) -> Executable:
    stmt = select(QUEUE.c.id, QUEUE.c.url)
    if prefix is not None:
        stmt = stmt.where(QUEUE.c.url.startswith(prefix, autoescape=True))
    return stmt.order_by(QUEUE.c.id).limit(limit)


def dequeue_statement(last: int, prefix: str | None = None) -> Executable:
    stmt = delete(QUEUE).where(QUEUE.c.id <= last)
    if prefix is not None:
        stmt = stmt.where(QUEUE.c.url.startswith(prefix, autoescape=True))
    return stmt


SUPPORTED = ("sqlite", "postgresql")
