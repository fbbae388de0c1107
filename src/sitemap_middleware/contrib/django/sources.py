"""``DjangoSource``: a Django ``QuerySet`` as a sitemap source.

The same options and rules as :class:`~sitemap_middleware.SQLAlchemySource`: a loc template
over the model's fields (``"/articles/{slug}"``) or a callable taking the row, a lastmod
field, changefreq/priority fields or constants, languages, alternates, images, videos and
news. Pages are keyset ranges of the primary key (integer ranges, or cuts for other keys),
never ``OFFSET``; a summary is one aggregate query that reads no rows.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from datetime import datetime
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

from django.conf import settings as django_settings
from django.db.models.query import QuerySet

from ...errors import MissingExtra

try:  # the SQL sources' statements (keyset pages, aggregate summaries) run on the QuerySet
    import sqlalchemy  # noqa: F401
except ModuleNotFoundError as exc:
    raise MissingExtra.of(exc, "DjangoSource", "django,sqlalchemy") from exc

from ...core.dates import AsOf
from ...core.validators import Summary
from ...output.entry import Batch
from ...sources.base import (
    ALL,
    REQUIRED,
    AsyncSource,
    Changes,
    KeyRange,
    Mark,
    Page,
    check_given,
)
from ...sources.extras import ExtensionOptions
from ...sources.sqlalchemy.options import LocSpec
from ...sources.sqlalchemy.source import SQLAlchemySource
from .statements import check_queryset, engine, statement
from .threads import InDjango, in_django

if TYPE_CHECKING:
    from ...sources.sqlalchemy.options import VersionSpec

T = TypeVar("T")

# Rows read per hop to Django's thread, served as batches of the requested size.
ROWS_PER_TRIP = 2_000


class DjangoSource(InDjango, SQLAlchemySource):
    """The rows of a ``QuerySet`` (its filters kept), read from its database (``using``).

    ``loc``, ``lastmod``, ``changefreq_column``, ``priority_column`` and ``images`` name
    fields by their ``attname`` (``author_id`` for a foreign key); a loc callable gets
    the row, with every concrete field as an attribute (``row.slug``), never a model
    instance. ``key`` defaults to the primary key; ``name`` to the model's name. With
    ``languages``, ``x_default=True`` writes x-default as Django's i18n sitemaps do
    (``LANGUAGE_CODE``'s URL without its ``/{lang}/`` prefix); ``x_default="en"`` points it
    at that language's URL. Each read runs on Django's own connection of the thread it runs
    in, inside whatever transaction that connection is in. Under an async server it reads in
    Django's thread for sync work, as :class:`AsyncDjangoSource` does, rendering there too.
    """

    def __init__(
        self,
        queryset: QuerySet[Any],
        *,
        loc: LocSpec = REQUIRED,
        name: str | None = None,
        lastmod: str | None = None,
        changefreq: str | None = None,
        changefreq_column: str | None = None,
        priority: float | None = None,
        priority_column: str | None = None,
        key: str | Sequence[str] | None = None,
        version: VersionSpec = None,
        query_id: str | None = None,
        **extensions: Unpack[ExtensionOptions],
    ) -> None:
        check_given("DjangoSource", loc=loc)
        queryset = check_queryset(queryset)
        stmt, primary_key = statement(queryset)
        self.queryset = queryset
        super().__init__(
            stmt,
            engine(queryset.db),
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

    def _default_language(self) -> str | None:
        return str(django_settings.LANGUAGE_CODE)


# What a source declares about itself, the same for both kinds.
_TRAITS = (
    "name",
    "shape",
    "pageable",
    "fixed_ranges",
    "versioned",
    "live",
    "tracks_changes",
    "pushable",
)


class AsyncDjangoSource(AsyncSource):
    """:class:`DjangoSource` (same arguments) for ASGI: its reads run the way Django's
    async ORM runs queries (``aiterator()``, ``aaggregate()``): in Django's thread for
    sync work (``sync_to_async(thread_sensitive=True)``), on that thread's connection,
    so under Django's ASGI handler a request's reads use the request's connection.

    Rows cross to the event loop a trip at a time (``ROWS_PER_TRIP`` rows, in batches
    of the asked-for size). ``source.sync`` is the :class:`DjangoSource` it reads with.
    """

    def __init__(self, queryset: QuerySet[Any], **options: Any) -> None:
        self.sync = DjangoSource(queryset, **options)
        self.queryset = self.sync.queryset
        for trait in _TRAITS:
            setattr(self, trait, getattr(self.sync, trait))

    def fingerprint(self) -> str:
        return self.sync.fingerprint()

    async def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        return await _in_django(self.sync.summarize, keys, as_of)

    async def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        return await _in_django(self.sync.pages, page_size, as_of)

    async def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        return await _in_django(self.sync.changed, since, as_of, limit)

    async def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        return await _in_django(self.sync.changes, after, as_of, limit)

    async def push_start(self, as_of: AsOf) -> Mark:
        return await _in_django(self.sync.push_start, as_of)

    async def batches(self, keys: KeyRange = ALL, size: int = 500) -> AsyncGenerator[Batch, None]:
        rows = cast(Generator[Batch, None, None], self.sync.batches(keys, size))
        per_trip = max(1, ROWS_PER_TRIP // size)
        try:
            while trip := await _in_django(_trip, rows, per_trip):
                for batch in trip:
                    yield batch
        finally:
            await _in_django(rows.close)


async def _in_django(function: Callable[..., T], *args: Any) -> T:
    return await in_django(partial(function, *args))


def _trip(rows: Generator[Batch, None, None], count: int) -> list[Batch]:
    """The next ``count`` batches (fewer at the end)."""
    return list(islice(rows, count))
