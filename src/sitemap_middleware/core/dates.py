"""``lastmod`` values: what a source may give, and the one form the official XSD accepts.

Accepted: ``date``, aware ``datetime`` (its offset is kept), naive ``datetime``
(read in the configured ``naive_timezone``, UTC by default) and W3C Datetime
strings. Written as ``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ss±hh:mm``: both are
valid W3C Datetime *and* valid for ``xsd:date | xsd:dateTime`` (year-only,
month-only and no-seconds forms are valid W3C but fail the XSD). Fractions of a
second are dropped.

:func:`parse_w3c` is the one reader of W3C Datetime text: the writer reads a
source's strings with it, ``sitemap-middleware check`` a served document's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo

# A source's string may leave out the zone of a time: it is read in naive_timezone.
from .spec import W3C_DATETIME_ZONE_OPTIONAL as _W3C
from .spec import XML_WHITESPACE
from .spec import XSD_MAX_OFFSET as _MAX_OFFSET


@dataclass(frozen=True, slots=True)
class AsOf:
    """How a read takes its lastmods: a naive one in ``naive_timezone``, and one later than
    ``listed_until`` (now + ``lastmods.tolerance``) not listed yet: a future, bad field.

    One value travels with every read (summaries, pages, changes) instead of the pair.
    """

    naive_timezone: tzinfo
    listed_until: datetime

    @classmethod
    def at(cls, now: datetime, naive_timezone: tzinfo = UTC, tolerance: float = 60) -> AsOf:
        """As of ``now``: ``listed_until`` in whole seconds, so that replicas reading the
        clock in the same second agree."""
        moment = now.astimezone(UTC).replace(microsecond=0) + timedelta(seconds=tolerance)
        return cls(naive_timezone, moment)

    @classmethod
    def now(cls, naive_timezone: tzinfo = UTC, tolerance: float = 60) -> AsOf:
        """As of the clock's now (a caller outside a request: the command line, a test)."""
        return cls.at(datetime.now(UTC), naive_timezone, tolerance)


class LastmodError(ValueError):
    """A lastmod value that cannot be written; the message says why."""


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A stored lastmod that the column type's own conversion rejects.

    SQLite keeps dates as text, and any text can be stored: ``'2024-02-30'``,
    ``'soon'``, a number. A source that reads the text itself passes such a
    value on as ``Unreadable`` so that the bad-row rule drops the field (and
    reports it) instead of the whole response failing.
    """

    value: object
    reason: str


def parse_w3c(
    text: str, naive_timezone: tzinfo | None, *, partial: bool = False
) -> date | datetime:
    """The moment a W3C Datetime (https://www.w3.org/TR/NOTE-datetime) names; raises
    ``LastmodError`` for any other text.

    The note's six forms: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, then a time
    ``Thh:mm``, ``Thh:mm:ss`` or ``Thh:mm:ss.s`` with its zone designator (``Z``,
    ``+hh:mm``, ``-hh:mm``; hours of offset 00-23). ASCII digits only; hours end at 23,
    seconds at 59 (no leap second), years run 0001-9999 (as Python's dates); fractions
    of a second are dropped. XML whitespace around the text is ignored. Two choices
    differ by reader:

    * ``naive_timezone``: a time without a zone (not W3C, though ``xsd:dateTime``
      takes it) is read in this zone; ``None`` refuses it.
    * ``partial``: ``YYYY`` and ``YYYY-MM`` (W3C, not ``xsd:date``) give their first
      day; without it they are refused, since writing them would invent a day.
    """
    # XML's whitespace is trimmed (a source's string too); anything else around a date, a
    # no-break space, a vertical tab, is not W3C Datetime.
    stripped = text.strip(XML_WHITESPACE)
    m = _W3C.fullmatch(stripped)
    if m is None:
        raise LastmodError(f"lastmod {text[:40]!r} is not a W3C Datetime")
    year, month, day, hour, minute, second, tzd = m.groups()
    if day is None and not partial:
        # Valid W3C, but the XSD rejects it and widening it would invent a date.
        raise LastmodError(f"lastmod {text!r} has no day; give at least YYYY-MM-DD")
    if tzd is not None and hour < "24":
        # The grammar is proven: the C parser builds the moment (and checks the ranges;
        # hour 24 is kept from it, since some versions read 24:00 as the next midnight).
        try:
            return datetime.fromisoformat(stripped).replace(microsecond=0)
        except ValueError:
            pass  # out of range: the message below names why
    try:
        if hour is None:
            return date(int(year), int(month or 1), int(day or 1))
        tz: tzinfo
        if tzd is None:
            if naive_timezone is None:
                raise LastmodError(f"lastmod {text!r} has a time without its time zone")
            tz = naive_timezone
        elif tzd == "Z":
            tz = UTC
        else:
            sign = -1 if tzd[0] == "-" else 1
            offset = timedelta(hours=int(tzd[1:3]), minutes=int(tzd[4:6]))
            tz = timezone(sign * offset)
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0), tzinfo=tz
        )
    except ValueError as exc:
        raise LastmodError(f"lastmod {text!r} is not a valid date: {exc}") from None


def format_lastmod(value: object, naive_timezone: tzinfo) -> str:
    """The XSD-valid text for a lastmod value; raises ``LastmodError``."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            if naive_timezone is UTC:
                return value.isoformat(timespec="seconds") + "+00:00"
            value = value.replace(tzinfo=naive_timezone)
        offset = value.utcoffset()
        if offset is None:
            raise LastmodError("lastmod has a tzinfo that gives no UTC offset")
        if offset.seconds % 60 or offset.microseconds or abs(offset) > _MAX_OFFSET:
            # Sub-minute offsets (historic LMT zones) have no W3C form, and the XSD
            # refuses offsets past 14 hours: write the moment in UTC.
            try:
                value = value.astimezone(UTC)
            except OverflowError:
                raise LastmodError(f"lastmod {value} has no UTC form in years 1-9999") from None
        return value.isoformat(timespec="seconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return format_lastmod(parse_w3c(value, naive_timezone), naive_timezone)
    if isinstance(value, Unreadable):
        raise LastmodError(f"stored lastmod {value.value!r:.60} cannot be read: {value.reason}")
    raise LastmodError(
        f"lastmod must be a date, datetime or W3C string, not {type(value).__name__}"
    )


def to_utc(value: object, naive_timezone: tzinfo) -> datetime | None:
    """A lastmod value as an aware UTC datetime (dates count from midnight); None if unusable."""
    try:
        if isinstance(value, str):
            value = parse_w3c(value, naive_timezone)
    except LastmodError:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=naive_timezone)
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            return None
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return None


def later_than(moment: date | datetime, listed_until: datetime, day_starts: tzinfo = UTC) -> bool:
    """Whether a lastmod names a moment after ``listed_until``: an aware datetime by its whole
    second (fractions are not written), a date from its midnight in ``day_starts``.

    Compared without a conversion to UTC, which a moment near the ends of the calendar
    (``9999-12-31T23:00:00-05:00``) does not have.
    """
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day, tzinfo=day_starts)
    elif moment.microsecond:
        moment = moment.replace(microsecond=0)
    return moment > listed_until


def check_not_future(value: object, naive_timezone: tzinfo, listed_until: datetime) -> None:
    """Raise ``LastmodError`` for a lastmod later than ``listed_until`` (now + the tolerance):
    no sitemap may claim a change that has not happened yet (``9999-12-31``). A date
    counts from midnight UTC."""
    moment = parse_w3c(value, naive_timezone) if isinstance(value, str) else value
    if isinstance(moment, datetime) and moment.tzinfo is None:
        moment = moment.replace(tzinfo=naive_timezone)
    if isinstance(moment, date) and later_than(moment, listed_until):
        raise LastmodError(
            f"lastmod {format_lastmod(value, naive_timezone)} is in the future "
            "(later than now + lastmods.tolerance)"
        )


def iso(moment: date | None) -> str:
    """A moment as a summary's token writes it (empty for none)."""
    return moment.isoformat() if moment is not None else ""
