"""The url entry, and the rule for rows that cannot be listed as they are.

The bad-row rule:

* a row whose ``loc`` cannot be listed (missing, not a URL on the site, outside
  the sitemap's scope, too long, holding a character XML forbids or a dot
  segment, or already listed in the document) is **skipped**;
* a row with a bad optional field (``lastmod``, ``changefreq``, ``priority``)
  is listed **without that field**;
* either way the problem is logged once per process (source name, row key,
  reason; long values cut to about 200 characters) and counted in the
  source's :class:`~sitemap_middleware.state.bad_rows.BadRowStats` (rows and URLs);
* with ``strict=True`` a :class:`BadRowError` is raised instead;
* a row whose loc the site's ``robots.txt`` disallows (``robots_filter``) is skipped and
  reported the same way (``robots-disallowed``), but never raised: it is the site's choice,
  not a bad value.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from decimal import Decimal
from itertools import repeat
from typing import Any

from ..core.dates import LastmodError, Unreadable, check_not_future, format_lastmod
from ..core.spec import CHANGEFREQS, MAX_PRIORITY, MIN_PRIORITY
from ..core.urls import LocError, Site
from ..state.bad_rows import MAX_VALUE, BadRow, BadRowStats, LanguageKey, Tally, shorten
from .extensions import Alternate, Extensions, Image, News, Shape, Video, check
from .xml import UrlFields

logger = logging.getLogger("sitemap_middleware")


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``<url>`` as a source gives it. Only ``loc`` is required.

    ``loc`` is an absolute URL on the site or a path relative to the base URL;
    ``lastmod`` a ``date``, ``datetime`` or W3C Datetime string; ``changefreq``
    one of the seven protocol values; ``priority`` a number from 0.0 to 1.0.
    """

    loc: str
    lastmod: date | str | None = None
    changefreq: str | None = None
    priority: float | Decimal | str | None = None
    alternates: Sequence[Alternate] | Mapping[str, str] = ()
    """Every language version of the page, itself included: ``{"en": "/en/a", ...}``."""
    images: Sequence[Image | str] = ()
    videos: Sequence[Video] = ()
    news: News | None = None

    @property
    def extensions(self) -> Extensions | None:
        """The entry's extension data, or None when it has none."""
        if not (self.alternates or self.images or self.videos or self.news is not None):
            return None
        return Extensions(self.alternates, self.images, self.videos, self.news)


RawEntry = tuple[Any, Any, Any, Any, Any]
"""``(key, loc, lastmod, changefreq, priority)`` of one row: unchecked."""


class Affixed(Sequence[str]):
    """A column of locs that share a prefix and a suffix: ``before + value + after``.

    A loc template with one field gives its locs this way, so that the common
    case never builds them: the renderer writes the parts straight into the
    elements. Indexing and iterating give the whole locs.
    """

    __slots__ = ("after", "before", "joined", "values")

    def __init__(
        self, before: str, values: Sequence[str], after: str, joined: str | None = None
    ) -> None:
        self.before = before
        self.values = values
        self.after = after
        self.joined = joined
        """Optional: ``"\n".join(values)``, when the maker has it already."""

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.before + value + self.after for value in self.values[index]]
        return self.before + self.values[index] + self.after

    def __iter__(self) -> Iterator[str]:
        before, after = self.before, self.after
        return (before + value + after for value in self.values)


class Repeated(Sequence[Any]):
    """A column that holds one value on every row (a source's constant changefreq, a
    lastmod it does not have): the renderer checks and writes the value once."""

    __slots__ = ("size", "value")

    def __init__(self, value: Any, size: int) -> None:
        self.value = value
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.value] * len(range(*index.indices(self.size)))
        if not -self.size <= index < self.size:
            raise IndexError("Repeated index out of range")
        return self.value

    def __iter__(self) -> Iterator[Any]:
        return repeat(self.value, self.size)

    def count(self, value: Any) -> int:
        """As ``list.count``: identity or equality."""
        return self.size if value is self.value or value == self.value else 0


@dataclass(frozen=True, slots=True)
class Batch:
    """The raw entries of one fetch, column by column, as sources yield them.

    Columns make the common case cheap: one C-level pass checks a whole
    column. Every column has one value per row; a constant column may be a
    list of one repeated object, or a :class:`Repeated`.
    """

    keys: Sequence[Any]
    locs: Sequence[Any]
    lastmods: Sequence[Any]
    changefreqs: Sequence[Any]
    priorities: Sequence[Any]
    lastmod_texts: Sequence[Any] | None = None
    """Optional: the ISO 8601 strings the lastmods were parsed from, one per row.

    A source that reads stored text (SQLite keeps dates as text) gives it here
    when every ``lastmods[i]`` is ``datetime.fromisoformat(lastmod_texts[i])``
    (or ``date.fromisoformat``). The renderer may then copy the digits instead
    of formatting each value, once it has proved the texts' layout.
    """

    @classmethod
    def of(cls, rows: Sequence[RawEntry]) -> Batch:
        if not rows:
            return cls((), (), (), (), ())
        keys, locs, lastmods, changefreqs, priorities = zip(*rows, strict=True)
        return cls(keys, locs, lastmods, changefreqs, priorities)

    extras: Sequence[Extensions | None] | None = None
    """Optional: each row's extension data (alternates, images, videos, news), or None."""

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self) -> Iterator[RawEntry]:
        return zip(
            self.keys, self.locs, self.lastmods, self.changefreqs, self.priorities, strict=True
        )


class BadRowError(ValueError):
    """Raised in strict mode for a row that breaks the rules."""


def coerce_extras(item: Any) -> Extensions | None:
    """The extension data of a list or generator item (an ``Entry`` or a mapping)."""
    if isinstance(item, Entry):
        return item.extensions
    if isinstance(item, Mapping) and any(
        item.get(name) for name in ("alternates", "images", "videos", "news")
    ):
        return Extensions(
            item.get("alternates") or (),
            item.get("images") or (),
            item.get("videos") or (),
            item.get("news"),
        )
    return None


def coerce_item(key: Any, item: Any) -> RawEntry:
    """An item of a list or generator source (``Entry``, URL string or mapping) as a RawEntry."""
    if isinstance(item, Entry):
        return (key, item.loc, item.lastmod, item.changefreq, item.priority)
    if isinstance(item, str):
        return (key, item, None, None, None)
    if isinstance(item, Mapping):
        return (
            key,
            item.get("loc"),
            item.get("lastmod"),
            item.get("changefreq"),
            item.get("priority"),
        )
    return (key, item, None, None, None)  # rejected by the loc rule, with its type named


def format_priority(value: object) -> str:
    """``0.0``..``1.0`` as a plain decimal (the XSD forbids exponents)."""
    if isinstance(value, bool):
        raise ValueError("priority must be a number, not a bool")
    if isinstance(value, str):
        value = value.strip()
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number) or not MIN_PRIORITY <= number <= MAX_PRIORITY:
        raise ValueError(f"priority {value!r} is outside 0.0..1.0")
    # -0.0 is 0.0 (equal values, one text: the validators' checksum cannot tell them apart).
    text = f"{number + 0.0:.4f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def format_changefreq(value: object) -> str:
    if not isinstance(value, str) or value.strip().lower() not in CHANGEFREQS:
        raise ValueError(f"changefreq {value!r} is not one of {', '.join(sorted(CHANGEFREQS))}")
    return value.strip().lower()


class _Marks(threading.local):
    """What this thread last counted: one row is counted once (see ``EntryRules._count``)."""

    def __init__(self) -> None:
        self.entry: tuple[str, Any, set[bool]] | None = None
        self.rows: dict[bool, tuple[str, Any, set[str | None]]] = {}


@dataclass
class EntryRules:
    """Checks raw entries against the site and the protocol (pure; logs and counts)."""

    site: Site
    naive_timezone: tzinfo
    strict: bool = False
    tallies: dict[str, Tally] = field(default_factory=dict)
    """Counters by source name: the sources' own (a sitemap passes them), made on demand."""
    _logged: set[tuple[str, str, str]] = field(default_factory=set, repr=False)
    _log_limit: int = 10_000
    _marks: _Marks = field(default_factory=_Marks, repr=False)

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """A snapshot of the counters, by source name."""
        return {name: tally.snapshot() for name, tally in list(self.tallies.items())}

    def for_site(self, site: Site) -> EntryRules:
        """The same rules for another host's URLs: its bad rows are counted and logged with
        these (one log line per problem, whichever host met it)."""
        return EntryRules(site, self.naive_timezone, self.strict, self.tallies, self._logged)

    def check(
        self,
        source: str,
        raw: RawEntry,
        listed_until: datetime | None = None,
        first: Callable[[str], bool] | None = None,
    ) -> UrlFields | None:
        """The entry's final fields, or None when the row is skipped.

        A lastmod later than ``listed_until`` (now + ``lastmods.tolerance``) is in the
        future: dropped. ``first(url)`` says whether the document lists the loc
        for the first time; a repeated loc skips the row before its other fields
        are judged.
        """
        key, loc, lastmod, changefreq, priority = raw
        self._marks.entry = None  # a new entry: its problems count it once
        url = self._loc(source, key, loc)
        if url is None:
            return None
        if first is not None and not first(url):
            self.duplicate(source, key, url)
            return None
        lastmod_text = changefreq_text = priority_text = None
        if lastmod is not None:
            try:
                lastmod_text = format_lastmod(lastmod, self.naive_timezone)
                if listed_until is not None:
                    check_not_future(lastmod, self.naive_timezone, listed_until)
            except (LastmodError, ValueError, OverflowError) as exc:
                lastmod_text = None
                self._drop(source, key, f"lastmod dropped: {exc}")
        if changefreq is not None:
            try:
                changefreq_text = format_changefreq(changefreq)
            except ValueError as exc:
                self._drop(source, key, f"changefreq dropped: {exc}")
        if priority is not None:
            try:
                priority_text = format_priority(priority)
            except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
                self._drop(source, key, f"priority dropped: {exc}")
        return UrlFields(url, lastmod_text, changefreq_text, priority_text)

    def extend(
        self,
        source: str,
        key: Any,
        url: UrlFields,
        extensions: Extensions,
        shape: Shape,
        news_cutoff: datetime | None,
    ) -> UrlFields:
        """``url`` with its checked extension elements; bad ones left out and reported."""
        checked = check(extensions, url.loc, self.site, shape, self.naive_timezone, news_cutoff)
        for problem in checked.problems:
            self._drop(source, key, problem)
        return replace(url, extensions=checked.xml)

    def check_loc(self, source: str, key: Any, loc: Any) -> str | None:
        """The absolute URI for a loc, or None when the row is skipped (and reported)."""
        self._marks.entry = None
        return self._loc(source, key, loc)

    def _loc(self, source: str, key: Any, loc: Any) -> str | None:
        if type(loc) is not str:
            if isinstance(loc, Unreadable):  # a stored value or the loc function failed
                self._skip(source, key, f"loc cannot be built: {loc.reason}")
                return None
            self._skip(source, key, f"loc must be a string, not {type(loc).__name__}")
            return None
        try:
            return self.site.resolve(loc)
        except LocError as exc:
            self._skip(source, key, str(exc))
        except (ValueError, UnicodeError) as exc:  # lone surrogates and the like
            self._skip(source, key, f"loc cannot be encoded ({exc})")
        return None

    def duplicate(self, source: str, key: Any, url: str) -> None:
        """A row whose loc the document already lists: skipped, reported as a bad row."""
        self._skip(source, key, f"duplicate loc {url} (listed earlier in this document)")

    def robots_disallowed(self, source: str, key: Any, url: str) -> None:
        """A row whose loc the site's ``robots.txt`` disallows (``robots_filter``): skipped,
        counted and logged as a bad row; a choice of the site, so never raised with
        ``strict``."""
        reason = f"row skipped: robots-disallowed: {url} (robots.txt, User-agent: *)"
        self._marks.entry = None
        self._count(source, key, reason, True, 1)
        self._report(source, key, reason, strict=False)

    def _skip(self, source: str, key: Any, reason: str, urls: int = 1) -> None:
        """Report a row (or one language version of it) left out of the document.

        ``urls``: how many URLs this one report stands for (a whole row reported
        before its languages are expanded stands for all of them).
        """
        reason = "row skipped: " + reason
        self._count(source, key, reason, True, urls)
        self._report(source, key, reason)

    def _drop(self, source: str, key: Any, reason: str, urls: int = 1) -> None:
        """Report a bad optional field of a row, which is listed without it."""
        self._count(source, key, reason, False, urls)
        self._report(source, key, reason)

    def _count(self, source: str, key: Any, reason: str, skipped: bool, urls: int) -> None:
        """Count a problem once per entry, and the row once for all its language versions.

        The entries of one row come one after another (in one thread), each
        starting with :meth:`check` or :meth:`check_loc`: a problem of the entry
        just counted is not counted again, and a language version of the row
        just counted adds its URL but not another row. A language seen again
        means the row is being read again (another request): counted again.
        """
        marks = self._marks
        row, lang = (key.row, key.lang) if type(key) is LanguageKey else (key, None)
        entry = marks.entry
        if entry is not None and entry[0] == source and _same(entry[1], key):
            if skipped in entry[2]:
                urls = 0
            entry[2].add(skipped)
        else:
            marks.entry = (source, key, {skipped})
        rows = 1
        last = marks.rows.get(skipped)
        if urls == 0:
            rows = 0
        elif last is not None and last[0] == source and _same(last[1], row):
            if lang not in last[2]:
                last[2].add(lang)
                rows = 0
            else:
                marks.rows[skipped] = (source, row, {lang})
        else:
            marks.rows[skipped] = (source, row, {lang})
        self._tally(source).add(skipped, rows, urls, BadRow(shorten(repr(key)), shorten(reason)))

    def _tally(self, source: str) -> Tally:
        tally = self.tallies.get(source)
        if tally is None:
            tally = self.tallies.setdefault(source, Tally())
        return tally

    def _report(self, source: str, key: Any, reason: str, strict: bool = True) -> None:
        message = f"source {source!r}, row {shorten(repr(key))}: {shorten(reason, 2 * MAX_VALUE)}"
        if strict and self.strict:
            raise BadRowError(message)
        # Crawlers fetch the same rows again and again: one log line per problem,
        # within a bound so a table full of bad rows cannot grow memory.
        marker = (source, shorten(repr(key)), shorten(reason))
        if marker in self._logged:
            return
        if len(self._logged) < self._log_limit:
            self._logged.add(marker)
        logger.warning("bad sitemap row: %s", message)


def _same(a: Any, b: Any) -> bool:
    """Whether two keys are equal (a key whose ``==`` fails is equal to nothing else)."""
    try:
        return a is b or bool(a == b)
    except Exception:
        return False
