"""Revision counters kept by database triggers: an O(1) version for every page.

Without help, a page's validators come from aggregates over its key range
(count, lowest and highest key, newest lastmod), which the database computes
by scanning the range: for a 50,000-row page that is milliseconds, on every
conditional request. A :class:`ChangeCounter` makes that constant: triggers
on the table bump a revision for the group of keys (``granularity`` keys
wide) that an inserted, updated or deleted row belongs to, and a source given
``version=counter`` reads a page's version as the sum of its groups'
revisions, one index range over a small table. The aggregates are then read
once per page and version.

A page's version changes when a row of its key range is added, edited (any
column) or deleted, or moves in or out of it; pages elsewhere in the table
keep theirs, unless they share a key group with the change (``granularity``
dividing the page size avoids that). Changes to the ``also`` tables (data
the locs are built from) bump every page.

The price is one extra row write per changed row, in the writing transaction
(a statement that changes 10,000 rows does 10,000 small upserts), and writes
to keys of one group update the same counter row, so on PostgreSQL two
transactions writing the same group wait for each other.

Supported dialects: SQLite (3.24 or later) and PostgreSQL. Install once, with
a connection in a transaction (it is idempotent)::

    counter = ChangeCounter(articles)
    with engine.begin() as conn:
        counter.install(conn)
    source = SQLAlchemySource(select(...), engine, ..., version=counter)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    and_,
    bindparam,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.expression import Select

from ...settings import ConfigurationError, ConfigurationTypeError
from ..base import KeyRange

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,23}")
EVERY_PAGE = -1
"""The group bumped by changes that may touch any page (``also`` tables, NULL keys)."""

_metadata = MetaData()
revisions = Table(
    "sitemap_revisions",
    _metadata,
    Column("name", String(40), primary_key=True),
    Column("bucket", BigInteger, primary_key=True, autoincrement=False),
    Column("revision", BigInteger, nullable=False),
)
"""One row per (counter, key group): how often that group changed."""


class ChangeCounter:
    """Per-key-group revisions of one table, bumped by triggers; a source's ``version``.

    ``table`` is the table whose rows the sitemap lists; ``key`` its integer
    key column (default: its one-column primary key), the same key the source
    pages by. ``also`` names other tables whose changes alter every page (an
    author's name in the locs of all their articles). ``name`` tells counters
    apart (default: the table's name).
    """

    def __init__(
        self,
        table: Table,
        *,
        key: str | None = None,
        also: Sequence[Table] = (),
        name: str | None = None,
        granularity: int = 1000,
    ) -> None:
        if not isinstance(table, Table):
            raise ConfigurationTypeError(
                f"table: ChangeCounter needs a sqlalchemy Table, got {type(table).__name__}"
            )
        if key is None:
            primary = list(table.primary_key.columns)
            if len(primary) != 1:
                raise ConfigurationError(
                    f"key: ChangeCounter: table {table.name!r} has no one-column primary key; "
                    "pass key='column' (the integer key the source pages by)"
                )
            key = str(primary[0].name)
        if key not in table.c:
            raise ConfigurationError(
                f"key: ChangeCounter: table {table.name!r} has no column {key!r}; name one of "
                f"{', '.join(table.c.keys())}"
            )
        if not isinstance(table.c[key].type, Integer):
            raise ConfigurationError(
                f"key: ChangeCounter: key column {key!r} must be an integer column (the key "
                "the source pages by)"
            )
        name = table.name.lower() if name is None else name
        if not _IDENTIFIER.fullmatch(name):
            raise ConfigurationError(
                f"name: ChangeCounter: name {name!r} must be 1-24 lowercase letters, digits or "
                "'_', starting with a letter (pass name=...)"
            )
        if isinstance(granularity, bool) or not isinstance(granularity, int) or granularity < 1:
            raise ConfigurationError(
                f"granularity: ChangeCounter: must be a positive integer (a divisor of the page "
                f"width), got {granularity!r}"
            )
        suffixes = [_suffix(t) for t in (table, *also)]
        if len(set(suffixes)) != len(suffixes):
            raise ConfigurationError(
                "also: ChangeCounter: the tables' names must differ in their first 16 "
                "characters; rename a table or leave it out"
            )
        self.table = table
        self.key = key
        self.also = tuple(also)
        self.name = name
        self.granularity = granularity
        self._statements: dict[tuple[bool, bool], Select[tuple[Any]]] = {}

    def __repr__(self) -> str:
        return f"ChangeCounter({self.table.name!r}, key={self.key!r}, name={self.name!r})"

    # --- reading -------------------------------------------------------------------------

    def token(self, total: Any) -> str:
        """The version of a key range, from its revision sum (the grouping is part of it)."""
        return f"{self.name}/{self.granularity}:{total}"

    def statement(self, keys: KeyRange) -> Select[tuple[Any]]:
        """The version of the rows in ``keys``: the sum of their groups' revisions.

        Revisions only grow, so the sum changes whenever one of them does. One
        statement per shape of key range; :meth:`parameters` gives the groups.
        """
        shape = (keys.after is None, keys.until is None)
        stmt = self._statements.get(shape)
        if stmt is None:
            groups: list[Any] = []
            if keys.after is not None:
                groups.append(revisions.c.bucket >= bindparam("sitemap_lowest", type_=BigInteger))
            if keys.until is not None:
                groups.append(revisions.c.bucket <= bindparam("sitemap_highest", type_=BigInteger))
            where = revisions.c.name == self.name
            if groups:
                where = and_(where, or_(and_(*groups), revisions.c.bucket == EVERY_PAGE))
            total = func.coalesce(func.sum(revisions.c.revision), literal(0))
            stmt = self._statements[shape] = select(total).where(where)
        return stmt

    def parameters(self, keys: KeyRange) -> dict[str, int]:
        """The groups of :meth:`statement` for ``keys``: from the lowest key's to the highest's."""
        values = {}
        if keys.after is not None:
            values["sitemap_lowest"] = (int(keys.after[0]) + 1) // self.granularity
        if keys.until is not None:
            values["sitemap_highest"] = int(keys.until[0]) // self.granularity
        return values

    # --- installing ----------------------------------------------------------------------

    def install(self, connection: Connection) -> None:
        """Create the revisions table and the triggers, if missing (idempotent)."""
        dialect = connection.dialect
        revisions.create(connection, checkfirst=True)
        schema = None
        if dialect.name == "postgresql":
            # Writers may have another search_path: the triggers name the table in full.
            schema = connection.exec_driver_sql("SELECT current_schema()").scalar()
        for statement in self._ddl(dialect, schema):
            connection.exec_driver_sql(statement)

    def uninstall(self, connection: Connection) -> None:
        """Drop this counter's triggers and forget its revisions."""
        for statement in self._drop(connection.dialect):
            connection.exec_driver_sql(statement)
        if revisions.name in _table_names(connection):
            connection.execute(revisions.delete().where(revisions.c.name == self.name))

    def _targets(self) -> Iterable[tuple[Table, str | None]]:
        yield self.table, self.key
        for table in self.also:
            yield table, None

    def _ddl(self, dialect: Dialect, schema: str | None = None) -> list[str]:
        preparer = dialect.identifier_preparer
        counts = revisions.name if schema is None else f"{preparer.quote(schema)}.{revisions.name}"
        if dialect.name == "sqlite":
            statements = []
            for table, key in self._targets():
                target = preparer.format_table(table)
                for event, rows in (
                    ("INSERT", ("NEW",)),
                    ("UPDATE", ("NEW", "OLD")),  # OLD only when the row moved to another group
                    ("DELETE", ("OLD",)),
                ):
                    # Dropped and created again: an install always leaves the current definition.
                    bumps = "".join(
                        self._bump_sqlite(preparer, key, row, moved=event == "UPDATE")
                        for row in rows
                    )
                    statements += [
                        f"DROP TRIGGER IF EXISTS {self._trigger(table, event)}",
                        f"CREATE TRIGGER {self._trigger(table, event)} "
                        f"AFTER {event} ON {target} FOR EACH ROW BEGIN {bumps}END",
                    ]
            return statements
        if dialect.name == "postgresql":
            statements = []
            for table, key in self._targets():
                function = self._trigger(table, "bump")
                target = preparer.format_table(table)
                statements += [
                    f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger "
                    f"LANGUAGE plpgsql AS $$ BEGIN "
                    f"IF TG_OP IN ('INSERT', 'UPDATE') THEN "
                    f"{self._bump_pg(preparer, key, 'NEW', counts)} "
                    f"END IF; "
                    f"IF TG_OP = 'DELETE' OR ({self._moved(preparer, key)}) "
                    f"THEN {self._bump_pg(preparer, key, 'OLD', counts)} "
                    f"END IF; RETURN NULL; END $$",
                    f"DROP TRIGGER IF EXISTS {self._trigger(table, 'rows')} ON {target}",
                    f"CREATE TRIGGER {self._trigger(table, 'rows')} "
                    f"AFTER INSERT OR UPDATE OR DELETE ON {target} "
                    f"FOR EACH ROW EXECUTE FUNCTION {function}()",
                    f"CREATE OR REPLACE FUNCTION {self._trigger(table, 'truncate')}() "
                    f"RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    f"{self._bump_pg(preparer, None, 'NEW', counts)} RETURN NULL; END $$",
                    f"DROP TRIGGER IF EXISTS {self._trigger(table, 'emptied')} ON {target}",
                    f"CREATE TRIGGER {self._trigger(table, 'emptied')} AFTER TRUNCATE ON {target} "
                    f"FOR EACH STATEMENT EXECUTE FUNCTION {self._trigger(table, 'truncate')}()",
                ]
            return statements
        raise NotImplementedError(
            f"ChangeCounter supports SQLite and PostgreSQL, not {dialect.name}; "
            "pass a version= select of a revision your application keeps instead"
        )

    def _drop(self, dialect: Dialect) -> list[str]:
        preparer = dialect.identifier_preparer
        statements = []
        for table, _ in self._targets():
            if dialect.name == "sqlite":
                statements += [
                    f"DROP TRIGGER IF EXISTS {self._trigger(table, event)}"
                    for event in ("INSERT", "UPDATE", "DELETE")
                ]
            elif dialect.name == "postgresql":
                target = preparer.format_table(table)
                statements += [
                    f"DROP TRIGGER IF EXISTS {self._trigger(table, 'rows')} ON {target}",
                    f"DROP TRIGGER IF EXISTS {self._trigger(table, 'emptied')} ON {target}",
                    f"DROP FUNCTION IF EXISTS {self._trigger(table, 'bump')}()",
                    f"DROP FUNCTION IF EXISTS {self._trigger(table, 'truncate')}()",
                ]
            else:
                return self._ddl(dialect)  # raises: unsupported
        return statements

    def _trigger(self, table: Table, event: str) -> str:
        """``sitemap_<counter>_<table>_<event>``: names the triggers and functions."""
        return f"sitemap_{self.name}_{_suffix(table)}_{event.lower()}"

    def _group(self, preparer: Any, key: str | None, row: str) -> str:
        if key is None:
            return str(EVERY_PAGE)
        column = f"{row}.{preparer.quote(key)}"
        return f"coalesce({column} / {self.granularity}, {EVERY_PAGE})"

    def _moved(self, preparer: Any, key: str | None) -> str:
        """SQL: an updated row changed its key group (so the old group changed too)."""
        old, new = self._group(preparer, key, "OLD"), self._group(preparer, key, "NEW")
        return f"TG_OP = 'UPDATE' AND {old} IS DISTINCT FROM {new}" if key else "FALSE"

    def _bump_sqlite(self, preparer: Any, key: str | None, row: str, moved: bool) -> str:
        group = f"CAST({self._group(preparer, key, row)} AS INTEGER)"
        if moved and row == "OLD":
            if key is None:
                return ""
            new = f"CAST({self._group(preparer, key, 'NEW')} AS INTEGER)"
            # "WHERE" also tells SQLite's parser that ON CONFLICT belongs to the upsert.
            return (
                f"INSERT INTO {revisions.name} (name, bucket, revision) "
                f"SELECT '{self.name}', {group}, 1 WHERE {group} IS NOT {new} "
                f"ON CONFLICT (name, bucket) DO UPDATE SET revision = revision + 1; "
            )
        return (
            f"INSERT INTO {revisions.name} (name, bucket, revision) "
            f"VALUES ('{self.name}', {group}, 1) "
            f"ON CONFLICT (name, bucket) DO UPDATE SET revision = revision + 1; "
        )

    def _bump_pg(self, preparer: Any, key: str | None, row: str, table: str) -> str:
        return (
            f"INSERT INTO {table} AS counted (name, bucket, revision) "
            f"VALUES ('{self.name}', {self._group(preparer, key, row)}, 1) "
            f"ON CONFLICT (name, bucket) DO UPDATE "
            f"SET revision = counted.revision + 1;"
        )


def _suffix(table: Table) -> str:
    """A table's part of trigger names: at most 16 characters (PostgreSQL allows 63)."""
    return re.sub(r"[^a-z0-9_]", "_", table.name.lower())[:16]


def _table_names(connection: Connection) -> set[str]:
    from sqlalchemy import inspect

    return set(inspect(connection).get_table_names())
