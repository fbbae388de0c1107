"""A Django ``QuerySet`` as the ``select()`` the SQL sources read, and its database's engine.

Django compiles the QuerySet (its filters, joins and database routing stay Django's); the
SQL is the ``FROM`` of a select whose columns are the model's concrete fields, typed from
the fields. Every rule of the SQL sources (keyset pages, aggregate summaries, bad rows,
stored dates) then applies to it unchanged. The statements run on Django's own
connection of the thread that reads, lent for the read (:class:`_Lent`); on SQLite the
select list hides the columns' declared types, so that no converter Django registers
can fail on a stored value.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import connections, models
from django.db.models import F
from django.db.models.query import QuerySet
from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    Integer,
    Numeric,
    String,
    Uuid,
    bindparam,
    column,
    create_engine,
    event,
    select,
    text,
)
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.dialects.postgresql.psycopg2 import PGDialect_psycopg2
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool
from sqlalchemy.types import NullType, TypeEngine

from ...settings import ConfigurationError, ConfigurationTypeError
from .threads import begin_read, end_read

if TYPE_CHECKING:
    from ...sources.sqlalchemy.options import AnySelect

# A bind-looking ":name" in Django's SQL is text, not a parameter of ours.
_COLON = re.compile(r"(?<![:\w\\]):(?=\w)")
_PLACEHOLDER = re.compile(r"%[%s]")
_INTEGERS: dict[str, type[TypeEngine[Any]]] = {
    "AutoField": Integer,
    "SmallAutoField": Integer,
    "BigAutoField": BigInteger,
    "IntegerField": Integer,
    "SmallIntegerField": Integer,
    "PositiveIntegerField": Integer,
    "PositiveSmallIntegerField": Integer,
    "BigIntegerField": BigInteger,
    "PositiveBigIntegerField": BigInteger,
}
_OTHERS: dict[str, Callable[[str], TypeEngine[Any]]] = {
    "DateTimeField": lambda vendor: DateTime(timezone=vendor == "postgresql"),
    "DateField": lambda vendor: Date(),
    "DecimalField": lambda vendor: Numeric(),
    "FloatField": lambda vendor: Float(),
    "BooleanField": lambda vendor: Boolean(),
    "UUIDField": lambda vendor: Uuid() if vendor == "postgresql" else String(),
}
_TEXTS = {
    "CharField",
    "TextField",
    "SlugField",
    "URLField",
    "EmailField",
    "FilePathField",
    "FileField",
    "ImageField",
    "GenericIPAddressField",
}


def check_queryset(queryset: object, setting: str = "queryset") -> QuerySet[Any]:
    if not isinstance(queryset, QuerySet):
        raise ConfigurationTypeError(
            f"{setting}: needs a Django QuerySet (Model.objects.filter(...)), "
            f"got {type(queryset).__name__}"
        )
    return queryset


def field_type(field: models.Field[Any, Any], vendor: str) -> TypeEngine[Any]:
    """The SQL type the SQL sources read a field's column as (its stored form)."""
    kind = field.get_internal_type()
    if kind in _INTEGERS:
        return _INTEGERS[kind]()
    if kind in _OTHERS:
        return _OTHERS[kind](vendor)
    if kind in _TEXTS:
        return String()
    if isinstance(field, models.ForeignKey):
        return field_type(field.target_field, vendor)
    return NullType()


def statement(queryset: QuerySet[Any]) -> tuple[AnySelect, str]:
    """The select over the QuerySet's rows (columns named by the fields' ``attname``), and
    the primary key's name."""
    model = queryset.model
    meta = model._meta
    fields = [f for f in meta.concrete_fields if f.column]
    vendor = connections[queryset.db].vendor
    names = [f.attname for f in fields]
    # Aliased by position: the subquery's columns do not depend on how Django names them.
    values = queryset.order_by().values(**{f"col{i}": F(name) for i, name in enumerate(names)})
    sql, params = values.query.get_compiler(using=queryset.db).as_sql()
    counter = iter(range(len(params)))
    sql = _COLON.sub(r"\\:", sql)
    sql = _PLACEHOLDER.sub(lambda m: "%" if m[0] == "%%" else f":django_{next(counter)}", sql)
    binds: list[Any] = [bindparam(f"django_{i}", value) for i, value in enumerate(params)]
    columns = [column(f"col{i}", field_type(f, vendor)) for i, f in enumerate(fields)]
    rows = text(sql).bindparams(*binds).columns(*columns).subquery("django_rows")
    labelled = [rows.c[f"col{i}"].label(name) for i, name in enumerate(names)]
    return select(*labelled), meta.pk.attname


_engines: dict[str, Engine] = {}
_lock = threading.Lock()
# Django's connection objects lent to reads, by alias: what dispose() closes.
_lent: dict[str, weakref.WeakSet[Any]] = {}


def engine(alias: str) -> Engine:
    """The engine of a ``DATABASES`` entry, one per alias and process: each read borrows
    Django's own connection of the thread it runs in (:class:`_Lent`)."""
    with _lock:
        found = _engines.get(alias)
        if found is None:
            found = _engines[alias] = _create(alias)
        return found


def dispose(alias: str) -> None:
    """Close the Django connections of an alias that reads borrowed, in every thread (the
    next read opens a new one from the alias's settings as they are then)."""
    with _lock:
        lent = list(_lent.pop(alias, ()))
    for wrapper in lent:
        wrapper.inc_thread_sharing()
        try:
            wrapper.close()
        finally:
            wrapper.dec_thread_sharing()


class _Lent:
    """Django's DB-API connection, lent to SQLAlchemy for one read.

    The connection and its transaction stay Django's: the read runs in the caller's
    transaction (it sees rows written there and not yet committed), and neither
    commits nor rolls back. A server-side cursor outside a transaction is declared
    ``WITH HOLD``, as Django declares its own. A connection the reads of a thread had to
    open is closed after the last of them when ``CONN_MAX_AGE`` is 0, as Django closes a
    request's: reads also run in threads whose connections no request ends
    (:func:`~.threads.begin_read`, :func:`~.threads.end_read`).
    """

    __slots__ = ("_ended", "_raw", "_wrapper")

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper
        self._ended = False
        begin_read()  # a connection on which a read failed is checked first
        try:
            wrapper.ensure_connection()  # opened by Django: its settings, its session setup
        except BaseException:
            self.close()
            raise
        self._raw = wrapper.connection

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        if args or "name" in kwargs:  # psycopg's named (server-side) cursor
            kwargs.setdefault("withhold", bool(self._raw.autocommit))
        return self._raw.cursor(*args, **kwargs)

    def commit(self) -> None:
        """Reads only: nothing to commit, and the transaction is the caller's."""

    def rollback(self) -> None:
        """Django ends its transactions."""

    def close(self) -> None:
        if not self._ended:
            self._ended = True
            end_read()


def _lend(alias: str) -> _Lent:
    wrapper = connections[alias]
    lent = _Lent(wrapper)
    with _lock:
        _lent.setdefault(alias, weakref.WeakSet()).add(wrapper)
    return lent


def _create(alias: str) -> Engine:
    url, options = "sqlite+sitemap_django_sqlite://", {}
    if _vendor(alias) == "postgresql":
        url = f"postgresql+sitemap_django_{_postgres_driver()}://"
        options["use_native_hstore"] = False  # no adapters registered on Django's connection
    made = create_engine(
        url,
        creator=lambda: _lend(alias),
        poolclass=NullPool,
        pool_reset_on_return=None,
        **options,
    )

    @event.listens_for(made, "handle_error")
    def errored(context: Any) -> None:
        # As Django's own cursors do: the connection is checked before it is reused.
        connections[alias].errors_occurred = True

    return made


def _lent_dialect(base: type[Any]) -> type[Any]:
    """A dialect that leaves the lent connection as Django set it up: no hooks of its own
    run on connect (a notice handler, SQL functions), which would pile up at every read."""
    members: dict[str, Any] = {"on_connect": lambda self: None, "supports_statement_cache": True}
    if base is SQLiteDialect_pysqlite:
        # Django's SQLite connections convert values by their columns' declared types
        # (``detect_types``), and its converters raise on text that is no date.
        members["converts_declared_types"] = True
    return type(f"Lent{base.__name__}", (base,), members)


LentSQLite = _lent_dialect(SQLiteDialect_pysqlite)
LentPsycopg = _lent_dialect(PGDialect_psycopg)
LentPsycopg2 = _lent_dialect(PGDialect_psycopg2)
registry.register("sqlite.sitemap_django_sqlite", __name__, "LentSQLite")
registry.register("postgresql.sitemap_django_psycopg", __name__, "LentPsycopg")
registry.register("postgresql.sitemap_django_psycopg2", __name__, "LentPsycopg2")


def _vendor(alias: str) -> str:
    vendor: str = connections[alias].vendor
    if vendor not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"queryset: database {alias!r} is {vendor}; DjangoSource reads SQLite and PostgreSQL"
        )
    return vendor


def _postgres_driver() -> str:
    """The driver Django's PostgreSQL backend uses (psycopg 3 if installed, else psycopg2),
    as Django itself decides."""
    from django.db.backends.postgresql.psycopg_any import is_psycopg3

    return "psycopg" if is_psycopg3 else "psycopg2"
