"""The hot path: a batch of raw entries to ``<url>`` elements.

The common row (a plain ASCII path, a UTC ``datetime``, naive or aware, or a ``date``,
a changefreq/priority seen before) is written directly; anything else goes
through the full rules in :mod:`sitemap_middleware.output.entry` and
:func:`~sitemap_middleware.output.xml.url_element`. Both paths give the same bytes
(the tests compare them). Given the document's :class:`SeenLocs`, every path
drops the rows whose loc the document already lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from operator import attrgetter
from typing import Any

from ..core.spec import MIN_LOC_LENGTH
from ..core.urls import XML_FORBIDDEN, quote_rest
from .columns import (
    CHANGEFREQ_TYPES,
    PLAIN_PATH,
    PRIORITY_TYPES,
    not_plain,
    stored_layout,
    types_and_values,
)
from .duplicates import SeenLocs
from .entry import (
    Affixed,
    Batch,
    EntryRules,
    RawEntry,
    format_changefreq,
    format_priority,
)
from .extensions import Shape
from .xml import escape, url_element

_tzinfo = attrgetter("tzinfo")
_NAIVE: set[Any] = {None}
_IN_UTC: set[Any] = {UTC}
_TAIL_CACHE_SIZE = 256


def _changefreq_text(value: str | None) -> str:
    return "" if value is None else f"<changefreq>{format_changefreq(value)}</changefreq>"


def _priority_tail(value: object) -> str:
    return "</url>\n" if value is None else f"<priority>{format_priority(value)}</priority></url>\n"


@dataclass(frozen=True, slots=True)
class _Lastmods:
    """A batch's lastmods as written: their texts (None: no lastmods), whether only the
    first 19 characters of each are written (``YYYY-MM-DDThh:mm:ss`` of a stored text
    with a fraction), and the zone after."""

    texts: Sequence[str] | None
    seconds: bool
    zone: str


_NO_LASTMODS = _Lastmods(None, False, "")
_NONE_TYPE = {type(None)}


@dataclass(frozen=True, slots=True)
class _Locs:
    """A batch's locs, and the parts each is written in: ``before + middle + after``."""

    locs: Sequence[Any]
    before: str
    middles: Sequence[Any]
    after: str


@dataclass(frozen=True, slots=True)
class _Odd:
    """The middles in comparison form (``forms``) and as written, and the rows whose loc
    takes the loc rule."""

    forms: Sequence[Any]
    written: Sequence[Any]
    by_rule: list[int]


Tails = str | tuple[Iterable[str], Iterable[str]]
"""What follows each row's lastmod: one text for all, or changefreq and priority columns."""


def _write(root: str, column: _Locs, odd: _Odd, lastmods: _Lastmods, tails: Tails) -> list[str]:
    """The ``<url>`` elements, every loc written as a plain path (the odd ones are settled
    after)."""
    head, after, texts = f"<url><loc>{root}{column.before}", column.after, lastmods.texts
    middles = odd.written
    if isinstance(tails, str):  # one tail for every row: written with the lastmod's end
        if texts is None:
            end = f"{after}</loc>{tails}"
            return [f"{head}{middle}{end}" for middle in middles]
        mid, end = f"{after}</loc><lastmod>", f"{lastmods.zone}</lastmod>{tails}"
        if lastmods.seconds:
            return [f"{head}{m}{mid}{t[:19]}{end}" for m, t in zip(middles, texts, strict=True)]
        return [f"{head}{m}{mid}{t}{end}" for m, t in zip(middles, texts, strict=True)]
    # Each row's changefreq element and priority tail.
    changefreqs, priorities = tails
    if texts is None:
        end = f"{after}</loc>"
        rows = zip(middles, changefreqs, priorities, strict=False)
        return [f"{head}{m}{end}{c}{p}" for m, c, p in rows]
    mid, end = f"{after}</loc><lastmod>", f"{lastmods.zone}</lastmod>"
    rows4 = zip(middles, texts, changefreqs, priorities, strict=False)
    if lastmods.seconds:
        return [f"{head}{m}{mid}{t[:19]}{end}{c}{p}" for m, t, c, p in rows4]
    return [f"{head}{m}{mid}{t}{end}{c}{p}" for m, t, c, p in rows4]


class _Limits:
    """A listed_until as the fast paths compare lastmods with it: a naive UTC datetime, a day."""

    __slots__ = ("day", "listed_until", "naive")

    def __init__(self, listed_until: datetime) -> None:
        self.listed_until = listed_until
        utc = listed_until.astimezone(UTC)
        self.naive = utc.replace(tzinfo=None, microsecond=999_999)  # whole seconds count
        # A date counts from midnight UTC: it is future once that midnight is past ``listed_until``.
        self.day = utc.date()


class Renderer:
    """Renders batches for one sitemap (its site, scope and timezone rule)."""

    def __init__(self, rules: EntryRules) -> None:
        self.rules = rules
        site = rules.site
        self.root = site.base_url[:-1]  # "/path" is appended to it
        self.scope_path = site.scope[len(self.root) :]
        self.room = site.max_loc_length - len(self.root)  # the longest plain path
        self.naive_is_utc = rules.naive_timezone is UTC
        # In "\n" + the newline-joined locs: a loc that does not start with the scope or
        # starts with "//" (a single newline search, see not_plain).
        self.bad_starts = re.compile(b"\n(?:(?!" + re.escape(self.scope_path.encode()) + b")|//)")
        # (prefix, suffix) of template locs -> whether they make plain locs of plain middles.
        self._plain_affixes: dict[tuple[str, str], bool] = {}
        # "(changefreq, priority)" -> the closing part of a <url>, for values already checked.
        self._tails: dict[tuple[object, object], str] = {(None, None): "</url>\n"}
        # A changefreq -> its element, a priority -> its element and "</url>", checked already.
        self._changefreq_texts: dict[Any, str] = {None: ""}
        self._priority_tails: dict[Any, str] = {None: "</url>\n"}

    def _tail(self, changefreq: object, priority: object) -> str | None:
        if type(changefreq) not in CHANGEFREQ_TYPES or type(priority) not in PRIORITY_TYPES:
            return None
        try:
            parts = []
            if changefreq is not None:
                parts.append(f"<changefreq>{format_changefreq(changefreq)}</changefreq>")
            if priority is not None:
                parts.append(f"<priority>{format_priority(priority)}</priority>")
        except (ValueError, TypeError, ArithmeticError):
            return None  # the full rules report it
        tail = "".join(parts) + "</url>\n"
        if len(self._tails) < _TAIL_CACHE_SIZE:
            self._tails[(changefreq, priority)] = tail
        return tail

    def elements(
        self,
        source: str,
        batch: Batch,
        listed_until: datetime | None = None,
        seen: SeenLocs | None = None,
    ) -> list[str]:
        """The ``<url>`` elements of a batch, in order; bad rows follow the bad-row rule (a
        lastmod later than ``listed_until`` is a bad field), and with ``seen`` (the document's
        listed locs) so do locs listed before."""
        if not batch:
            return []
        limits = _Limits(listed_until) if listed_until is not None else None
        uniform = self._uniform(source, batch, limits, seen)
        return uniform if uniform is not None else self._rows(source, batch, limits, seen)

    def column_wise(
        self,
        source: str,
        batch: Batch,
        listed_until: datetime | None = None,
        seen: SeenLocs | None = None,
    ) -> list[str] | None:
        """:meth:`elements` of a batch of the common shape, in a few C-level passes: valid
        changefreqs and priorities (NULLs allowed), lastmods all absent, all naive datetimes
        read as UTC, or all dates, and string locs. Plain paths are written directly, other
        locs go through the rules. None when the batch has another shape."""
        limits = _Limits(listed_until) if listed_until is not None else None
        return self._uniform(source, batch, limits, seen)

    def _uniform(
        self, source: str, batch: Batch, limits: _Limits | None, seen: SeenLocs | None
    ) -> list[str] | None:
        tails = self._tail_column(batch.changefreqs, batch.priorities)
        if tails is None:
            return None
        lastmods = self._lastmod_column(batch, limits)
        if lastmods is None:
            return None
        locs = self._loc_column(batch.locs)
        if locs is None:
            return None
        odd = self._odd_locs(locs)
        out = _write(self.root, locs, odd, lastmods, tails)
        if not odd.by_rule and seen is None:
            return out
        return self._settled(source, batch, locs, odd, out, seen)

    def _lastmod_column(self, batch: Batch, limits: _Limits | None) -> _Lastmods | None:
        """The lastmods' texts, as one column: none, naive datetimes read as UTC (their
        stored text copied when its layout is proven), or dates; None for another shape or
        a lastmod past ``listed_until`` (row by row then)."""
        lastmods, count = batch.lastmods, len(batch)
        kinds = set(map(type, lastmods))  # (cheaper than comparing each with None)
        if kinds == _NONE_TYPE:
            return _NO_LASTMODS
        if kinds == {datetime}:
            return self._datetime_column(batch, limits)
        if kinds == {date}:
            if limits is not None and max(lastmods) > limits.day:
                return None
            if stored_layout(batch.lastmod_texts, count) == 10:
                assert batch.lastmod_texts is not None
                return _Lastmods(batch.lastmod_texts, False, "")  # a date's own text
            return _Lastmods(list(map(date.isoformat, lastmods)), False, "")
        return None

    def _datetime_column(self, batch: Batch, limits: _Limits | None) -> _Lastmods | None:
        """Datetimes as one column: naive ones read as UTC (their stored text copied when its
        layout is proven), or aware ones in UTC (as Django's ORM gives them); None for
        another mix or a lastmod past ``listed_until``."""
        lastmods, count = batch.lastmods, len(batch)
        layout = stored_layout(batch.lastmod_texts, count) if self.naive_is_utc else 0
        if layout in (19, 26):  # stored texts of these layouts hold no zone: naive values
            if limits is not None and max(lastmods) > limits.naive:
                return None
            assert batch.lastmod_texts is not None
            # Their one space (or "T") stands between date and time: W3C texts in C passes.
            w3c = "\n".join(batch.lastmod_texts).replace(" ", "T").split("\n")
            return _Lastmods(w3c, layout == 26, "+00:00")
        zones = set(map(_tzinfo, lastmods))
        if zones == _NAIVE and self.naive_is_utc:
            newest = max(lastmods)
        elif zones == _IN_UTC:  # an offset of zero: comparable as naive UTC values
            newest = max(lastmods).replace(tzinfo=None)
        else:
            return None
        if limits is not None and newest > limits.naive:
            return None
        texts = list(map(datetime.isoformat, lastmods))
        if max(map(len, texts)) > 19:  # fractions of a second and offsets are dropped
            texts = [text[:19] for text in texts]
        return _Lastmods(texts, False, "+00:00")

    def _loc_column(self, locs: Sequence[Any]) -> _Locs | None:
        """The locs as written in parts: template locs (a plain prefix in the scope, a plain
        suffix) as their middles; None when a loc is too long, possibly too short, or not
        a string."""
        if type(locs) is Affixed and self._affixes_plain(locs.before, locs.after):
            column = _Locs(locs, locs.before, locs.values, locs.after)
        else:
            column = _Locs(locs, "", locs, "")
        root, extra = self.root, len(column.before) + len(column.after)
        try:
            if max(map(len, column.middles)) + extra > self.rules.site.max_loc_length - len(root):
                return None
            # (The shortest loc matters only when the root and affixes are shorter.)
            if len(root) + extra < MIN_LOC_LENGTH and min(map(len, column.middles)) + extra < (
                MIN_LOC_LENGTH - len(root)
            ):
                return None
        except TypeError:  # a loc that is not a string
            return None
        return column

    def _odd_locs(self, column: _Locs) -> _Odd:
        """The locs that are not plain paths in the scope: a template middle that needs
        only percent-encoding (and entity-escaping) is encoded here; the other odd locs take
        the loc rule once their elements are written."""
        locs, middles, before, after = column.locs, column.middles, column.before, column.after
        if middles is locs:
            odd = not_plain(locs, self.bad_starts)
        else:
            joined = locs.joined if isinstance(locs, Affixed) else None
            odd = not_plain(middles, None, after[:1] == ".", joined)
        if odd is None:
            scope, plain = self.scope_path, PLAIN_PATH.fullmatch
            odd = [
                at
                for at, loc in enumerate(locs)
                if type(loc) is not str or not (plain(loc) and loc.startswith(scope))
            ]
        if not odd or middles is locs:
            return _Odd(middles, middles, odd)
        by_rule = []
        encoded: dict[int, str] = {}
        for at in odd:
            form = self._encoded_middle(before, middles[at], after)
            if form is None:
                by_rule.append(at)
            else:
                encoded[at] = form
        if not encoded:
            return _Odd(middles, middles, by_rule)
        forms, written = list(middles), list(middles)
        for at, form in encoded.items():
            forms[at], written[at] = form, escape(form)
        return _Odd(forms, written, by_rule)

    def _settled(
        self,
        source: str,
        batch: Batch,
        column: _Locs,
        odd: _Odd,
        out: list[str],
        seen: SeenLocs | None,
    ) -> list[str]:
        """The written elements once the odd locs took the loc rule and the locs the
        document listed before were dropped (each reported)."""
        root, before, after = self.root, column.before, column.after
        extra = len(before) + len(after)
        skipped = False
        checked: dict[int, str | None] = {}
        for at in odd.by_rule:
            url = checked[at] = self.rules.check_loc(source, batch.keys[at], column.locs[at])
            if url is None:
                out[at] = ""
                skipped = True
                continue
            # The element so far starts "<url><loc>{root}{loc}</loc>"; keep what follows.
            rest = out[at][len(root) + extra + len(column.middles[at]) + 16 :]
            out[at] = f"<url><loc>{escape(url)}</loc>{rest}"
        if seen is not None:
            for at in seen.repeats(odd.forms, before, after, checked):
                url = checked.get(at) or f"{root}{before}{odd.forms[at]}{after}"
                self.rules.duplicate(source, batch.keys[at], url)
                out[at] = ""
                skipped = True
        return [element for element in out if element] if skipped else out

    def _tail_column(self, changefreqs: Sequence[Any], priorities: Sequence[Any]) -> Tails | None:
        """What follows the lastmod of each row: its changefreq, priority and ``</url>``.

        One string when every row has the same pair, else each row's changefreq element
        and its priority element with ``</url>`` (two columns, read once), looked up from
        the distinct values (a few) in C-level passes. None when a value is not a ``str``
        (changefreq) or a number (priority; a bool is none), or is bad: the full rules
        report it.
        """
        try:
            changefreq_types, distinct_changefreqs = types_and_values(changefreqs)
            priority_types, distinct_priorities = types_and_values(priorities)
            if not (changefreq_types <= CHANGEFREQ_TYPES and priority_types <= PRIORITY_TYPES):
                return None
            # Equal values have equal texts (1 and 1.0 too: a bool is no priority).
            if len(distinct_changefreqs) == 1 and len(distinct_priorities) == 1:
                changefreq, priority = changefreqs[0], priorities[0]
                return self._tails.get((changefreq, priority)) or self._tail(changefreq, priority)
            changefreq_texts = self._texts(
                self._changefreq_texts, distinct_changefreqs, _changefreq_text
            )
            priority_tails = self._texts(self._priority_tails, distinct_priorities, _priority_tail)
        except (ValueError, TypeError, ArithmeticError):
            return None  # a bad value (or one that cannot be compared): the full rules report it
        return (
            map(changefreq_texts.__getitem__, changefreqs),
            map(priority_tails.__getitem__, priorities),
        )

    @staticmethod
    def _texts(
        known: dict[Any, str], distinct: set[Any], text: Callable[[Any], str]
    ) -> dict[Any, str]:
        """The texts of a column's ``distinct`` values: those known already, the others added
        (a bounded cache; past its bound, a mapping of the batch's own values). Equal values
        have equal texts (a priority's depends on ``float(value)`` alone); raises on a bad
        value."""
        if distinct <= known.keys():
            return known
        texts = known if len(known) < _TAIL_CACHE_SIZE else {}
        for value in distinct:
            if value not in texts:
                texts[value] = text(value)
        return texts

    def _encoded_middle(self, before: str, middle: str, after: str) -> str | None:
        """What the loc rule makes of ``middle`` in ``before + middle + after`` (plain
        affixes in the scope), when it needs only percent-encoding: no ``%`` (kept
        escapes), ``?`` or ``#`` (query, fragment), ``.`` (dot segments; nor a final ``/``
        before a suffix that starts with a dot) or character XML forbids. The rule then
        encodes the middle alone, as it stands, the result stays in the scope, and it is in
        comparison form (uppercase escapes of reserved bytes only). None: the rule decides.
        """
        if (
            "%" in middle
            or "." in middle
            or (middle[-1:] == "/" and after[:1] == ".")
            or "?" in middle
            or "#" in middle
            or XML_FORBIDDEN.search(middle) is not None
        ):
            return None
        try:
            form = quote_rest(middle)
        except UnicodeEncodeError:
            return None
        length = len(self.root) + len(before) + len(form) + len(after)
        if not MIN_LOC_LENGTH <= length <= self.rules.site.max_loc_length:
            return None
        return form

    def _affixes_plain(self, before: str, after: str) -> bool:
        """Whether ``before + middle + after`` is a plain path in the scope for every
        plain ``middle``: ``before`` starts with the scope and a non-slash character,
        and both are plain."""
        known = self._plain_affixes.get((before, after))
        if known is None:
            known = bool(
                len(before) >= 2
                and before.startswith(self.scope_path)
                and PLAIN_PATH.fullmatch(before + after)
            )
            if len(self._plain_affixes) < _TAIL_CACHE_SIZE:
                self._plain_affixes[(before, after)] = known
        return known

    def _checked(
        self, source: str, raw: RawEntry, listed_until: datetime | None, seen: SeenLocs | None
    ) -> str:
        """One row through the full rules; ``""`` when it is skipped."""
        url = self.rules.check(source, raw, listed_until, None if seen is None else seen.first_url)
        return "" if url is None else url_element(url)

    def _rows(
        self, source: str, batch: Batch, limits: _Limits | None, seen: SeenLocs | None
    ) -> list[str]:
        """Row by row: a fast path per row, the full rules for the rest."""
        root, scope_path, plain = self.root, self.scope_path, PLAIN_PATH.fullmatch
        room = self.room
        listed_until = latest = last_day = None
        if limits is not None:
            listed_until, latest, last_day = limits.listed_until, limits.naive, limits.day
        shortest = MIN_LOC_LENGTH - len(root)
        naive_is_utc, tails = self.naive_is_utc, self._tails
        out: list[str] = []
        for raw in batch.rows():
            key, loc, lastmod, changefreq, priority = raw
            recorded = False  # whether ``seen`` has this row's loc already
            if (
                type(loc) is str
                and shortest <= len(loc) <= room
                and loc.startswith(scope_path)
                and plain(loc)
            ):
                # A plain path is its own comparison form, and the rules give it root + loc.
                if seen is not None:
                    if not seen.first_path(loc):
                        self.rules.duplicate(source, key, root + loc)
                        continue
                    recorded = True
                try:
                    # True == 1.0 would find 1.0's tail, but a bool is not a priority.
                    tail = None if type(priority) is bool else tails.get((changefreq, priority))
                except TypeError:  # unhashable field: the full rules report it
                    tail = None
                if tail is None:
                    tail = self._tail(changefreq, priority)
                if tail is not None:
                    if lastmod is None:
                        out.append(f"<url><loc>{root}{loc}</loc>{tail}")
                        continue
                    kind = type(lastmod)
                    zone = lastmod.tzinfo if kind is datetime else None
                    if (
                        kind is datetime
                        # Naive ones read as UTC, or aware ones in UTC (as Django's ORM gives).
                        and ((zone is None and naive_is_utc) or zone is UTC)
                        and (latest is None or lastmod.replace(tzinfo=None) <= latest)
                    ):
                        text = lastmod.isoformat()
                        out.append(
                            f"<url><loc>{root}{loc}</loc><lastmod>{text[:19]}+00:00</lastmod>{tail}"
                        )
                        continue
                    if kind is date and (last_day is None or lastmod <= last_day):
                        out.append(
                            f"<url><loc>{root}{loc}</loc><lastmod>{lastmod.isoformat()}</lastmod>{tail}"
                        )
                        continue
            element = self._checked(source, raw, listed_until, None if recorded else seen)
            if element:
                out.append(element)
        return out

    def extended(
        self,
        source: str,
        batch: Batch,
        shape: Shape,
        news_cutoff: datetime | None,
        listed_until: datetime | None = None,
        seen: SeenLocs | None = None,
    ) -> list[str]:
        """The ``<url>`` elements of a batch whose rows carry extensions (full rules per row)."""
        extras = batch.extras
        assert extras is not None
        out = []
        for raw, extensions in zip(batch.rows(), extras, strict=True):
            url = self.rules.check(
                source, raw, listed_until, None if seen is None else seen.first_url
            )
            if url is None:
                continue
            if extensions is not None:
                url = self.rules.extend(source, raw[0], url, extensions, shape, news_cutoff)
            out.append(url_element(url))
        return out
