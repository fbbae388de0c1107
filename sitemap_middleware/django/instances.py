"""Model instances for an adopted class's ``location()`` and ``lastmod()``, made cheaply.

Django's iterator builds each instance with ``Model.from_db`` and ``Model.__init__``
(argument handling, ``pre_init``/``post_init`` signals): most of a page's time. For a
plain QuerySet of a model that customises neither, an instance made from
``values_list()`` rows (the same converted values) with its concrete fields set directly
is the same instance at a fraction of the cost. Anything else takes Django's way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Model, signals
from django.db.models.base import ModelState
from django.db.models.query import ModelIterable, QuerySet


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
    for values in rows.values_list(*names).iterator(chunk_size=chunk_size):
        item = new(model)
        state = ModelState()
        state.adding, state.db = False, db
        item.__dict__.update(zip(names, values, strict=True), _state=state)
        yield values[at], item
