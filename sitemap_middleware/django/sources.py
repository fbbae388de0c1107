"""``DjangoSource``: a Django ``QuerySet`` as a sitemap source.

The same options and rules as :class:`~sitemap_middleware.SQLAlchemySource`: a loc template
over the model's fields (``"/articles/{slug}"``) or a callable taking the row, a lastmod
field, changefreq/priority fields or constants, languages, alternates, images, videos and
news. Pages are keyset ranges of the primary key (integer ranges, or cuts for other keys),
never ``OFFSET``; a summary is one aggregate query that reads no rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db.models.query import QuerySet

from ..sources.sql_options import LocSpec
from ..sources.sqlalchemy import SQLAlchemySource
from ..sources.sqlalchemy_async import AsyncSQLAlchemySource
from .statements import async_engine, check_queryset, engine, statement

if TYPE_CHECKING:
    from ..sources.sql_options import VersionSpec


class _FromQuerySet:
    """What the sync and async sources share: the QuerySet made a select, its options."""

    queryset: QuerySet[Any]

    def _engine_for(self, alias: str) -> Any:
        raise NotImplementedError

    def __init__(
        self,
        queryset: QuerySet[Any],
        *,
        loc: LocSpec,
        name: str | None = None,
        lastmod: str | None = None,
        changefreq: str | None = None,
        changefreq_column: str | None = None,
        priority: float | None = None,
        priority_column: str | None = None,
        key: str | Sequence[str] | None = None,
        version: VersionSpec = None,
        query_id: str | None = None,
        **extensions: Any,
    ) -> None:
        queryset = check_queryset(queryset)
        stmt, primary_key = statement(queryset)
        self.queryset = queryset
        super().__init__(  # type: ignore[call-arg]
            stmt,
            self._engine_for(queryset.db),
            name=name if name is not None else queryset.model._meta.model_name or "",
            loc=loc,
            lastmod=lastmod,
            changefreq=changefreq,
            changefreq_column=changefreq_column,
            priority=priority,
            priority_column=priority_column,
            key=key if key is not None else primary_key,
            version=version,
            query_id=query_id,
            **extensions,
        )


class DjangoSource(_FromQuerySet, SQLAlchemySource):
    """The rows of a ``QuerySet`` (its filters kept), read from its database (``using``).

    ``loc``, ``lastmod``, ``changefreq_column``, ``priority_column`` and ``images`` name
    fields by their ``attname`` (``author_id`` for a foreign key); a loc callable gets
    the row, with every concrete field as an attribute (``row.slug``), never a model
    instance. ``key`` defaults to the primary key; ``name`` to the model's name. Reads
    run on pooled connections of the QuerySet's ``DATABASES`` entry (one engine per
    alias and process).
    """

    def _engine_for(self, alias: str) -> Any:
        return engine(alias)


class AsyncDjangoSource(_FromQuerySet, AsyncSQLAlchemySource):
    """:class:`DjangoSource` read with async drivers (aiosqlite, psycopg's async
    connections) on an engine of its own, ``source.engine``: for ASGI servers that should
    not hold a worker thread per read. Its pooled connections belong to the event loop
    that opened them (``await source.engine.dispose()`` on that loop)."""

    def _engine_for(self, alias: str) -> Any:
        return async_engine(alias)
