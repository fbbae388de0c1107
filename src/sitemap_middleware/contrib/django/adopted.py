"""``DjangoSitemapSource``: an existing ``django.contrib.sitemaps.Sitemap`` class, unchanged.

Each item becomes the URLs Django's ``sitemap`` view lists for it: ``location()`` (once
per language with ``i18n``, under ``translation.override``), ``lastmod``, ``changefreq``
and ``priority`` (attributes or methods), the hreflang ``alternates`` and ``x_default``.
When ``items()`` returns a ``QuerySet``, pages are primary-key ranges read with
``filter(pk__gt=..., pk__lte=...)`` and streamed with ``iterator(chunk_size)``, never
``OFFSET`` (fixed ranges of an integer key, or cuts of any other); any other iterable is
read in order, an item's key being its position.

A summary (the validators of a ``304``) reads the items of its key range, without
rendering them: ``location()`` and ``lastmod()`` are the class's own Python, which no
aggregate can stand for. ``version=`` (a function returning a value that changes with the
data) spares that read.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice
from typing import Any, cast
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.contrib.sitemaps import Sitemap
from django.db.models import Min
from django.db.models.query import QuerySet
from django.utils import translation

from ...core.dates import AsOf
from ...core.validators import Summary
from ...output.entry import Batch, Repeated
from ...output.extensions import Extensions, Shape
from ...settings import ConfigurationError, ConfigurationTypeError
from ...sources.base import (
    ALL,
    REQUIRED,
    CutPages,
    KeyRange,
    Page,
    SyncSource,
    check_given,
    check_name,
)
from ...sources.iterable import Digest, Item, Lastmods, batch_of
from .instances import instances, plain_instances
from .threads import InDjango, read, read_rows


@dataclass(frozen=True, slots=True)
class LimitedShape(Shape):
    """A shape whose pages also hold at most the Sitemap's ``limit`` URLs."""

    limit: int = Sitemap.limit

    def page_size(self, max_urls: int, max_bytes: int, max_loc_length: int) -> int:
        rows = Shape.page_size(self, max_urls, max_bytes, max_loc_length)
        return max(1, min(rows, self.limit // self.urls_per_row))


class DjangoSitemapSource(InDjango, SyncSource):
    """The URLs of a Django ``Sitemap`` class (or instance), as Django's views list them.

    ``base_url``: when given, each URL is built as Django builds it, ``protocol://host``
    followed by ``location()``, the scheme (unless the class sets ``protocol``) and host
    being the base URL's; otherwise ``location()`` is a path relative to the sitemap's
    ``base_url``. ``name``: the source's name (a URL segment), such as the ``sitemaps``
    dict's key.
    """

    def __init__(
        self,
        sitemap: type[Sitemap] | Sitemap,
        *,
        name: str = REQUIRED,
        base_url: str | None = None,
        version: Callable[[], object] | None = None,
        chunk_size: int = 2000,
    ) -> None:
        check_given("DjangoSitemapSource", name=name)
        self.name = check_name(name)
        if isinstance(sitemap, type) and issubclass(sitemap, Sitemap):
            sitemap = sitemap()
        if not isinstance(sitemap, Sitemap):
            raise ConfigurationTypeError(
                f"sitemap: source {name!r}: needs a django.contrib.sitemaps.Sitemap class or "
                f"instance, got {type(sitemap).__name__}"
            )
        if version is not None and not callable(version):
            raise ConfigurationTypeError(
                f"version: source {name!r}: must be a function returning a value that changes "
                f"with the data, got {type(version).__name__}"
            )
        self.sitemap = sitemap
        # Django's index lists an overriding get_latest_lastmod() for every page of the
        # section; the default one (the newest of every item) is each page's own newest here.
        self.latest_overridden = type(sitemap).get_latest_lastmod is not Sitemap.get_latest_lastmod
        self._kind: str | None = None
        self._version = version
        self.versioned = version is not None
        self.chunk_size = chunk_size
        self.prefix = _prefix(name, base_url, sitemap.protocol)
        self.languages = list(sitemap._languages()) if sitemap.i18n else []
        per_row = max(1, len(self.languages))
        links = len(self.languages) + bool(sitemap.x_default) if sitemap.alternates else 0
        self.shape = LimitedShape(
            urls_per_row=per_row, alternates=links if sitemap.i18n else 0, limit=sitemap.limit
        )

    def fingerprint(self) -> str:
        kind = type(self.sitemap)
        return f"django-sitemap|{kind.__module__}.{kind.__qualname__}|{self.prefix}"

    def _items_kind(self) -> str:
        """``"integer"`` (a QuerySet of an integer primary key), ``"cut"`` (a QuerySet of
        another key) or ``"positions"``: told by the first ``items()`` (a QuerySet is lazy:
        no query)."""
        if self._kind is None:
            items = self.sitemap.items()
            if not isinstance(items, QuerySet):
                self._kind = "positions"
            else:
                self._kind = "integer" if _integer_key(items) else "cut"
        return self._kind

    @property
    def fixed_ranges(self) -> bool:  # type: ignore[override]
        """Integer keys (positions, or an integer primary key) page by fixed ranges."""
        return self._items_kind() != "cut"

    @property
    def live(self) -> bool:  # type: ignore[override]
        """A QuerySet of an integer key, without ``version=``: its pages are kept current by
        recounts (``freshness.mode="incremental"``), as a SQL source's without a lastmod column."""
        return self._version is None and self._items_kind() == "integer"

    # -- the items, by key ------------------------------------------------------------------

    def _items(self, keys: KeyRange) -> Iterator[tuple[Any, Any]]:
        """``(key, item)`` in key order: primary keys of a QuerySet, or positions."""
        items = self.sitemap.items()
        if isinstance(items, QuerySet):
            rows = items.order_by("pk")
            if keys.after is not None:
                rows = rows.filter(pk__gt=keys.after[0])
            if keys.until is not None:
                rows = rows.filter(pk__lte=keys.until[0])
            if plain_instances(rows):
                return instances(rows, self.chunk_size)
            return ((item.pk, item) for item in rows.iterator(chunk_size=self.chunk_size))
        start = 0 if keys.after is None else int(keys.after[0]) + 1
        stop = None if keys.until is None else int(keys.until[0]) + 1
        return islice(enumerate(items), start, stop)

    def _rows(self, keys: KeyRange) -> Iterator[tuple[Any, list[Item]]]:
        """``(key, entries)`` of each item in ``keys``."""
        if self.sitemap.i18n:
            for key, item in self._items(keys):
                yield key, list(self._entries(key, item))
            return
        # One URL an item: the four fields' getters looked up once, not per item.
        location, lastmod, changefreq, priority = map(self._getter, _FIELDS)
        prefix = self.prefix
        for key, item in self._items(keys):
            loc = prefix + str(location(item))
            yield key, [((key, loc, lastmod(item), changefreq(item), priority(item)), None)]

    def _getter(self, name: str) -> Callable[[Any], Any]:
        """The class's method ``name``, or a function giving its attribute's value."""
        attribute = getattr(self.sitemap, name, None)
        if callable(attribute):
            return cast(Callable[[Any], Any], attribute)
        return lambda item: attribute

    # -- one item's URLs, as Django's Sitemap._urls makes them -----------------------------

    def _location(self, item: Any, language: str) -> str:
        with translation.override(language):
            return self.prefix + str(self._getter("location")(item))

    def _entries(self, key: Any, item: Any) -> Iterator[Item]:
        """The URLs of one item of an ``i18n`` class: one per language (without ``i18n``,
        :meth:`_rows` makes an item's one URL)."""
        fields = tuple(self._getter(name)(item) for name in _FIELDS[1:])
        languages = list(self.sitemap.get_languages_for_item(item))
        locs = {language: self._location(item, language) for language in languages}
        extras = None
        if self.sitemap.alternates:
            links = dict(locs)
            default = django_settings.LANGUAGE_CODE
            if self.sitemap.x_default and default in locs:
                links["x-default"] = locs[default].replace(f"/{default}/", "/", 1)
            extras = Extensions(alternates=links)
        for language in languages:
            yield (key, locs[language], *fields), extras

    # -- the source protocol ----------------------------------------------------------------

    @read
    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        if self._version is not None:
            # A new key below 0 changes the version: the pages are read again, and cut.
            return Summary(None, None, str(self._version()), as_of.listed_until)
        if self._items_kind() == "integer" and keys != ALL and self._lowest() < 0:
            raise CutPages(self.name)  # a fixed range, but the keys need cuts now
        digest = Digest(as_of)
        for _, entries in self._chunks(keys):
            digest.add_all(entries)
        summary = digest.summary()
        if self.latest_overridden:  # the index shows it: the page's validators follow it
            latest = self._latest(as_of)
            summary = replace(
                summary,
                newest=summary.newest if latest.newest is None else latest.newest,
                expires=_earliest(summary.expires, latest.expires),
            )
        return replace(summary, checksum=summary.token)  # a page's checksum is its token

    def _latest(self, as_of: AsOf) -> Lastmods:
        """The class's own ``get_latest_lastmod()``, under the rules of any lastmod: None,
        a value that is no date, or one in the future is not usable (``newest`` is None),
        and a future one is the moment it becomes usable (``expires``)."""
        lastmods = Lastmods(as_of)
        lastmods.add(self.sitemap.get_latest_lastmod())
        return lastmods

    def _section(self, pages: list[Page], as_of: AsOf) -> list[Page]:
        """The pages, with the overriding ``get_latest_lastmod()`` as each one's newest; when
        it gives nothing usable, each page keeps its own newest lastmod."""
        if not self.latest_overridden or not pages:
            return pages
        latest = self._latest(as_of)
        if latest.newest is None:
            if latest.expires is None:
                return pages
            return [
                replace(page, expires=_earliest(page.expires, latest.expires)) for page in pages
            ]
        return [
            replace(page, newest=latest.newest, expires=_earliest(page.expires, latest.expires))
            for page in pages
        ]

    def _lowest(self) -> Any:
        """The lowest primary key of the QuerySet (0 without rows): one aggregate."""
        return self.sitemap.items().aggregate(lowest=Min("pk"))["lowest"] or 0

    @read
    def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        return self._section(self._pages(page_size, as_of), as_of)

    def _pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        if not self.fixed_ranges:
            return self._cuts(page_size, as_of)
        found: dict[int, tuple[Digest, int]] = {}

        def add(page: int, run: list[Item], items: int) -> None:
            digest, count = found.get(page) or (Digest(as_of), 0)
            digest.add_all(run)
            found[page] = (digest, count + items)

        for keys, entries in self._chunks(ALL):
            if keys[0] < 0:  # the fixed ranges start at 0: cut like any other key
                return self._cuts(page_size, as_of)
            if len(keys) != len(entries):  # one item, with its entries
                add(keys[0] // page_size, entries, 1)
                continue
            start = 0
            while start < len(keys):  # the keys ascend: a page's run ends at its bound
                page = keys[start] // page_size
                end = bisect_left(keys, (page + 1) * page_size, start)
                add(page, entries[start:end], end - start)
                start = end
        return [_page(index, count, digest, None) for index, (digest, count) in found.items()]

    def _cuts(self, page_size: int, as_of: AsOf) -> list[Page]:
        """Runs of ``page_size`` items in key order, each ending at its last key."""
        found: list[Page] = []
        digest, count, last = Digest(as_of), 0, None
        for keys, entries in self._chunks(ALL):
            parallel, start = len(keys) == len(entries), 0
            while start < len(keys):
                end = min(len(keys), start + page_size - count)
                digest.add_all(entries[start:end] if parallel else entries)
                count, last, start = count + end - start, keys[end - 1], end
                if count == page_size:
                    found.append(_page(len(found), count, digest, last))
                    digest, count = Digest(as_of), 0
        if count:
            found.append(_page(len(found), count, digest, last))
        return found

    def _chunks(self, keys: KeyRange) -> Iterator[tuple[list[Any], list[Item]]]:
        """Chunks of items: their keys and entries, one entry a key at the same positions
        (made a column at a time), or, for an ``i18n`` class, one key and its entries."""
        if self.sitemap.i18n:
            for key, entries in self._rows(keys):
                yield [key], entries
            return
        items = self._items(keys)
        while chunk := list(islice(items, _CHUNK)):
            batch = self._columns(chunk)
            fields = zip(
                batch.keys,
                batch.locs,
                batch.lastmods,
                batch.changefreqs,
                batch.priorities,
                strict=True,
            )
            yield list(batch.keys), [(raw, None) for raw in fields]

    @read_rows
    def batches(self, keys: KeyRange = ALL, size: int = 500) -> Iterator[Batch]:
        if not self.sitemap.i18n:  # one URL an item: built column by column
            items = self._items(keys)
            while chunk := list(islice(items, size)):
                yield self._columns(chunk)
            return
        rows = self._rows(keys)
        while chunk := list(islice(rows, max(1, size // self.shape.urls_per_row))):
            yield batch_of([entry for _, entries in chunk for entry in entries])

    def _columns(self, chunk: list[tuple[Any, Any]]) -> Batch:
        """The entries of items without languages: what :meth:`_entries` gives, a column
        at a time (a constant field is one repeated value)."""
        keys = [key for key, _ in chunk]
        items = [item for _, item in chunk]
        prefix = self.prefix
        locs = [prefix + str(loc) for loc in self._column("location", items)]
        return Batch(
            keys,
            locs,
            self._column("lastmod", items),
            self._column("changefreq", items),
            self._column("priority", items),
        )

    def _column(self, name: str, items: list[Any]) -> Sequence[Any]:
        attribute = getattr(self.sitemap, name, None)
        if callable(attribute):
            return list(map(attribute, items))
        return Repeated(attribute, len(items))


_FIELDS = ("location", "lastmod", "changefreq", "priority")
_CHUNK = 128  # items digested a column at a time (few enough to stay in the CPU's caches)


def _earliest(first: datetime | None, second: datetime | None) -> datetime | None:
    """The earlier of two moments, either of which may be missing."""
    if first is None or second is None:
        return first or second
    return min(first, second)


def _page(index: int, count: int, digest: Digest, last: Any) -> Page:
    summary = digest.summary()
    return Page(
        index,
        count,
        summary.newest,
        last=None if last is None else (last,),
        checksum=summary.token,
        expires=summary.expires,
    )


def _integer_key(items: QuerySet[Any]) -> bool:
    return items.model._meta.pk.get_internal_type() in _INTEGER_KEYS


_INTEGER_KEYS = {
    "AutoField",
    "BigAutoField",
    "SmallAutoField",
    "IntegerField",
    "BigIntegerField",
    "SmallIntegerField",
    "PositiveIntegerField",
    "PositiveBigIntegerField",
    "PositiveSmallIntegerField",
}


def _prefix(name: str, base_url: str | None, protocol: str | None) -> str:
    """``scheme://host`` of the URLs (Django's ``protocol://domain``), or '' for paths
    relative to the base URL."""
    if base_url is None:
        return ""
    parts = urlsplit(base_url)
    if not parts.scheme or not parts.netloc:
        raise ConfigurationError(
            f"base_url: source {name!r}: {base_url!r} must be an absolute URL such as "
            "'https://example.com/'"
        )
    scheme = protocol or parts.scheme
    if parts.path in ("", "/") and scheme == parts.scheme:
        return ""  # a path from the base URL's root: the same URL, on the renderer's fast path
    return f"{scheme}://{parts.netloc}"


def django_sitemap_sources(
    sitemaps: Mapping[str, type[Sitemap] | Sitemap], *, base_url: str | None = None
) -> list[DjangoSitemapSource]:
    """The ``sitemaps`` dict a project passes to Django's views, as sources named by its keys."""
    if not isinstance(sitemaps, Mapping):
        raise ConfigurationTypeError(
            f"sitemaps: needs the dict of Sitemap classes given to Django's views, "
            f"got {type(sitemaps).__name__}"
        )
    return [
        DjangoSitemapSource(sitemap, name=name, base_url=base_url)
        for name, sitemap in sitemaps.items()
    ]
