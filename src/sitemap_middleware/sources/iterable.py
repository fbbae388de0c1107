"""Sources over Python data: a list of entries or URL strings, or a (async) generator function.

Items may be :class:`~sitemap_middleware.Entry` objects, URL strings or
mappings with ``loc``/``lastmod``/``changefreq``/``priority`` keys. The key
of an item is its position.

A fixed collection is copied once and summarised once. A callable is called
for every request; without ``version=`` its summary reads every item (hashing
them), so a 304 costs one pass over the data but no XML. Give ``version`` (a
callable returning a string that changes with the data) to skip that pass.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from datetime import UTC, datetime, tzinfo
from itertools import islice
from operator import attrgetter
from typing import Any, cast

from ..core.dates import AsOf, to_utc
from ..core.spec import MAX_IMAGES
from ..core.validators import Summary
from ..output.entry import Batch, RawEntry, coerce_extras, coerce_item
from ..output.extensions import Extensions, Shape
from ..settings import ConfigurationError, ConfigurationTypeError
from .base import ALL, AsyncSource, KeyRange, Page, SyncSource, check_name

Item = tuple[RawEntry, Extensions | None]


def _item(key: int, value: Any) -> Item:
    return coerce_item(key, value), coerce_extras(value)


def batch_of(items: list[Item]) -> Batch:
    """The batch of a run of items (their extension data beside, when any has some)."""
    batch = Batch.of([raw for raw, _ in items])
    extras = [extras for _, extras in items]
    if extras.count(None) == len(extras):
        return batch
    return Batch(
        batch.keys,
        batch.locs,
        batch.lastmods,
        batch.changefreqs,
        batch.priorities,
        extras=extras,
    )


def _declared(name: str, alternates: int, images: int, videos: int, news: bool) -> Shape:
    for setting, value, high in (
        ("alternates", alternates, 1_000),
        ("images", images, MAX_IMAGES),
        ("videos", videos, 1_000),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            raise ConfigurationError(
                f"{setting}: source {name!r}: must be an integer from 0 to {high} (the most "
                f"an entry carries), got {value!r}"
            )
    if not isinstance(news, bool):
        raise ConfigurationTypeError(f"news: source {name!r}: must be True or False, got {news!r}")
    return Shape(alternates=alternates, images=images, videos=videos, news=bool(news))


def _inferred(items: tuple[Item, ...]) -> Shape:
    """The shape of a fixed list: the most any of its entries carries."""
    alternates = images = videos = 0
    news = False
    for _, extras in items:
        if extras is None:
            continue
        alternates = max(alternates, len(extras.alternates))
        images = max(images, min(len(extras.images), MAX_IMAGES))
        videos = max(videos, len(extras.videos))
        news = news or extras.news is not None
    return Shape(alternates=alternates, images=images, videos=videos, news=news)


def _bounds(keys: KeyRange) -> tuple[int, int | None]:
    start = 0 if keys.after is None else int(keys.after[0]) + 1
    stop = None if keys.until is None else int(keys.until[0]) + 1
    return start, stop


class Lastmods:
    """The newest lastmod served under a listed_until, and the earliest one beyond it."""

    def __init__(self, as_of: AsOf) -> None:
        self.as_of = as_of
        self.newest: datetime | None = None
        self.expires: datetime | None = None

    def add(self, lastmod: object) -> None:
        moment = to_utc(lastmod, self.as_of.naive_timezone)
        if moment is None:
            return
        if moment.replace(microsecond=0) > self.as_of.listed_until:  # fractions are not written
            if self.expires is None or moment < self.expires:
                self.expires = moment
        elif self.newest is None or moment > self.newest:
            self.newest = moment

    def add_all(self, values: Sequence[object]) -> None:
        """:meth:`add` of each: in C-level passes when all are aware UTC datetimes (as
        Django's ORM gives them) and none is past ``listed_until``."""
        if values and set(map(type, values)) == _DATETIME and set(map(_TZINFO, values)) == _UTC:
            newest = max(cast(Sequence[datetime], values))
            if newest.replace(microsecond=0) <= self.as_of.listed_until:
                if self.newest is None or newest > self.newest:
                    self.newest = newest
                return
        for value in values:
            self.add(value)


_DATETIME = {datetime}
_UTC = {UTC}
_TZINFO = attrgetter("tzinfo")


class Digest:
    """Accumulates the summary of raw entries: newest lastmod, count, content hash."""

    def __init__(self, as_of: AsOf) -> None:
        self.lastmods = Lastmods(as_of)
        self.hash = hashlib.sha256()
        self.count = 0

    def add(self, item: Item) -> None:
        raw, extras = item
        self.count += 1
        self.hash.update(repr((raw[1:], extras)).encode("utf-8", "surrogatepass"))
        self.lastmods.add(raw[2])

    def add_all(self, items: Sequence[Item]) -> None:
        """:meth:`add` of each (the same digest: one hash update of their joined texts)."""
        self.count += len(items)
        texts = "".join([repr((raw[1:], extras)) for raw, extras in items])
        self.hash.update(texts.encode("utf-8", "surrogatepass"))
        self.lastmods.add_all([raw[2] for raw, _ in items])

    def summary(self, version: str | None = None) -> Summary:
        lastmods = self.lastmods
        expires = lastmods.expires
        token = version if version is not None else f"{self.count}:{self.hash.hexdigest()}"
        # Which lastmods are served changes as ``listed_until`` passes them: the token says so.
        token += f":{expires.isoformat() if expires else ''}"
        return Summary(lastmods.newest, self.count, token, lastmods.as_of.listed_until, expires)


class _Buckets:
    """Counts, newest lastmods and content hashes per page of ``page_size`` positions."""

    def __init__(self, page_size: int, as_of: AsOf) -> None:
        self.page_size, self.as_of = (
            page_size,
            as_of,
        )
        self.found: dict[int, Digest] = {}
        self.position = 0

    def add(self, item: Item) -> None:
        index = self.position // self.page_size
        self.position += 1
        digest = self.found.get(index)
        if digest is None:
            digest = self.found[index] = Digest(self.as_of)
        digest.add(item)

    def result(self) -> list[Page]:
        out = []
        for index, digest in self.found.items():
            summary = digest.summary()
            out.append(
                Page(
                    index,
                    digest.count,
                    summary.newest,
                    checksum=summary.token,
                    expires=summary.expires,
                )
            )
        return out


class IterableSource(SyncSource):
    """Entries from a list/tuple (read once) or from a function returning an iterable.

    A list's extensions are seen up front. A function declares the most its entries
    carry (``alternates``, ``images``, ``videos`` per entry, ``news``): pages are sized
    for it, and anything beyond is left out and reported.
    """

    def __init__(
        self,
        items: Iterable[Any] | Callable[[], Iterable[Any]],
        *,
        name: str = "urls",
        version: Callable[[], object] | None = None,
        alternates: int = 0,
        images: int = 0,
        videos: int = 0,
        news: bool = False,
    ) -> None:
        self.name = check_name(name)
        self._version = version
        self._summaries: dict[tuple[KeyRange, tzinfo], Summary] = {}
        if isinstance(items, Iterator):
            raise ConfigurationTypeError(
                f"items: source {name!r}: an iterator or generator can be read only once; pass "
                "a list or the function that makes it"
            )
        if version is not None and not callable(version):
            raise ConfigurationTypeError(
                f"version: source {name!r}: must be a function returning a string that changes "
                f"with the data, got {type(version).__name__}"
            )
        self._items: tuple[Item, ...] | None
        self._factory: Callable[[], Iterable[Any]] | None
        self.shape = _declared(name, alternates, images, videos, news)
        if callable(items) and not isinstance(items, Iterable):
            self._items, self._factory = None, items
        elif isinstance(items, Iterable) and not isinstance(items, str | bytes):
            self._items = tuple(_item(i, item) for i, item in enumerate(items))
            self._factory = None
            self.shape = _inferred(self._items)
        else:
            raise ConfigurationTypeError(
                f"items: source {name!r}: expected a list of entries/URLs or a function "
                f"returning an iterable, got {type(items).__name__}"
            )

    def _raw(self, keys: KeyRange) -> Iterator[Item]:
        start, stop = _bounds(keys)
        if self._items is not None:
            return iter(self._items[start:stop])
        assert self._factory is not None
        produced = self._factory()
        if not isinstance(produced, Iterable) or isinstance(produced, str | bytes):
            raise TypeError(f"source {self.name!r}: the function must return an iterable")
        return islice((_item(i, item) for i, item in enumerate(produced)), start, stop)

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        if self._factory is not None and self._version is not None:
            return Summary(None, None, str(self._version()), as_of.listed_until)
        cache_key = (keys, as_of.naive_timezone)
        known = self._summaries.get(cache_key)
        if self._items is not None and known is not None and known.fresh(as_of.listed_until):
            return known
        digest = Digest(as_of)
        for raw in self._raw(keys):
            digest.add(raw)
        summary = digest.summary()
        if self._items is not None:
            self._summaries[cache_key] = summary
        return summary

    def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        counter = _Buckets(page_size, as_of)
        for item in self._raw(ALL):
            counter.add(item)
        return counter.result()

    def batches(self, keys: KeyRange = ALL, size: int = 500) -> Iterator[Batch]:
        items = self._raw(keys)
        while rows := list(islice(items, size)):
            yield batch_of(rows)


class AsyncIterableSource(AsyncSource):
    """Entries from a function returning an async iterable (an async generator function)."""

    def __init__(
        self,
        factory: Callable[[], AsyncIterable[Any]],
        *,
        name: str = "urls",
        version: Callable[[], Awaitable[object]] | None = None,
        alternates: int = 0,
        images: int = 0,
        videos: int = 0,
        news: bool = False,
    ) -> None:
        self.name = check_name(name)
        self.shape = _declared(name, alternates, images, videos, news)
        if not callable(factory):
            raise ConfigurationTypeError(
                f"factory: source {name!r}: expected an async generator function, "
                f"got {type(factory).__name__}"
            )
        if version is not None and not callable(version):
            raise ConfigurationTypeError(
                f"version: source {name!r}: must be an async function returning a string "
                f"that changes with the data, got {type(version).__name__}"
            )
        self._factory = factory
        self._version = version

    async def _raw(self, keys: KeyRange) -> AsyncIterator[Item]:
        start, stop = _bounds(keys)
        produced = self._factory()
        if not isinstance(produced, AsyncIterable):
            raise TypeError(f"source {self.name!r}: the function must return an async iterable")
        index = -1
        try:
            async for item in produced:
                index += 1
                if index < start:
                    continue
                if stop is not None and index >= stop:
                    break
                yield _item(index, item)
        finally:
            aclose = getattr(produced, "aclose", None)
            if aclose is not None:
                await aclose()

    async def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        if self._version is not None:
            return Summary(None, None, str(await self._version()), as_of.listed_until)
        digest = Digest(as_of)
        raw = self._raw(keys)
        try:
            async for item in raw:
                digest.add(item)
        finally:
            await _aclose(raw)
        return digest.summary()

    async def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        counter = _Buckets(page_size, as_of)
        raw = self._raw(ALL)
        try:
            async for item in raw:
                counter.add(item)
        finally:
            await _aclose(raw)
        return counter.result()

    async def batches(self, keys: KeyRange = ALL, size: int = 500) -> AsyncGenerator[Batch, None]:
        raw = self._raw(keys)
        try:
            rows: list[Item] = []
            async for item in raw:
                rows.append(item)
                if len(rows) >= size:
                    yield batch_of(rows)
                    rows = []
            if rows:
                yield batch_of(rows)
        finally:
            await _aclose(raw)


def as_source(value: object, name: str = "urls") -> SyncSource | AsyncSource:
    """Turn what a user passes as a source into a source."""
    if isinstance(value, SyncSource | AsyncSource):
        return value
    if inspect.isasyncgenfunction(value):
        return AsyncIterableSource(value, name=name)
    if isinstance(value, AsyncIterable):
        raise ConfigurationTypeError(
            f"sources: source {name!r}: an async iterator can be read only once; pass the "
            "async generator function that makes it"
        )
    return IterableSource(value, name=name)  # type: ignore[arg-type]


async def _aclose(raw: AsyncIterator[Any]) -> None:
    """Close an application's async iterator if it can be (an async generator can)."""
    close = getattr(raw, "aclose", None)
    if close is not None:
        await close()
