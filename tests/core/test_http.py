"""RFC 9110 dates, entity tags and the precondition decision, without a server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sitemap_middleware.core.http import (
    accepts_gzip,
    evaluate_preconditions,
    format_http_date,
    parse_entity_tags,
    parse_http_date,
    weak_match,
)

MOMENT = datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  # asctime
        "  Sun, 06 Nov 1994 08:49:37 GMT  ",
        "sun, 06 nov 1994 08:49:37 gmt",
    ],
)
def test_all_three_http_date_forms(value: str) -> None:
    assert parse_http_date(value) == MOMENT


@pytest.mark.parametrize(
    "value",
    [
        "",
        "garbage",
        "Sun, 06 Nov 1994 08:49:37",  # no zone
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 31 Feb 1994 08:49:37 GMT",  # no such day
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
        # Only spaces and tabs surround a field value; only ASCII makes a date.
        "Sun Nov  6 08:49:37 1994\x85",
        "\xa0Sun, 06 Nov 1994 08:49:37 GMT",
        "\x1fSun, 06 Nov 1994 08:49:37 GMT",
        "Sun, \u0660\u0666 Nov 1994 08:49:37 GMT",  # Arabic-Indic digits
        "Sun, 06 Nov \uff11\uff19\uff19\uff14 08:49:37 GMT",  # fullwidth digits
        "\u017fun, 06 Nov 1994 08:49:37 GMT",  # long s, "S" only to a Unicode case fold
    ],
)
def test_invalid_http_dates(value: str) -> None:
    assert parse_http_date(value) is None


def test_rfc850_two_digit_year_more_than_50_years_ahead_is_past() -> None:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    assert parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", now).year == 1994  # type: ignore[union-attr]
    assert parse_http_date("Friday, 06-Nov-76 08:49:37 GMT", now).year == 2076  # type: ignore[union-attr]
    assert parse_http_date("Saturday, 06-Nov-77 08:49:37 GMT", now).year == 1977  # type: ignore[union-attr]


def test_format_is_imf_fixdate() -> None:
    assert format_http_date(MOMENT) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert parse_http_date(format_http_date(MOMENT)) == MOMENT


@pytest.mark.parametrize(
    ("value", "tags"),
    [
        ('"a"', ['"a"']),
        ('W/"a", "b"', ['W/"a"', '"b"']),
        ('"a","b" , W/"c"', ['"a"', '"b"', 'W/"c"']),
        ("*", None),
        (" * ", None),
        ("", []),
        ("garbage", []),
        ('garbage, "x"', ['"x"']),
        ('w/"a"', []),  # "W/" is case-sensitive
        ('"a', []),
        ("\x85*", []),  # not "*": only spaces and tabs are optional whitespace
        ('\xa0"a"', []),
        ('\t"a"\t,\t"b"', ['"a"', '"b"']),
    ],
)
def test_entity_tag_lists(value: str, tags: list[str] | None) -> None:
    assert parse_entity_tags(value) == tags


def test_weak_comparison() -> None:
    assert weak_match('W/"1"', 'W/"1"')
    assert weak_match('W/"1"', '"1"')
    assert weak_match('"1"', '"1"')
    assert not weak_match('W/"1"', 'W/"2"')


ETAG = 'W/"abc"'
LM = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
LM_TEXT = "Tue, 02 Jan 2024 03:04:05 GMT"
EARLIER = "Tue, 02 Jan 2024 03:04:04 GMT"
LATER = "Tue, 02 Jan 2024 03:04:06 GMT"


@pytest.mark.parametrize(
    ("method", "headers", "status"),
    [
        ("GET", {}, 200),
        ("GET", {"if-none-match": [ETAG]}, 304),
        ("HEAD", {"if-none-match": [ETAG]}, 304),
        ("GET", {"if-none-match": ['"abc"']}, 304),  # weak comparison
        ("GET", {"if-none-match": ['"x", W/"abc"']}, 304),
        ("GET", {"if-none-match": ['"x"', 'W/"abc"']}, 304),  # several lines form one list
        ("GET", {"if-none-match": ["*"]}, 304),
        ("GET", {"if-none-match": ['"x"']}, 200),
        # If-None-Match present: If-Modified-Since is ignored, even when it would say 304.
        ("GET", {"if-none-match": ['"x"'], "if-modified-since": [LM_TEXT]}, 200),
        ("GET", {"if-none-match": [ETAG], "if-modified-since": [EARLIER]}, 304),
        ("GET", {"if-modified-since": [LM_TEXT]}, 304),
        ("GET", {"if-modified-since": [LATER]}, 304),
        ("GET", {"if-modified-since": [EARLIER]}, 200),
        ("GET", {"if-modified-since": ["Tuesday, 02-Jan-24 03:04:05 GMT"]}, 304),
        ("GET", {"if-modified-since": ["Tue Jan  2 03:04:05 2024"]}, 304),
        ("GET", {"if-modified-since": ["yesterday"]}, 200),  # unparseable: ignored
        ("GET", {"if-modified-since": [LM_TEXT, LM_TEXT]}, 200),  # doubled: ignored
        ("GET", {"if-modified-since": [f"{LM_TEXT}, {LM_TEXT}"]}, 200),  # two members
        ("POST", {"if-modified-since": [LM_TEXT]}, 200),  # GET/HEAD only
        ("POST", {"if-none-match": [ETAG]}, 412),
        ("GET", {"if-match": [ETAG]}, 412),  # weak tags never match strongly
        ("GET", {"if-match": ["*"]}, 200),
        ("GET", {"if-unmodified-since": [EARLIER]}, 412),
        ("GET", {"if-unmodified-since": [LM_TEXT]}, 200),
        ("GET", {"if-unmodified-since": ["nonsense"]}, 200),
    ],
)
def test_precondition_table(method: str, headers: dict[str, list[str]], status: int) -> None:
    assert evaluate_preconditions(method, headers, ETAG, LM) == status


def test_if_modified_since_needs_a_last_modified() -> None:
    assert evaluate_preconditions("GET", {"if-modified-since": [LM_TEXT]}, ETAG, None) == 200


@pytest.mark.parametrize(
    ("values", "gzip"),
    [
        (["gzip"], True),
        (["gzip, deflate, br"], True),
        (["br", "GZIP;Q=0.5"], True),  # several lines form one list; case does not matter
        (["x-gzip"], True),
        (["gzip;q=0"], False),
        (["gzip;q=0, *"], False),  # an explicit refusal beats the wildcard
        (["*"], True),
        (["*;q=0"], False),
        (["identity"], False),
        ([], False),
        # Repeated members: the best weight counts, whatever the order.
        (["gzip;q=0, gzip"], True),
        (["*, *;q=0"], True),
        (["*;q=0, *"], True),
    ],
)
def test_accept_encoding(values: list[str], gzip: bool) -> None:
    assert accepts_gzip(values) is gzip
