"""Model instances for an adopted class's ``location()`` and ``lastmod()``, made cheaply.

Django's iterator builds each instance with ``Model.from_db`` and ``Model.__init__``
(argument handling, ``pre_init``/``post_init`` signals): most of a page's time. For a
plain QuerySet of a model that customises neither, an instance made from
``values_list()`` rows (the same converted values) with its concrete fields set directly
is the same instance at a fraction of the cost. Anything else takes Django's way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from operator import attrgetter, methodcaller
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Model, signals
from django.db.models.base import ModelState
from django.db.models.query import ModelIterable, QuerySet
from django.db.models.sql.constants import MULTI


def plain_instances(rows: QuerySet[Any]) -> bool:
    """Whether ``rows`` yields instances :func:`instances` can make: whole rows of one
    model, with no related rows, annotations, deferred fields or prefetches, of a model
    whose ``__init__``, ``from_db`` and init signals are Django's own (none)."""
    model, query = rows.model, rows.query
    return (
        rows._iterable_class is ModelIterable
        and not query.select_related
        and not query.annotations
        and not query.extra
        and not query.deferred_loading[0]
        and query.deferred_loading[1]
        and not rows._prefetch_related_lookups
        and model.__init__ is Model.__init__
        and model.from_db.__func__ is Model.from_db.__func__
        and not signals.pre_init.has_listeners(model)
        and not signals.post_init.has_listeners(model)
    )


def instances(rows: QuerySet[Any], chunk_size: int) -> Iterator[tuple[Any, Any]]:
    """``(primary key, instance)`` of each row, as ``rows.iterator()`` would give them."""
    model = rows.model
    names = [field.attname for field in model._meta.concrete_fields]
    at = names.index(model._meta.pk.attname)
    db, new = rows.db, model.__new__

    def made(chunk: Iterable[tuple[Any, ...]]) -> list[tuple[Any, Any]]:
        # A chunk at a time, in one loop of plain statements: most of a page's time. Fields
        # are set one by one, as Model.__init__ sets them: an instance's ``__dict__`` is
        # then never made, one object fewer per item for the garbage collector to visit.
        pairs: list[tuple[Any, Any]] = []
        append = pairs.append
        for values in chunk:
            state = ModelState()
            state.adding = False
            state.db = db
            item = new(model)
            item._state = state  # first, as Model.__init__ sets it
            for name, value in zip(names, values, strict=True):
                setattr(item, name, value)
            append((values[at], item))
        return pairs

    for chunk in _value_chunks(rows.values_list(*names), chunk_size):
        yield from made(chunk)


def _value_chunks(rows: QuerySet[Any], chunk_size: int) -> Iterator[Iterable[tuple[Any, ...]]]:
    """``rows.iterator(chunk_size)`` of a ``values_list()`` in chunks, their columns
    converted a chunk at a time: Django's converters per value, except SQLite's datetime
    one, whose work (making naive values aware in the connection's zone) is done for the
    whole column."""
    compiler = rows.query.get_compiler(using=rows.db)
    chunks = compiler.execute_sql(MULTI, chunked_fetch=True, chunk_size=chunk_size)
    # (The select list is known once the statement is compiled, as results_iter() reads it.)
    fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
    converters = compiler.get_converters(fields)
    if not converters:
        yield from chunks
        return
    connection = connections[rows.db]
    for chunk in chunks:
        columns: list[Sequence[Any]] = list(zip(*chunk, strict=True))
        for position, (functions, expression) in converters.items():
            column = columns[position]
            for function in functions:
                column = _converted(column, function, expression, connection)
            columns[position] = column
        yield zip(*columns, strict=True)


def _converted(
    column: Sequence[Any], function: Callable[..., Any], expression: Any, connection: Any
) -> Sequence[Any]:
    if (
        connection.vendor == "sqlite"
        and getattr(function, "__func__", None) is _sqlite_datetime_converter()
        and set(map(type, column)) <= _NAIVE_OR_NONE
        and _all_naive(column)
    ):
        # What the converter does to each naive value: make_aware(value, zone) with
        # USE_TZ, where a zone that is not pytz's is set with replace(); else nothing.
        zone = connection.timezone if settings.USE_TZ else None
        if zone is None:
            return column
        if not hasattr(zone, "localize"):
            if None in column:
                return [None if value is None else value.replace(tzinfo=zone) for value in column]
            if zone is UTC and column:
                # The same values (and tzinfo object) from their texts with an offset, in a
                # few C passes: replace() parses its keyword for every value.
                texts = "+00:00\n".join(map(datetime.isoformat, column)) + "+00:00"
                return list(map(datetime.fromisoformat, texts.split("\n")))
            return list(map(methodcaller("replace", tzinfo=zone), column))
    return [function(value, expression, connection) for value in column]


def _sqlite_datetime_converter() -> Any:
    # Imported when first needed: the backend's module imports the app registry.
    from django.db.backends.sqlite3.operations import DatabaseOperations

    return DatabaseOperations.convert_datetimefield_value


_NAIVE_OR_NONE = {datetime, type(None)}
_TZINFO = attrgetter("tzinfo")


def _all_naive(column: Sequence[Any]) -> bool:
    if None in column:
        return all(value is None or value.tzinfo is None for value in column)
    return set(map(_TZINFO, column)) == {None}
