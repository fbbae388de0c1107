"""Hostile input to the pure core: the fuzz targets' invariants, driven by hypothesis.

The same ``check_*`` functions the coverage-guided fuzzer runs (fuzz/targets.py)
get structured hostile values here: header values built from the tokens that
matter, paths near the sitemap's, and the hostile entry fields of tests/hostile.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from fuzz import targets

from .. import hostile
from ..hostile import LAYOUTS, budget

latin1 = st.text(st.characters(max_codepoint=255), max_size=4)
anything = st.text(st.characters(codec=None, exclude_categories=()), max_size=4)


def made_of(*tokens: str, junk: st.SearchStrategy[str] = latin1) -> st.SearchStrategy[str]:
    """Strings of the given tokens with junk between them."""
    return st.lists(st.one_of(st.sampled_from(tokens), junk), max_size=10).map("".join)


DATE_TOKENS: tuple[str, ...] = (
    "Sun",
    "Sunday",
    "Mon",
    "Thursday",
    ", ",
    " ",
    "  ",
    "-",
    ":",
    "GMT",
    "gmt",
    "UTC",
    "Nov",
    "nov",
    "Feb",
    "06",
    " 6",
    "29",
    "31",
    "1994",
    "94",
    "70",
    "0001",
    "9999",
    "08:49:37",
    "23:59:60",
    "24:00:00",
    "\t",
)
TAG_TOKENS: tuple[str, ...] = (
    '"',
    'W/"',
    "w/",
    "W/",
    "*",
    ",",
    " ",
    "\t",
    "a",
    "sitemap-1",
    '"sitemap-1"',
    "\x85",
)
ENCODING_TOKENS: tuple[str, ...] = (
    "gzip",
    "GZIP",
    "x-gzip",
    "*",
    "identity",
    "br",
    ";",
    "q=",
    "Q=",
    "0",
    "1",
    ".",
)
ENCODING_TOKENS += ("0.001", "1.000", ",", " ", "nan", "inf", "-")
PATH_TOKENS: tuple[str, ...] = (
    "/sitemap",
    "/maps/sitemap",
    "/site-map",
    "-",
    ".xml",
    ".gz",
    "articles",
    "news",
)
PATH_TOKENS += ("news-2024", "a_b", "pages", "0", "1", "01", "9999999999", "10000000000", "/")
PATH_TOKENS += ("..", "%2e", "%", "\u0661", "\uff11", " ")
CORE_PATHS = ("/maps/sitemap.xml", "/maps/sitemap-pages-1.xml", "/maps/sitemap-empty-1.xml")

ZONES = [UTC, timezone(timedelta(hours=-12)), timezone(timedelta(hours=14)), ZoneInfo("Asia/Tokyo")]
dates = st.one_of(
    made_of(*DATE_TOKENS),
    made_of(*DATE_TOKENS, junk=anything),
    st.datetimes().map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
)


@budget(1)
@given(dates)
def test_http_dates(value: str) -> None:
    targets.check_http_date(value)


@budget(0.5)
@given(
    st.datetimes(  # a day inside the calendar's ends: every zone's moment has a UTC form
        datetime(1, 1, 2), datetime(9999, 12, 30), timezones=st.sampled_from(ZONES)
    )
)
def test_http_dates_round_trip(moment: datetime) -> None:
    targets.check_moment(moment)


@budget(0.75)
@given(made_of(*TAG_TOKENS))
def test_entity_tag_lists(value: str) -> None:
    targets.check_entity_tags(value)


CONDITIONAL = st.sampled_from(
    ["if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "x"]
)
header_maps = st.dictionaries(
    CONDITIONAL,
    st.lists(st.one_of(made_of(*TAG_TOKENS), dates), min_size=1, max_size=2),
    max_size=4,
)
any_method = st.one_of(st.sampled_from(["GET", "HEAD", "POST", "get", "PUT"]), latin1)


@budget(0.75)
@given(any_method, header_maps)
def test_preconditions_follow_rfc_9110(method: str, headers: dict[str, list[str]]) -> None:
    targets.check_preconditions(method, headers)


@budget(0.5)
@given(st.lists(made_of(*ENCODING_TOKENS), min_size=1, max_size=2))
def test_accept_encoding(values: list[str]) -> None:
    targets.check_accept_encoding(values)


@budget(0.5)
@given(st.one_of(made_of(*PATH_TOKENS), made_of(*PATH_TOKENS, junk=anything)))
def test_routes(path: str) -> None:
    targets.check_route(path)


@budget(1)
@given(st.one_of([hostile.loc_fields(layout) for layout in LAYOUTS]))
def test_hostile_locs_resolve_to_uris_in_scope(loc: hostile.Field) -> None:
    if isinstance(loc.value, str):
        targets.check_loc(loc.value)


@budget(1)
@given(hostile.lastmods())
def test_hostile_lastmods(lastmod: hostile.Field) -> None:
    targets.check_lastmod(lastmod.value)


core_headers = st.lists(
    st.tuples(
        st.sampled_from(["if-none-match", "if-modified-since", "if-match", "accept-encoding"]),
        st.one_of(made_of(*TAG_TOKENS), dates, made_of(*ENCODING_TOKENS)),
    ),
    max_size=3,
)


@budget(0.5)
@given(
    st.sampled_from(["GET", "HEAD", "POST", "get"]),
    st.one_of(st.sampled_from(CORE_PATHS), made_of(*PATH_TOKENS).map(lambda p: "/maps" + p)),
    core_headers,
)
def test_core_decisions(method: str, path: str, headers: list[tuple[str, str]]) -> None:
    lines: dict[str, list[str]] = {}
    for name, value in headers:
        lines.setdefault(name, []).append(value)
    targets.check_request(method, path, lines)
