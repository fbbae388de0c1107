"""A Django ``QuerySet`` as the ``select()`` the SQL sources read, and its database's engine.

Django compiles the QuerySet (its filters, joins and database routing stay Django's); the
SQL is the ``FROM`` of a select whose columns are the model's concrete fields, typed from
the fields. Every rule of the SQL sources (keyset pages, aggregate summaries, bad rows,
stored dates) then applies to it unchanged. The rows are read on connections opened from
the QuerySet's ``DATABASES`` entry, outside Django's per-thread connection, so that no
conversion Django registers on its own connections can fail on a stored value.
"""

from __future__ import annotations

import re
import sqlite3
import threading
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
    select,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.types import NullType, TypeEngine

from ..settings import ConfigurationError, ConfigurationTypeError

if TYPE_CHECKING:
    from ..sources.sql_options import AnySelect

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
_UNUSED = {
    "context",
    "cursor_factory",
    "prepare_threshold",
    "pool",
    "server_side_binding",
    "detect_types",  # SQLite: Django's converters stay on Django's connections
    "check_same_thread",
}


def engine(alias: str) -> Engine:
    """The engine of a ``DATABASES`` entry: one per alias and process, pooled."""
    with _lock:
        found = _engines.get(alias)
        if found is None:
            found = _engines[alias] = _create(alias)
        return found


def dispose(alias: str) -> None:
    """Close the pooled connections of an alias's engine (the next read opens new ones)."""
    with _lock:
        found = _engines.pop(alias, None)
    if found is not None:
        found.dispose()


def _create(alias: str) -> Engine:
    # Each new connection reads the alias's parameters then: a test runner's database
    # (created after the sources were built) is the one read.
    if _vendor(alias) == "sqlite":

        def sqlite() -> Any:
            params = _params(alias)
            name, uri = str(params["database"]), bool(params.get("uri"))
            return sqlite3.connect(name, uri=uri, check_same_thread=False)

        return create_engine("sqlite+pysqlite://", creator=sqlite)
    driver, connect = _postgres_driver()
    return create_engine(f"postgresql+{driver}://", creator=lambda: connect(**_params(alias)))


def async_engine(alias: str) -> AsyncEngine:
    """A new async engine of a ``DATABASES`` entry (aiosqlite, or psycopg's async
    connections): pooled, its connections belonging to the event loop that opens them."""
    if _vendor(alias) == "sqlite":
        import aiosqlite

        async def sqlite() -> Any:
            params = _params(alias)
            name, uri = str(params["database"]), bool(params.get("uri"))
            return await aiosqlite.connect(name, uri=uri)

        return create_async_engine("sqlite+aiosqlite://", async_creator=sqlite)
    import psycopg

    async def postgres() -> Any:
        return await psycopg.AsyncConnection.connect(**_params(alias))

    return create_async_engine("postgresql+psycopg://", async_creator=postgres)


def _vendor(alias: str) -> str:
    vendor: str = connections[alias].vendor
    if vendor not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"queryset: database {alias!r} is {vendor}; DjangoSource reads SQLite and PostgreSQL"
        )
    return vendor


def _params(alias: str) -> dict[str, Any]:
    """The driver's connection parameters, as Django gives them now (less what only
    Django's own connections use)."""
    params = dict(connections[alias].get_connection_params())
    for unused in _UNUSED & set(params):
        del params[unused]
    return params


def _postgres_driver() -> tuple[str, Callable[..., Any]]:
    try:
        import psycopg
    except ImportError:
        import psycopg2

        return "psycopg2", psycopg2.connect
    return "psycopg", psycopg.connect
