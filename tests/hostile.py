"""Hostile data for the property tests: entry fields that say what the sitemap must do with them.

Every generated field carries its expectation: a value that must come out
(and what it must come out as), ``BAD`` (the row is skipped, or the optional
field dropped, and reported) or ``ANY`` (arbitrary data: either listed
correctly or reported, never silently lost or malformed). The expectations are
written from the protocol, not from the library's code.
"""

from __future__ import annotations

import functools
import gzip
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from urllib.parse import unquote_to_bytes

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from lxml import etree

from .support import NS, _schema, assert_valid_index, assert_valid_urlset


def budget(weight: float) -> settings:
    """Settings for one property: ``weight`` times the profile's max_examples."""
    base = settings.default.max_examples if settings.default is not None else 100
    return settings(
        max_examples=max(10, int(base * weight)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class _Mark:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BAD = _Mark("BAD")
"""The row must be skipped (a loc) or the field dropped (an optional field), and reported."""
ANY = _Mark("ANY")
"""Arbitrary data: listed in a valid form or reported."""


@dataclass(frozen=True)
class Field:
    value: Any
    expect: Any
    """BAD, ANY, or what must be written: the absolute IRI of a loc, the instant
    (aware datetime) or date of a lastmod, the changefreq, the priority as a float."""


@dataclass(frozen=True)
class Row:
    loc: Field
    lastmod: Field
    changefreq: Field
    priority: Field


NONE = Field(None, None)
"""An absent optional field: nothing may be written for it."""


@dataclass(frozen=True)
class Layout:
    """Where the sitemap sits: its base URL, path, and the scope its locs must lie in."""

    base_url: str
    path: str
    origin: str
    scope: str

    @property
    def inside(self) -> str:
        """A relative path prefix inside the scope (``maps/`` for ``/maps/sitemap.xml``)."""
        return self.scope[len(self.base_url) :]


LAYOUTS = [
    Layout("https://example.com/", "/sitemap.xml", "https://example.com", "https://example.com/"),
    Layout(
        "https://example.com/shop/",
        "/sitemap.xml",
        "https://example.com",
        "https://example.com/shop/",
    ),
    Layout(
        "https://example.com/",
        "/maps/sitemap.xml",
        "https://example.com",
        "https://example.com/maps/",
    ),
    Layout(
        "http://example.com:8080/",
        "/sitemap.xml",
        "http://example.com:8080",
        "http://example.com:8080/",
    ),
]

# --- characters -----------------------------------------------------------------------------

XML_FORBIDDEN_CONTROLS = "".join(chr(c) for c in [*range(0, 9), 0xB, 0xC, *range(0xE, 0x20)])
forbidden_chars = st.one_of(
    st.sampled_from([*XML_FORBIDDEN_CONTROLS, "\ufffe", "\uffff"]),
    st.characters(categories=["Cs"]),  # lone surrogates
)
# Every character XML 1.0 allows (U+0085, U+2028, U+FDD0, astral planes included).
xml_chars = st.characters(
    codec=None,
    exclude_categories=["Cs"],
    exclude_characters=XML_FORBIDDEN_CONTROLS + "\ufffe\uffff",
)
any_chars = st.characters(codec=None, exclude_categories=())
any_text = st.text(any_chars, max_size=40)
WHITESPACE = st.text(st.sampled_from(" \t\n\r"), max_size=2)

_DOT_SEGMENT = re.compile(r"/(?:\.|%2e)", re.I)


def _plain_text(text: str) -> bool:
    # No dot segments (a loc holding one is a bad row).
    return _DOT_SEGMENT.search(text) is None


def _percent(byte: int) -> str:
    return f"%{byte:02X}"


# Escapes good and broken, and characters a URI cannot hold as they are.
path_pieces = st.one_of(
    st.text(xml_chars, min_size=1, max_size=6),
    st.sampled_from(["/", "?", "#", "&", "'", '"', "<", ">", "%", "%2", "%zz", "%%", " ", "\\"]),
    st.integers(0, 255).map(_percent),
    st.integers(0, 255).map(lambda b: _percent(b).lower()),
    st.text("abcxyz019-._~", min_size=1, max_size=8),
)
path_text = st.lists(path_pieces, max_size=8).map("".join).filter(_plain_text)


# Strategies are built once per layout: building them per draw costs more than the test.
LOC_FORMS = st.sampled_from(["slash", "bare", "absolute", "loud"])
BAD_SCHEMES = st.sampled_from(
    ["javascript:alert(1)", "mailto:a@example.com", "data:,x", "file:///etc/passwd"]
)
LONG_PIECES = st.sampled_from(["a", "é", "%41", " "])
CLIMBS = st.sampled_from(["..", "%2e%2E", ".%2e", "%2E.", ".", "%2e"])
NOT_STRINGS = st.sampled_from([None, 7, 1.5, b"/bytes", ["/list"], {"loc": "/x"}, Decimal(1)])
SQL_FORBIDDEN_CHARS = forbidden_chars.filter(lambda c: not "\ud800" <= c <= "\udfff")


@st.composite
def _good_locs(draw: st.DrawFn, layout: Layout) -> Field:
    text = "p_" + draw(path_text)  # "p_": no scheme, no "//", not a dot segment
    inside = layout.inside + text
    iri = layout.base_url + inside
    form = draw(LOC_FORMS)
    if form == "slash":
        loc = "/" + inside
    elif form == "bare":
        loc = inside
    elif form == "absolute":
        loc = iri
    else:  # scheme and host in another case, the default port spelled out
        scheme, _, rest = iri.partition("://")
        host, _, path = rest.partition("/")
        if ":" not in host:
            host += ":443" if scheme == "https" else ":80"
        loc = f"{scheme.upper()}://{host.upper()}/{path}"
    # Whitespace at the end is data (encoded); at the start it is a path's first character,
    # which the "spaced" bad locs and the any-locs try.
    spaces = draw(WHITESPACE)
    return Field(loc + spaces, iri + spaces)


@functools.cache
def good_locs(layout: Layout) -> st.SearchStrategy[Field]:
    """A loc that must be listed; its expectation is the absolute IRI it names."""
    return _good_locs(layout)


@functools.cache
def _other_hosts(layout: Layout) -> st.SearchStrategy[str]:
    other_scheme = "http://" if layout.origin.startswith("https") else "https://"
    return st.sampled_from(
        [
            "https://other.example/",
            "https://example.com.evil/",
            "https://example.org/",
            "https://xn--exmple-cua.com/",
            "https://ex%61mple.com/",
            "https://[::1]/",
            "https://127.0.0.1/",
            layout.origin.replace("example.com", "example.com:9") + "/",
            layout.origin.replace("http", "ftp", 1) + "/",
            other_scheme + layout.origin.partition("://")[2] + "/",
        ]
    )


@functools.cache
def _bad_kinds(layout: Layout, sql: bool) -> st.SearchStrategy[str]:
    kinds = [
        "forbidden",
        "other-host",
        "scheme-relative",
        "scheme",
        "credentials",
        "long",
        "blank",
        "spaced",
        "dots",
    ]
    if not sql:
        kinds.append("type")
    return st.sampled_from(kinds)


@st.composite
def _bad_locs(draw: st.DrawFn, layout: Layout, sql: bool) -> Field:
    kind = draw(_bad_kinds(layout, sql))
    loc: Any
    if kind == "forbidden":
        good = draw(good_locs(layout)).value.strip(" \t\n\r")
        char = draw(SQL_FORBIDDEN_CHARS if sql else forbidden_chars)
        at = draw(st.integers(0, len(good)))
        loc = good[:at] + char + good[at:]
    elif kind == "other-host":
        loc = draw(_other_hosts(layout)) + layout.scope[len(layout.origin) + 1 :] + "p"
    elif kind == "scheme-relative":
        loc = "//" + layout.scope.partition("://")[2] + "p"
    elif kind == "scheme":
        loc = draw(BAD_SCHEMES)
    elif kind == "credentials":
        loc = layout.scope.replace("://", "://user:pass@", 1) + "p"
    elif kind == "long":
        good = draw(good_locs(layout)).value.strip(" \t\n\r")
        loc = good + draw(LONG_PIECES) * 2100 + "x"
    elif kind == "blank":
        loc = draw(WHITESPACE)
    elif kind == "spaced":  # whitespace before a scheme or "//"
        loc = draw(WHITESPACE.filter(bool)) + draw(st.sampled_from([layout.scope, "//"])) + "p"
    elif kind == "dots":  # a dot segment anywhere, climbing out of the directory or not
        climb = draw(CLIMBS) + "/"
        loc = draw(st.sampled_from(["/", ""])) + layout.inside + climb * draw(st.integers(1, 3))
        loc += draw(st.sampled_from(["p", "p/.", "p/%2E", "p/.."]))
    else:
        loc = draw(NOT_STRINGS)
    return Field(loc, BAD)


@functools.cache
def bad_locs(layout: Layout, sql: bool = False) -> st.SearchStrategy[Field]:
    """A loc that must never be listed."""
    return _bad_locs(layout, sql)


def _without_surrogates(text: str) -> str:
    return "".join(c for c in text if not "\ud800" <= c <= "\udfff")


@functools.cache
def any_locs(layout: Layout, sql: bool = False) -> st.SearchStrategy[Field]:
    texts = st.one_of(
        any_text,
        any_text.map(lambda t: "/" + t),
        any_text.map(lambda t: layout.scope + t),
        st.lists(path_pieces, max_size=8).map(lambda p: "/" + "".join(p)),
        any_text.map(lambda t: "/" + t + "/../" + t),
    )
    if sql:
        texts = texts.map(_without_surrogates)
    return texts.map(lambda text: Field(text, ANY))


@functools.cache
def loc_fields(layout: Layout, sql: bool = False) -> st.SearchStrategy[Field]:
    return st.one_of(good_locs(layout), bad_locs(layout, sql), any_locs(layout, sql))


# --- lastmod ----------------------------------------------------------------------------------

minute_offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
    lambda m: timezone(timedelta(minutes=m))
)


def _zone(offset: timedelta) -> str:
    if not offset:
        return "Z"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


@st.composite
def good_lastmod_strings(draw: st.DrawFn) -> Field:
    moment = draw(st.datetimes(timezones=minute_offsets))
    offset = moment.utcoffset()
    assert offset is not None
    form = draw(st.sampled_from(["date", "minutes", "seconds", "fraction", "naive"]))
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    if form == "date":
        return Field(day, moment.date())
    clock = f"{moment.hour:02d}:{moment.minute:02d}"
    if form == "minutes":
        text, expect = f"{day}T{clock}{_zone(offset)}", moment.replace(second=0, microsecond=0)
    elif form == "seconds":
        text, expect = f"{day}T{clock}:{moment.second:02d}{_zone(offset)}", moment
    elif form == "fraction":
        text = f"{day}T{clock}:{moment.second:02d}.{moment.microsecond:06d}{_zone(offset)}"
        expect = moment
    else:  # no zone: read in naive_timezone (UTC here)
        text = f"{day}T{clock}:{moment.second:02d}"
        expect = moment.replace(tzinfo=UTC)
    return Field(text, expect.replace(microsecond=0))


def _good_moment(moment: datetime) -> Field:
    if moment.tzinfo is None:
        return Field(moment, moment.replace(tzinfo=UTC, microsecond=0))
    return Field(moment, moment.replace(microsecond=0))


bad_lastmod_strings = st.sampled_from(
    [
        "2024",
        "2024-01",
        "2024-02-30",
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "0000-01-01",
        "10000-01-01",
        "2024-1-2",
        "2024-01-02T25:00Z",
        "2024-01-02T23:60Z",
        "1999-12-31T23:59:60Z",
        "2024-01-02 03:04:05",
        "2024-01-02T03:04:05+24:00",
        "2024-01-02T03:04:05+5:30",
        "2024-01-02T03:04:05 Z",
        "2024-01-02t03:04:05z",
        "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0662",  # Arabic-Indic digits
        "\uff12\uff10\uff12\uff14-01-02",  # fullwidth digits
        "yesterday",
        "",
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "1700000000",
    ]
)


@st.composite
def date_like_junk(draw: st.DrawFn) -> str:
    """A W3C Datetime with one character changed, dropped or doubled: looks like a date."""
    text: str = draw(good_lastmod_strings()).value
    at = draw(st.integers(0, len(text) - 1))
    change = draw(st.sampled_from(["0", "9", "-", ":", "T", "Z", "+", ".", " ", "", "double"]))
    return text[:at] + (text[at] * 2 if change == "double" else change) + text[at + 1 :]


def as_served(field: Field) -> Field:
    """A lastmod later than now + ``lastmods.tolerance`` (60 s) is a bad field: dropped.
    (Generated moments are years apart from the clock, never seconds.)"""
    expect = field.expect
    if isinstance(expect, date) and not isinstance(expect, datetime):
        expect = datetime(expect.year, expect.month, expect.day, tzinfo=UTC)
    listed_until = datetime.now(UTC) + timedelta(seconds=60)
    if isinstance(expect, datetime) and expect.replace(microsecond=0) > listed_until:
        return Field(field.value, BAD)
    return field


@functools.cache
def lastmods(sql_column: str | None = None) -> st.SearchStrategy[Field]:
    """Lastmod fields; ``sql_column`` "datetime" or "text" limits them to what that column holds."""
    naive = st.datetimes().map(_good_moment).map(as_served)
    if sql_column == "datetime":
        return st.one_of(st.just(NONE), naive)
    strings = st.one_of(
        good_lastmod_strings().map(as_served),
        bad_lastmod_strings.map(lambda s: Field(s, BAD)),
        date_like_junk().map(lambda s: Field(s, ANY)),
        any_text.map(lambda s: Field(s, ANY)),
    )
    if sql_column == "text":
        return st.one_of(st.just(NONE), strings.filter(_no_surrogates))
    return st.one_of(
        st.just(NONE),
        st.dates().map(lambda d: as_served(Field(d, d))),
        naive,
        st.datetimes(timezones=minute_offsets).map(_good_moment).map(as_served),
        st.datetimes(timezones=st.just(UTC)).map(_good_moment).map(as_served),
        # Offsets of seconds (historic zones): no W3C form; written in UTC or dropped.
        st.datetimes(
            timezones=st.integers(-86399, 86399).map(lambda s: timezone(timedelta(seconds=s)))
        ).map(lambda d: Field(d, ANY)),
        strings,
        st.sampled_from([1700000000, 17e8, b"2024-01-02", True, ["2024-01-02"], Decimal(3)]).map(
            lambda v: Field(v, BAD)
        ),
    )


def _no_surrogates(field: Field) -> bool:
    return not isinstance(field.value, str) or not any(
        "\ud800" <= c <= "\udfff" for c in field.value
    )


# --- changefreq and priority -------------------------------------------------------------------

CHANGEFREQS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]


@st.composite
def good_changefreqs(draw: st.DrawFn) -> Field:
    word = draw(st.sampled_from(CHANGEFREQS))
    spelled = "".join(c.upper() if draw(st.booleans()) else c for c in word)
    return Field(draw(WHITESPACE) + spelled + draw(WHITESPACE), word)


@functools.cache
def changefreqs(sql: bool = False) -> st.SearchStrategy[Field]:
    bad = st.sampled_from(["sometimes", "", "dail y", "daily,weekly", "annually", "0"])
    options = [
        st.just(NONE),
        good_changefreqs(),
        bad.map(lambda v: Field(v, BAD)),
        any_text.map(lambda v: Field(v, ANY)),
    ]
    if not sql:
        options.append(
            st.sampled_from([1, 0.5, b"daily", ["daily"], True]).map(lambda v: Field(v, BAD))
        )
    strategy = st.one_of(options)
    return strategy.filter(_no_surrogates) if sql else strategy


@functools.cache
def priorities(sql_column: str | None = None) -> st.SearchStrategy[Field]:
    """Priority fields; ``sql_column`` "real" or "text" limits them to what that column holds."""
    in_range = st.floats(0.0, 1.0)
    out_of_range = st.one_of(
        st.floats(max_value=-1e-9),
        st.floats(min_value=1.000001),
        st.sampled_from([float("inf"), float("-inf"), 1e308, -1e308, 1.01]),
    )
    if sql_column == "real":  # a REAL column turns NaN into NULL
        return st.one_of(
            st.just(NONE),
            in_range.map(lambda p: Field(p, p)),
            out_of_range.filter(lambda p: p == p).map(lambda p: Field(p, BAD)),
        )
    texts = st.one_of(
        in_range.map(lambda p: Field(repr(p), p)),
        in_range.map(lambda p: Field(f" {p:.3f} ", float(f"{p:.3f}"))),
        st.sampled_from(["x", "", "1,0", "0.5.5", "nan", "-inf", "1.5", "-0.1", "0x1"]).map(
            lambda v: Field(v, BAD)
        ),
        any_text.map(lambda v: Field(v, ANY)),
    )
    if sql_column == "text":
        return st.one_of(st.just(NONE), texts.filter(_no_surrogates))
    return st.one_of(
        st.just(NONE),
        in_range.map(lambda p: Field(p, p)),
        st.sampled_from([0, 1]).map(lambda p: Field(p, float(p))),
        st.decimals(0, 1, places=6).map(lambda p: Field(p, float(p))),
        out_of_range.map(lambda p: Field(p, BAD)),
        st.sampled_from(
            [
                float("nan"),
                True,
                False,
                Decimal("NaN"),
                Decimal("sNaN"),
                Decimal("Infinity"),
                Decimal("-0.5"),
                Decimal("1e400"),
                2**1100,
                1j,
                [0.5],
                None.__class__,
            ]
        ).map(lambda p: Field(p, BAD)),
        texts,
    )


@functools.cache
def rows(layout: Layout, max_size: int = 12) -> st.SearchStrategy[list[Row]]:
    """Rows of arbitrary Python data (lists, generators)."""
    return st.lists(
        st.builds(Row, loc_fields(layout), lastmods(), changefreqs(), priorities()),
        max_size=max_size,
    )


@functools.cache
def sql_rows(
    layout: Layout, lastmod_column: str, priority_column: str, max_size: int = 12
) -> st.SearchStrategy[list[Row]]:
    """Rows a SQLite table with these column types can hold."""
    loc = st.one_of(loc_fields(layout, sql=True), st.just(Field(None, BAD)))
    return st.lists(
        st.builds(
            Row, loc, lastmods(lastmod_column), changefreqs(sql=True), priorities(priority_column)
        ),
        max_size=max_size,
    )


# --- what came out ------------------------------------------------------------------------------


@dataclass
class Reported:
    """What the middleware logged about bad rows, by source name and row key (its repr)."""

    skipped: dict[tuple[str, str], str]
    dropped: dict[tuple[str, str], list[str]]


_REPORT = re.compile(
    r"bad sitemap row: source '(?P<source>[^']*)', row (?P<key>.+?): (?P<reason>.*)", re.S
)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.reported = Reported({}, {})
        self.unparsed: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        m = _REPORT.fullmatch(message)
        if m is None:
            self.unparsed.append(message)
            return
        key = (m["source"], m["key"])
        reason = m["reason"]
        if reason.startswith("row skipped: "):
            assert key not in self.reported.skipped, f"logged twice: {message}"
            self.reported.skipped[key] = reason
        else:
            self.reported.dropped.setdefault(key, []).append(reason)


@contextmanager
def reports() -> Iterator[_Collect]:
    """Collect the bad-row reports logged while the block runs."""
    handler = _Collect()
    logger = logging.getLogger("sitemap_middleware")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def document(status: int, headers: dict[str, str], body: bytes) -> bytes:
    """The XML of a 200: inflated when it is a gzip file or gzip-coded."""
    assert status == 200, status
    if (
        headers.get("content-type") == "application/gzip"
        or headers.get("content-encoding") == "gzip"
    ):
        assert body[:2] == b"\x1f\x8b"
        return gzip.decompress(body)
    assert "xml" in headers.get("content-type", ""), headers
    return body


def urlset_entries(xml: bytes) -> list[dict[str, str | None]]:
    """The ``<url>`` entries of a document that must be valid against sitemap.xsd."""
    return [
        {name: url.findtext(NS + name) for name in ("loc", "lastmod", "changefreq", "priority")}
        for url in assert_valid_urlset(xml, _schema("sitemap.xsd"))
    ]


def index_children(xml: bytes) -> list[str]:
    return [loc for loc, _ in assert_valid_index(xml)]


def is_sitemapindex(xml: bytes) -> bool:
    return etree.fromstring(xml).tag == NS + "sitemapindex"


# --- the oracle -----------------------------------------------------------------------------------


def check_loc(listed: str, layout: Layout) -> None:
    """What every listed loc must be, whatever the row held."""
    assert listed.isascii() and listed.isprintable(), listed
    assert 12 <= len(listed) <= 2047, listed
    assert listed.startswith(layout.scope), (listed, layout.scope)
    path = re.split(r"[?#]", listed[len(layout.origin) :], maxsplit=1)[0]
    # A "." or ".." segment, written or %2e-escaped (%2F is data, not a slash).
    segments = {segment.lower().replace("%2e", ".") for segment in path.split("/")}
    assert not segments & {".", ".."}, listed


def check_listing(
    name: str,
    layout: Layout,
    table: list[tuple[Any, Row]],
    listed: list[dict[str, str | None]],
    reported: Reported,
) -> None:
    """Every row is listed as the protocol says, or reported; nothing else is listed.

    ``table`` holds (key, row) in the source's key order; ``listed`` the entries
    of every served document of the source, in order.
    """
    kept = []
    # The IRIs listed so far (a good row whose loc is among them is a duplicate, skipped).
    before = {unquote_to_bytes(entry["loc"] or "") for entry in listed}
    for key, row in table:
        skipped = (name, repr(key)) in reported.skipped
        if row.loc.expect is BAD:
            assert skipped, f"row {key!r} with loc {row.loc.value!r} was listed"
        elif row.loc.expect is not ANY:
            reason = reported.skipped.get((name, repr(key)), "")
            duplicate = isinstance(row.loc.expect, str) and (
                unquote_to_bytes(row.loc.expect) in before and "duplicate loc" in reason
            )
            assert not skipped or duplicate, (
                f"row {key!r} with loc {row.loc.value!r} was skipped: {reason}"
            )
        if not skipped:
            kept.append((key, row))
    assert len(kept) == len(listed), (
        f"{len(kept)} rows not reported as skipped, {len(listed)} listed"
    )
    for (key, row), entry in zip(kept, listed, strict=True):
        loc = entry["loc"]
        assert loc is not None
        check_loc(loc, layout)
        if isinstance(row.loc.expect, str):
            assert unquote_to_bytes(loc) == unquote_to_bytes(row.loc.expect), (loc, row.loc)
        dropped = " ".join(reported.dropped.get((name, repr(key)), []))
        for field_name, check in (
            ("lastmod", _same_lastmod),
            ("changefreq", _same_changefreq),
            ("priority", _same_priority),
        ):
            field: Field = getattr(row, field_name)
            written = entry[field_name]
            reason = f"{field_name} dropped"
            if field.value is None:
                assert written is None, (field_name, written)
                assert reason not in dropped
            elif field.expect is BAD:
                assert written is None, (field_name, field.value, written)
                assert reason in dropped, (key, field_name, field.value, dropped)
            elif written is None:
                assert field.expect is ANY, (key, field_name, field.value, dropped)
                assert reason in dropped, (key, field_name, field.value, dropped)
            else:
                assert reason not in dropped
                if field.expect is not ANY:
                    assert check(written, field.expect), (field_name, field.value, written)


def _same_lastmod(written: str, expect: date | datetime) -> bool:
    if isinstance(expect, datetime):
        moment = datetime.fromisoformat(written)
        return moment.tzinfo is not None and moment == expect
    return written == expect.isoformat()


def _same_changefreq(written: str, expect: str) -> bool:
    return written == expect


def _same_priority(written: str, expect: float) -> bool:
    return (
        re.fullmatch(r"-?[01]\.[0-9]{1,4}", written) is not None
        and abs(float(written) - expect) <= 0.00005 + 1e-12
    )
