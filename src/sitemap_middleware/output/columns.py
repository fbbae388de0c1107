"""Column-wise proofs for the renderer's fast path: a whole column of locs or stored
lastmods checked in a few C-level passes over its joined bytes, with the same verdict as
checking each value (the tests compare both)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from itertools import compress
from typing import Any

from .entry import Repeated

# A path that needs neither percent-encoding nor entity-escaping, is not "//host" and has
# no segment starting with a dot (".." is a bad row: the rules say so).
_SEGMENT = r"[A-Za-z0-9\-_~][A-Za-z0-9\-._~]*"
PLAIN_PATH = re.compile(rf"/(?:{_SEGMENT}(?:/(?:{_SEGMENT})?)*)?")
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
# The types a changefreq and a priority column may hold on the column-wise path (a bool is
# no priority; a str subclass or another number type takes the full rules).
CHANGEFREQ_TYPES = frozenset({str, type(None)})
PRIORITY_TYPES = frozenset({float, int, Decimal, type(None)})
_HASHABLE_TYPES = CHANGEFREQ_TYPES | PRIORITY_TYPES


def not_plain(
    locs: Sequence[Any],
    starts: re.Pattern[bytes] | None,
    dotted_suffix: bool = False,
    joined: str | None = None,
) -> list[int] | None:
    """The positions of the locs that are not plain paths in the scope, column-wise.

    The same verdict as ``PLAIN_PATH.fullmatch(loc) and loc.startswith(scope)``
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


def types_and_values(column: Sequence[Any]) -> tuple[set[type], set[Any]]:
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
