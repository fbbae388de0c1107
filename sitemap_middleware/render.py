"""The hot path: a batch of raw entries to ``<url>`` elements.

The common row (a plain ASCII path, a naive UTC ``datetime`` or a ``date``,
a changefreq/priority seen before) is written directly; anything else goes
through the full rules in :mod:`sitemap_middleware.entry` and
:func:`~sitemap_middleware.xml.url_element`. Both paths give the same bytes
(the tests compare them). Given the document's :class:`SeenLocs`, every path
drops the rows whose loc the document already lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import compress, repeat
from operator import attrgetter
from typing import Any

from .duplicates import SeenLocs
from .entry import (
    Affixed,
    Batch,
    EntryRules,
    RawEntry,
    Repeated,
    format_changefreq,
    format_priority,
)
from .extensions import Shape
from .protocol import MIN_LOC_LENGTH
from .urls import XML_FORBIDDEN, quote_rest
from .xml import escape, url_element

# A path that needs neither percent-encoding nor entity-escaping, is not "//host" and has
# no segment starting with a dot (".." is a bad row: the rules say so).
_SEGMENT = r"[A-Za-z0-9\-_~][A-Za-z0-9\-._~]*"
_PLAIN_PATH = re.compile(rf"/(?:{_SEGMENT}(?:/(?:{_SEGMENT})?)*)?")
# The bytes of plain paths.
_PLAIN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/"
# Where the separators stand in each stored layout (its width): the date's dashes, the
# time's colons, the fraction's dot (and at 10 a space or a "T", checked apart).
_DATE_SEPARATORS = ((4, b"-"), (7, b"-"))
_TIME_SEPARATORS = (*_DATE_SEPARATORS, (13, b":"), (16, b":"))
_LAYOUTS: dict[int, tuple[tuple[int, bytes], ...]] = {
    10: _DATE_SEPARATORS,
    19: _TIME_SEPARATORS,
    26: (*_TIME_SEPARATORS, (19, b".")),
}
_TWENTIES = bytes.maketrans(b"0123456789", b"\0\0\1\0\0\0\0\0\0\0")  # hour tens "2"
_FOUR_UP = bytes.maketrans(b"0123456789", b"\0\0\0\0\1\1\1\1\1\1")  # hour units 4-9
_tzinfo = attrgetter("tzinfo")
# The types a changefreq and a priority column may hold on the column-wise path (a bool is
# no priority; a str subclass or another number type takes the full rules).
_CHANGEFREQ_TYPES = frozenset({str, type(None)})
_PRIORITY_TYPES = frozenset({float, int, Decimal, type(None)})
_HASHABLE_TYPES = _CHANGEFREQ_TYPES | _PRIORITY_TYPES
_TAIL_CACHE_SIZE = 256


def _changefreq_text(value: str | None) -> str:
    return "" if value is None else f"<changefreq>{format_changefreq(value)}</changefreq>"


def _priority_tail(value: object) -> str:
    return "</url>\n" if value is None else f"<priority>{format_priority(value)}</priority></url>\n"


def not_plain(
    locs: Sequence[Any],
    starts: re.Pattern[bytes] | None,
    dotted_suffix: bool = False,
    joined: str | None = None,
) -> list[int] | None:
    """The positions of the locs that are not plain paths in the scope, column-wise.

    The same verdict as ``_PLAIN_PATH.fullmatch(loc) and loc.startswith(scope)``
    per loc, from a few C-level passes over the joined column (``starts`` finds
    a loc that does not start with the scope or starts with ``//``; None when
    the column holds the middle parts of locs whose start is known to be
    plain, and then only their characters count; ``dotted_suffix``: their
    suffix starts with a dot, so a middle ending in ``/`` may make it a dot
    segment; ``joined``: ``"\n".join(locs)`` when the caller has it); None when that
    cannot be
    told cheaply (a loc that is not a string, holds a newline or a lone
    surrogate, or a bad start), and the caller checks each loc instead.
    """
    try:
        data = ("\n".join(locs) if joined is None else joined).encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return None
    count = len(locs)
    if starts is not None and starts.search(b"\n" + data):
        return None
    if b"." in data and (b"/." in data or b"\n." in data or data[:1] == b"."):
        return None  # a segment may start with a dot ("..") or a middle be one: check each
    if dotted_suffix and (b"/\n" in data or data[-1:] == b"/"):
        return None  # the suffix after a "/" may be a dot segment: check each
    # The odd bytes, row by row: each row's odd bytes between the newlines that join them.
    odd = data.translate(None, _PLAIN_BYTES)
    if len(odd) == count - 1:
        return []  # the joining newlines alone
    rows = odd.split(b"\n")
    if len(rows) != count:
        return None  # a loc holds a newline
    return list(compress(range(count), rows))


def _types_and_values(column: Sequence[Any]) -> tuple[set[type], set[Any]]:
    """The types of a column's values and its distinct values (a :class:`Repeated` column
    tells them at once); raises ``TypeError`` for an unhashable value."""
    if type(column) is Repeated:
        return {type(column.value)}, {column.value}
    types = set(map(type, column))
    if not types <= _HASHABLE_TYPES:
        return types, set()  # not a valid column: no distinct values needed
    return types, set(column)


def stored_layout(texts: Sequence[Any] | None, count: int) -> int:
    """Whether the digits of stored lastmods can be copied: 10, 19 or 26 (their one
    length), or 0.

    ``texts`` are the strings ``datetime.fromisoformat`` (or ``date.fromisoformat``)
    turned into the lastmods, so their digits already make a valid date and time.
    This proves, column-wise, that every one is exactly ``YYYY-MM-DD`` (10), or
    ``YYYY-MM-DD hh:mm:ss`` with a space or a ``T`` (19), or that and
    ``.ffffff`` (26): ASCII digits everywhere else, no zone, and no hour 24
    (which some Pythons read as the next midnight). Then the W3C text is
    ``text[:10]`` (a date) or ``text[:10] + "T" + text[11:19]`` (the same as
    ``value.isoformat(timespec="seconds")``).
    """
    if texts is None or count == 0:
        return 0
    try:
        # Newline-joined: a newline at every width + 1 characters, and nowhere else, proves
        # that every text is as long as the first.
        data = "\n".join(texts).encode("ascii")
        width = len(texts[0])
    except (TypeError, UnicodeEncodeError):
        return 0
    stride = width + 1
    if width not in _LAYOUTS or len(data) != stride * count - 1:
        return 0
    # Digits and separators only, and each separator where the layout has one.
    separators = data.translate(None, b"0123456789")
    if separators.translate(None, b"-:. T\n"):
        return 0
    if data[width::stride] != b"\n" * (count - 1):
        return 0
    for position, separator in _LAYOUTS[width]:
        if data[position::stride] != separator * count:
            return 0
    expected = (len(_LAYOUTS[width]) + 1) * count - 1
    if width > 10:
        between = data[10::stride]
        if between != b" " * count and between != b"T" * count:
            return 0
        expected += count
    if len(separators) != expected:  # no separator elsewhere: digits everywhere else
        return 0
    if width > 10:
        hours = int.from_bytes(data[11::stride].translate(_TWENTIES), "big")
        if hours & int.from_bytes(data[12::stride].translate(_FOUR_UP), "big"):
            return 0  # an hour from 24 up
    return width


class _Limits:
    """A horizon as the fast paths compare lastmods with it: a naive UTC datetime, a day."""

    __slots__ = ("day", "horizon", "naive")

    def __init__(self, horizon: datetime) -> None:
        self.horizon = horizon
        utc = horizon.astimezone(UTC)
        self.naive = utc.replace(tzinfo=None, microsecond=999_999)  # whole seconds count
        # A date counts from midnight UTC: it is future once that midnight is past the horizon.
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
        self._bad_starts = re.compile(b"\n(?:(?!" + re.escape(self.scope_path.encode()) + b")|//)")
        # (prefix, suffix) of template locs -> whether they make plain locs of plain middles.
        self._plain_affixes: dict[tuple[str, str], bool] = {}
        # "(changefreq, priority)" -> the closing part of a <url>, for values already checked.
        self._tails: dict[tuple[object, object], str] = {(None, None): "</url>\n"}
        # A changefreq -> its element, a priority -> its element and "</url>", checked already.
        self._changefreq_texts: dict[Any, str] = {None: ""}
        self._priority_tails: dict[Any, str] = {None: "</url>\n"}

    def _tail(self, changefreq: object, priority: object) -> str | None:
        if type(changefreq) not in _CHANGEFREQ_TYPES or type(priority) not in _PRIORITY_TYPES:
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
        horizon: datetime | None = None,
        seen: SeenLocs | None = None,
    ) -> list[str]:
        """The ``<url>`` elements of a batch, in order; bad rows follow the bad-row rule (a
        lastmod later than ``horizon`` is a bad field), and with ``seen`` (the document's
        listed locs) so do locs listed before."""
        if not batch:
            return []
        limits = _Limits(horizon) if horizon is not None else None
        uniform = self._uniform(source, batch, limits, seen)
        return uniform if uniform is not None else self._rows(source, batch, limits, seen)

    def _uniform(
        self, source: str, batch: Batch, limits: _Limits | None, seen: SeenLocs | None
    ) -> list[str] | None:
        """A batch of the common shape in a few C-level passes: valid changefreqs and
        priorities (NULLs allowed), lastmods all absent, all naive datetimes read as UTC, or
        all dates, and string locs. Plain paths are written directly, other locs go through
        the rules. None when the batch has another shape."""
        count = len(batch)
        locs, lastmods = batch.locs, batch.lastmods
        tails = self._tail_column(batch.changefreqs, batch.priorities)
        if tails is None:
            return None
        # One tail for every row is written with the lastmod's end; else each row's
        # changefreq element and priority tail.
        tail, changefreq_texts, priority_tails = (
            (tails, repeat(""), repeat("")) if type(tails) is str else ("", *tails)
        )
        texts: Sequence[str] | None = None
        layout = 0
        if lastmods.count(None) != count:
            kinds = set(map(type, lastmods))
            if kinds == {datetime} and self.naive_is_utc:
                # Stored texts of these layouts hold no zone: their values are naive.
                layout = stored_layout(batch.lastmod_texts, count)
                if layout not in (19, 26):
                    layout = 0
                    if list(map(_tzinfo, lastmods)).count(None) != count:
                        return None
                if limits is not None and max(lastmods) > limits.naive:
                    return None  # a future lastmod: row by row
                if layout:
                    texts = batch.lastmod_texts
                else:
                    texts = list(map(datetime.isoformat, lastmods))
                    if max(map(len, texts)) > 19:  # fractions of a second are dropped
                        texts = [text[:19] for text in texts]
                tail = "</lastmod>" + tail
                zone = "+00:00"
            elif kinds == {date}:
                if limits is not None and max(lastmods) > limits.day:
                    return None
                if stored_layout(batch.lastmod_texts, count) == 10:
                    texts = batch.lastmod_texts  # "YYYY-MM-DD" is the date's own text
                else:
                    texts = list(map(date.isoformat, lastmods))
                tail = "</lastmod>" + tail
                zone = ""
            else:
                return None
        # Template locs (a plain prefix in the scope, a plain suffix) are written in parts.
        before = after = ""
        middles: Sequence[Any] = locs
        if type(locs) is Affixed and self._affixes_plain(locs.before, locs.after):
            before, middles, after = locs.before, locs.values, locs.after
        root = self.root
        extra = len(before) + len(after)
        try:
            if max(map(len, middles)) + extra > self.rules.site.max_loc_length - len(root):
                return None
            # (The shortest loc matters only when the root and affixes are shorter.)
            if len(root) + extra < MIN_LOC_LENGTH and min(map(len, middles)) + extra < (
                MIN_LOC_LENGTH - len(root)
            ):
                return None
        except TypeError:  # a loc that is not a string
            return None
        odd = (
            not_plain(locs, self._bad_starts)
            if middles is locs
            else not_plain(
                middles, None, after[:1] == ".", locs.joined if isinstance(locs, Affixed) else None
            )
        )
        if odd is None:
            scope, plain = self.scope_path, _PLAIN_PATH.fullmatch
            odd = [
                at
                for at, loc in enumerate(locs)
                if type(loc) is not str or not (plain(loc) and loc.startswith(scope))
            ]
        # The middles in comparison form (``forms``) and as written: a template middle that
        # needs only percent-encoding (and entity-escaping) is encoded here; the other odd
        # locs take the loc rule once their elements are written.
        forms: Sequence[Any] = middles
        written: Sequence[Any] = middles
        by_rule = odd
        if odd and middles is not locs:
            by_rule = []
            encoded: dict[int, str] = {}
            for at in odd:
                form = self._encoded_middle(before, middles[at], after)
                if form is None:
                    by_rule.append(at)
                else:
                    encoded[at] = form
            if encoded:
                forms, written = list(middles), list(middles)
                for at, form in encoded.items():
                    forms[at], written[at] = form, escape(form)
        head = f"<url><loc>{root}{before}"
        if texts is None:
            end = f"{after}</loc>{tail}"
            out = [
                f"{head}{middle}{end}{c}{p}"
                for middle, c, p in zip(written, changefreq_texts, priority_tails, strict=False)
            ]
        elif not layout:
            mid, end = f"{after}</loc><lastmod>", zone + tail
            out = [
                f"{head}{middle}{mid}{text}{end}{c}{p}"
                for middle, text, c, p in zip(
                    written, texts, changefreq_texts, priority_tails, strict=False
                )
            ]
        else:  # "YYYY-MM-DD hh:mm:ss.ffffff" as stored: copy the digits
            mid, end = f"{after}</loc><lastmod>", "+00:00" + tail
            out = [
                f"{head}{middle}{mid}{text[:10]}T{text[11:19]}{end}{c}{p}"
                for middle, text, c, p in zip(
                    written, texts, changefreq_texts, priority_tails, strict=False
                )
            ]
        if not by_rule and seen is None:
            return out
        skipped = False
        checked: dict[int, str | None] = {}
        for at in by_rule:
            url = checked[at] = self.rules.check_loc(source, batch.keys[at], locs[at])
            if url is None:
                out[at] = ""
                skipped = True
                continue
            # The element so far starts "<url><loc>{root}{loc}</loc>"; keep what follows.
            rest = out[at][len(root) + extra + len(middles[at]) + 16 :]
            out[at] = f"<url><loc>{escape(url)}</loc>{rest}"
        if seen is not None:
            for at in seen.repeats(forms, before, after, checked):
                url = checked.get(at) or f"{root}{before}{forms[at]}{after}"
                self.rules.duplicate(source, batch.keys[at], url)
                out[at] = ""
                skipped = True
        return [element for element in out if element] if skipped else out

    def _tail_column(
        self, changefreqs: Sequence[Any], priorities: Sequence[Any]
    ) -> str | tuple[Iterable[str], Iterable[str]] | None:
        """What follows the lastmod of each row: its changefreq, priority and ``</url>``.

        One string when every row has the same pair, else each row's changefreq element
        and its priority element with ``</url>`` (two columns, read once), looked up from
        the distinct values (a few) in C-level passes. None when a value is not a ``str``
        (changefreq) or a number (priority; a bool is none), or is bad: the full rules
        report it.
        """
        try:
            changefreq_types, distinct_changefreqs = _types_and_values(changefreqs)
            priority_types, distinct_priorities = _types_and_values(priorities)
            if not (changefreq_types <= _CHANGEFREQ_TYPES and priority_types <= _PRIORITY_TYPES):
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
                and _PLAIN_PATH.fullmatch(before + after)
            )
            if len(self._plain_affixes) < _TAIL_CACHE_SIZE:
                self._plain_affixes[(before, after)] = known
        return known

    def _checked(
        self, source: str, raw: RawEntry, horizon: datetime | None, seen: SeenLocs | None
    ) -> str:
        """One row through the full rules; ``""`` when it is skipped."""
        url = self.rules.check(source, raw, horizon, None if seen is None else seen.first_url)
        return "" if url is None else url_element(url)

    def _rows(
        self, source: str, batch: Batch, limits: _Limits | None, seen: SeenLocs | None
    ) -> list[str]:
        """Row by row: a fast path per row, the full rules for the rest."""
        root, scope_path, plain = self.root, self.scope_path, _PLAIN_PATH.fullmatch
        room = self.room
        horizon = latest = last_day = None
        if limits is not None:
            horizon, latest, last_day = limits.horizon, limits.naive, limits.day
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
            element = self._checked(source, raw, horizon, None if recorded else seen)
            if element:
                out.append(element)
        return out

    def extended(
        self,
        source: str,
        batch: Batch,
        shape: Shape,
        news_cutoff: datetime | None,
        horizon: datetime | None = None,
        seen: SeenLocs | None = None,
    ) -> list[str]:
        """The ``<url>`` elements of a batch whose rows carry extensions (full rules per row)."""
        extras = batch.extras
        assert extras is not None
        out = []
        for raw, extensions in zip(batch.rows(), extras, strict=True):
            url = self.rules.check(source, raw, horizon, None if seen is None else seen.first_url)
            if url is None:
                continue
            if extensions is not None:
                url = self.rules.extend(source, raw[0], url, extensions, shape, news_cutoff)
            out.append(url_element(url))
        return out
