"""One reader of W3C Datetime (``core.dates.parse_w3c``) for the writer and for ``check``.

The writer reads a source's strings (``parse_w3c(text, naive_timezone)``): a time without
a zone is read in ``naive_timezone``, and a year or a month alone is refused (writing it
would invent a day). ``check`` reads served documents (``parse_w3c(text, None,
partial=True)``): a zoneless time is not W3C Datetime, and a year or a month is, though the
XSD refuses it. Everything else is one grammar; the table holds the cases where the two
readers once differed, and what ``check`` reports for each.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.cli.audit_rules import lastmod_stats
from sitemap_middleware.cli.values import lastmod_problems
from sitemap_middleware.core.dates import LastmodError, check_not_future, later_than, parse_w3c

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)
REFUSED = None
W3C_NOT_XSD = "lastmod is W3C Datetime but not an xsd:date/xsd:dateTime"
NOT_XSD = "lastmod is not a date or date-time the XSD accepts"
NOT_W3C = "lastmod is accepted by the XSD but is not W3C Datetime"


def _zone(hours: int, minutes: int = 0) -> timezone:
    sign = -1 if hours < 0 else 1
    return timezone(sign * timedelta(hours=abs(hours), minutes=minutes))


def _writer(text: str) -> date | None:
    try:
        return parse_w3c(text, UTC)
    except LastmodError:
        return None


def _reader(text: str) -> date | None:
    try:
        return parse_w3c(text, None, partial=True)
    except LastmodError:
        return None


# text, the writer's reading, check's reading, check's finding (a message's start) or None.
DIFFERENCES = [
    # W3C's year and year-month forms: the reader takes their first day, the writer no day.
    ("2024", REFUSED, date(2024, 1, 1), W3C_NOT_XSD),
    ("2024-05", REFUSED, date(2024, 5, 1), W3C_NOT_XSD),
    # A time needs its zone in W3C Datetime; a source's naive time is read in naive_timezone.
    ("2024-05-06T07:08:09", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), REFUSED, NOT_W3C),
    ("2024-05-06T07:08", datetime(2024, 5, 6, 7, 8, tzinfo=UTC), REFUSED, NOT_XSD),
    # Zones past 14 hours are W3C (hours of offset run to 23); the XSD stops at 14:00.
    (
        "2024-05-06T07:08:09+14:01",
        datetime(2024, 5, 6, 7, 8, 9, tzinfo=_zone(14, 1)),
        datetime(2024, 5, 6, 7, 8, 9, tzinfo=_zone(14, 1)),
        NOT_XSD,
    ),
    (
        "2024-05-06T07:08:09-23:59",
        datetime(2024, 5, 6, 7, 8, 9, tzinfo=_zone(-23, 59)),
        datetime(2024, 5, 6, 7, 8, 9, tzinfo=_zone(-23, 59)),
        NOT_XSD,
    ),
    # Only XML's whitespace surrounds a value; a no-break space or a vertical tab does not.
    ("\u00a02024-05-06", REFUSED, REFUSED, NOT_XSD),
    ("2024-05-06\x0b", REFUSED, REFUSED, NOT_XSD),
    ("2024-05-06\u2003", REFUSED, REFUSED, NOT_XSD),
    (" \t2024-05-06\r\n", date(2024, 5, 6), date(2024, 5, 6), None),
]

# Where the two always agreed: one grammar, one table.
AGREEMENTS = [
    ("2024-05-06", date(2024, 5, 6), None),
    ("2024-05-06T07:08Z", datetime(2024, 5, 6, 7, 8, tzinfo=UTC), W3C_NOT_XSD),
    ("2024-05-06T07:08:09Z", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), None),
    ("2024-05-06T07:08:09-00:00", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), None),
    ("2024-05-06T07:08:09.987654321+14:00", datetime(2024, 5, 6, 7, 8, 9, tzinfo=_zone(14)), None),
    ("2024-05-06T24:00:00Z", REFUSED, NOT_W3C),  # hours end at 23 (the XSD takes 24:00:00)
    ("2016-12-31T23:59:60Z", REFUSED, NOT_XSD),  # no leap second
    ("2024-05-06T07:08:09+24:00", REFUSED, NOT_XSD),
    ("2024-02-30", REFUSED, NOT_XSD),
    ("0000-01-01", REFUSED, NOT_XSD),
    ("10000-01-01", REFUSED, NOT_W3C),  # four-digit years; the XSD takes more
    ("2024-05-06Z", REFUSED, NOT_W3C),  # a date takes no zone; the XSD's may
    ("2024-05-06t07:08:09z", REFUSED, NOT_XSD),
    ("2024-05-06T07:08:09,5Z", REFUSED, NOT_XSD),
    ("2024-05-06T07Z", REFUSED, NOT_XSD),
    ("\u0662\u0660\u0662\u0664-05-06", REFUSED, NOT_XSD),  # Arabic-Indic digits
]


def _finding(text: str) -> str | None:
    problems = lastmod_problems(text, NOW)
    assert len(problems) <= 1
    return problems[0][1] if problems else None


@pytest.mark.parametrize(("text", "writer", "reader", "finding"), DIFFERENCES)
def test_the_readers_differ_only_by_their_options(
    text: str, writer: date | None, reader: date | None, finding: str | None
) -> None:
    assert _writer(text) == writer
    assert _reader(text) == reader
    got = _finding(text)
    assert (got is None) if finding is None else (got is not None and got.startswith(finding))


@pytest.mark.parametrize(("text", "moment", "finding"), AGREEMENTS)
def test_one_grammar(text: str, moment: date | None, finding: str | None) -> None:
    assert _writer(text) == moment
    assert _reader(text) == moment
    if moment is not None:  # the same instant, in the same zone
        assert repr(_writer(text)) == repr(_reader(text))
    got = _finding(text)
    assert (got is None) if finding is None else (got is not None and got.startswith(finding))


_MOMENTS = st.datetimes(
    timezones=st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
)


@given(_MOMENTS, st.sampled_from(["minutes", "seconds", "fraction"]))
def test_zoned_times_read_alike(moment: datetime, form: str) -> None:
    offset = moment.utcoffset()
    assert offset is not None
    minutes = int(offset.total_seconds()) // 60
    zone = "Z" if not minutes else f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:"
    zone += "" if zone == "Z" else f"{abs(minutes) % 60:02d}"
    text = moment.strftime("%Y-%m-%dT%H:%M")
    expect = moment.replace(second=0, microsecond=0)
    if form != "minutes":
        text += moment.strftime(":%S") + (moment.strftime(".%f") if form == "fraction" else "")
        expect = moment.replace(microsecond=0)
    text = f"{moment.year:04d}" + text[text.index("-") :] + zone
    assert parse_w3c(text, UTC) == parse_w3c(text, None, partial=True) == expect


def test_future_near_the_end_of_the_calendar() -> None:
    # 9999-12-31T23:00-05:00 is in year 10000 in UTC: no conversion, still the future.
    text = "9999-12-31T23:00:00-05:00"
    with pytest.raises(LastmodError, match="in the future"):
        check_not_future(text, UTC, NOW)
    assert [code for code, _ in lastmod_problems(text, NOW)] == ["lastmod.future"]
    stats = lastmod_stats(["https://example.com/a"], [text], NOW)
    assert stats.future == 1


def test_a_date_starts_where_its_reader_says() -> None:
    listed_until = datetime(2024, 6, 1, 12, tzinfo=UTC)
    # The writer counts a date from midnight UTC; check from its start at +14:00.
    assert later_than(date(2024, 6, 2), listed_until)
    assert not later_than(date(2024, 6, 2), listed_until, _zone(14))
    assert later_than(date(2024, 6, 3), listed_until, _zone(14))
