"""The source protocol: the one extension point for data.

A source can (a) say cheaply what its entries in a key range look like
(:meth:`summarize`: newest lastmod, count, a version token; aggregate queries,
no rows), and (b) stream the raw entries of a key range in a stable key order
(:meth:`batches`). Key ranges let a source be split into pages without
``OFFSET``; a source that is served whole is asked for :data:`ALL`.

Sources come in two flavours with the same shape: :class:`SyncSource` (plain
methods, run in a worker thread under ASGI) and :class:`AsyncSource`
(coroutines and async generators).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread

from ..core.dates import AsOf
from ..core.validators import Summary
from ..output.entry import Batch
from ..output.extensions import Shape
from ..settings import ConfigurationError, ConfigurationTypeError
from ..state.bad_rows import BadRowStats, tally_of

T = TypeVar("T")
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?")


@dataclass(frozen=True, slots=True)
class KeyRange:
    """Rows whose key is ``> after`` and ``<= until``; None leaves that side open."""

    after: tuple[Any, ...] | None = None
    until: tuple[Any, ...] | None = None


ALL = KeyRange()


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a source: rows whose integer key ``k`` has ``k // page_size == index``,
    or, for a source cut at every ``page_size``-th key, the ``index``-th run of
    ``page_size`` keys in key order, ending at key ``last``."""

    index: int
    count: int
    newest: datetime | None
    last: tuple[Any, ...] | None = None
    checksum: str = ""
    """Changes whenever a row of the page is added, deleted or edited (cut pages' token)."""
    expires: datetime | None = None
    """The page's earliest lastmod later than ``listed_until`` the pages were read under."""


@dataclass(frozen=True, slots=True)
class Mark:
    """A row's place in ``(lastmod, key)`` order, as the database writes both as text:
    where IndexNow pushing has got to (see ``indexnow``)."""

    lastmod: str
    key: str | None
    """None: before every row of that lastmod."""


@dataclass(frozen=True, slots=True)
class Changes:
    """Rows whose lastmod moved, in ``(lastmod, key)`` order: each row's ``marks`` entry
    (with its key, as the batch holds it) and their raw entries (in any order; with
    languages, one per language, keyed by ``LanguageKey``)."""

    marks: list[tuple[Any, Mark]]
    batch: Batch


MAX_KEY = 2**63 - 1
"""The largest value of a 64-bit integer key (SQLite's INTEGER, PostgreSQL's bigint)."""


def page_keys(page: int, page_size: int) -> KeyRange:
    """The keys of page ``page`` (from 1): ``(page - 1) * page_size`` to
    ``page * page_size - 1``."""
    # Integer key columns hold at most 64 bits: the last page ends at the largest key.
    return KeyRange(((page - 1) * page_size - 1,), (min(page * page_size - 1, MAX_KEY),))


class NotPageable(ValueError):
    """A source too large for one page cannot be split into pages."""


class CutPages(Exception):
    """Raised by :meth:`SyncSource.summarize` for a page of fixed key ranges when the data
    says the source must be cut instead (an integer key below 0): the page is planned again
    from the source's cuts."""


class _Required:
    """The default of a keyword a source needs: its absence is a configuration error that
    names the setting, not Python's ``TypeError`` about an internal ``__init__``."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()


def check_given(source: str, **settings: object) -> None:
    """Raise the configuration error of the first setting left at :data:`REQUIRED`."""
    examples = {
        "name": "name='articles' (a URL segment: the pages are /sitemap-articles-1.xml)",
        "loc": "loc='/articles/{slug}' (a template over the selected columns, or a function "
        "of the row)",
    }
    for setting, value in settings.items():
        if value is REQUIRED:
            raise ConfigurationTypeError(
                f"{setting}: {source} needs {examples.get(setting, f'{setting}=...')}"
            )


def check_name(name: str) -> str:
    """A source name must be usable as a URL segment (``articles``, ``blog-posts``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigurationError(
            f"name: source name {name!r} must be 1-64 lowercase letters, digits, '-' or '_', "
            "starting and ending with a letter or digit"
        )
    return name


class Source(ABC):
    """What every source has: a name and a fingerprint of the settings that shape its output."""

    name: str
    pageable: bool = True
    """Whether :meth:`pages` can split it into pages."""
    fixed_ranges: bool = True
    """Pages are the integer key ranges ``[(n - 1) * page_size, n * page_size)`` (stable: a change
    moves no other row) while every key is ``>= 0``; when the data holds a key below 0,
    :meth:`pages` gives cuts instead and :meth:`summarize` of a fixed range raises
    :class:`CutPages`. False: :meth:`pages` cuts the rows at every ``page_size``-th key in
    key order and gives each page's ``last`` key (any unique key: text, UUID, composite);
    the cuts are read again whenever the source's summary changes."""
    versioned: bool = False
    """Whether a data version (``version=``) says when any of its rows changed."""
    live: bool = False
    """Whether its pages can be kept current between recounts (see ``current_pages``): fixed
    integer key ranges, :meth:`pages` giving every page's ``checksum``, and
    :meth:`summarize` of a page giving the same checksum as ``Summary.checksum``."""
    tracks_changes: bool = False
    """Whether :meth:`changed` finds the rows whose lastmod moved (a live source with a
    lastmod column); without it a live source's pages are only recounted."""
    pushable: bool = False
    """Whether :meth:`changes` reads its rows in ``(lastmod, key)`` order after a mark
    (IndexNow): a lastmod column and one key column."""
    shape: Shape = Shape()
    """The most its entries carry (entries per row, alternates, images, videos, news):
    pages are sized for it and the ``urlset`` declares its namespaces."""

    def fingerprint(self) -> str:
        """Configuration that changes the bytes for the same rows (goes into the ETag)."""
        return type(self).__qualname__

    @property
    def bad_rows(self) -> BadRowStats:
        """The bad rows counted for this source by every sitemap serving it, since the
        process started (a snapshot; zeros before the first)."""
        return tally_of(self).snapshot()


class SyncSource(Source):
    thread_bound: bool = False
    """Whether its reads belong in the thread :meth:`in_thread` gives (True), not in any
    thread: an async server then runs each of its steps there, one chunk of a body at a
    time, never holding that thread between them."""

    async def in_thread(self, call: Callable[[], T]) -> T:
        """Run one of its sync reads for an async server: in a worker thread of anyio's
        pool. A source whose reads belong to a thread of their own (Django's, where a
        request's connection and transaction are) overrides it, with ``thread_bound``."""
        return await anyio.to_thread.run_sync(call)

    @abstractmethod
    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        """Newest lastmod, count and version token of the rows in ``keys``; reads no rows.

        A naive lastmod is read in ``as_of.naive_timezone``; lastmods later than
        ``as_of.listed_until`` are future, bad fields: the newest ignores them and
        ``expires`` is the earliest of them.
        """

    def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        """Count and newest lastmod of every non-empty page of ``page_size`` keys, in key order.

        One aggregate (``GROUP BY key / page_size``) for a database, or the cuts (each
        page's ``last`` key) when the keys are not integers ``>= 0``; raises
        :class:`NotPageable` when the source cannot be split.
        """
        raise NotPageable(f"source {self.name!r} cannot be split into pages")

    def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        """``(key, lastmod)`` of the rows whose lastmod is later than ``since`` and not
        later than ``as_of.listed_until``, at most ``limit`` of them, in no particular order (the
        lastmod only compared for equality)."""
        raise NotImplementedError

    def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        """The first ``limit`` rows after ``after`` in ``(lastmod, key)`` order whose
        lastmod is not later than ``as_of.listed_until``, by keyset (an index range, never
        OFFSET)."""
        raise NotImplementedError

    def push_start(self, as_of: AsOf) -> Mark:
        """The mark of the last row up to ``as_of.listed_until``: pushing starts after it."""
        raise NotImplementedError

    @abstractmethod
    def batches(self, keys: KeyRange, size: int) -> Iterator[Batch]:
        """Raw entries in key order, ``size`` rows a batch.

        The iterator's ``close()`` must release everything it holds (cursor,
        connection); adapters call it on success, failure and disconnect.
        """


class AsyncSource(Source):
    @abstractmethod
    async def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        """As :meth:`SyncSource.summarize`."""

    async def pages(self, page_size: int, as_of: AsOf) -> list[Page]:
        """As :meth:`SyncSource.pages`."""
        raise NotPageable(f"source {self.name!r} cannot be split into pages")

    async def changed(self, since: datetime, as_of: AsOf, limit: int) -> list[tuple[Any, Any]]:
        """As :meth:`SyncSource.changed`."""
        raise NotImplementedError

    async def changes(self, after: Mark | None, as_of: AsOf, limit: int) -> Changes:
        """As :meth:`SyncSource.changes`."""
        raise NotImplementedError

    async def push_start(self, as_of: AsOf) -> Mark:
        """As :meth:`SyncSource.push_start`."""
        raise NotImplementedError

    @abstractmethod
    def batches(self, keys: KeyRange, size: int) -> AsyncGenerator[Batch, None]:
        """Raw entries in key order, ``size`` at a time; ``aclose()`` releases everything."""


AnySource = SyncSource | AsyncSource
