"""Purges sent once across replicas: claims in a table of the application's database.

Each replica keeps its own pages current and learns of a change by itself; each queues the
purge of the documents the change moved. The purge a refresh queues carries the token of
the pages after the change, the same on every replica that read the same rows, so the
pair (key, token) names one change of one document everywhere. :class:`ClaimedPurger`
inserts that pair into a table with a unique key before sending: the replica whose insert
lands sends the purge, the others drop it. An explicit ``purge()`` is always sent.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Engine,
    MetaData,
    String,
    Table,
    delete,
    insert,
    inspect,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DatabaseError, IntegrityError

from ...state.purges import Purger

CLAIMS_TABLE = "sitemap_purge_claims"
KEEP = timedelta(days=1)
"""How long a claim is kept: a replica that learns of a change later than that (it was down)
purges it again, which is harmless."""


class ClaimedPurger:
    """``purger``, sending each change once across the replicas that share ``engine``'s
    database (the table ``table``, created on first use)."""

    def __init__(self, purger: Purger, engine: Engine, table: str = CLAIMS_TABLE) -> None:
        if not isinstance(purger, Purger):
            raise TypeError(f"ClaimedPurger: purger must have a purge(keys) method, got {purger!r}")
        self.purger = purger
        self.engine = engine
        self.table = Table(
            table,
            MetaData(),
            Column("claim", String(64), primary_key=True),
            Column("claimed_at", DateTime(timezone=True), nullable=False),
        )
        self._created = False
        self._lock = threading.Lock()
        self._swept_at = 0.0

    def purge(self, keys: Sequence[str]) -> None:
        self.purger.purge(keys)

    def claim(self, changes: Sequence[tuple[str, str]]) -> set[str]:
        """The keys of ``changes`` whose (key, version) no replica claimed before."""
        self._create()
        now = datetime.now(UTC)
        won: set[str] = set()
        with self.engine.connect() as connection:
            dialect = connection.dialect.name
            if dialect in ("postgresql", "sqlite"):
                # ON CONFLICT DO NOTHING: a claim another replica holds inserts no row, with
                # no error in the server's log; one transaction for them all.
                upsert = postgresql.insert if dialect == "postgresql" else sqlite.insert
                with connection.begin():
                    for key, version in changes:
                        values = {"claim": _digest(key, version), "claimed_at": now}
                        stmt = upsert(self.table).values(values).on_conflict_do_nothing()
                        inserted = stmt.returning(self.table.c.claim)
                        if connection.execute(inserted).first() is not None:  # the row is ours
                            won.add(key)
            else:
                for key, version in changes:
                    try:
                        with connection.begin():
                            connection.execute(
                                insert(self.table).values(
                                    claim=_digest(key, version), claimed_at=now
                                )
                            )
                    except IntegrityError:  # another replica's: it sends this purge
                        continue
                    won.add(key)
            self._sweep(connection, now)
        return won

    def _create(self) -> None:
        with self._lock:
            if self._created:
                return
            try:
                self.table.create(self.engine, checkfirst=True)
            except DatabaseError:  # another replica created it meanwhile
                if not inspect(self.engine).has_table(self.table.name):
                    raise
            self._created = True

    def _sweep(self, connection: Connection, now: datetime) -> None:
        """Drop the claims older than :data:`KEEP`, once an hour per process."""
        if time.monotonic() - self._swept_at < 3600:
            return
        self._swept_at = time.monotonic()
        with connection.begin():
            connection.execute(delete(self.table).where(self.table.c.claimed_at < now - KEEP))


def _digest(key: str, version: str) -> str:
    return hashlib.sha256(f"{key}\x1f{version}".encode()).hexdigest()
