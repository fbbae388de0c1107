"""The renderer's fast paths give exactly what the full rules give."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitemap_middleware.core.urls import Site, comparison_form, iri_to_uri
from sitemap_middleware.output.duplicates import SeenLocs
from sitemap_middleware.output.entry import (
    Affixed,
    Batch,
    EntryRules,
    RawEntry,
    Repeated,
)
from sitemap_middleware.output.fast_path import Renderer
from sitemap_middleware.output.xml import url_element
from sitemap_middleware.state.bad_rows import BadRowStats

from ..conftest import examples

NEW_YORK = ZoneInfo("America/New_York")

LOCS: list[Any] = [
    "/a",
    "/",
    "/deep/path/x.html",
    "https://example.com/abs",
    "/über",
    "/a&b",
    "/it's",
    "//evil.example/x",
    "/x\n/y",
    "/x\x01",
    None,
    5,
    "/" + "a" * 2026,
    "/" + "a" * 2027,
    "/q?x=1",
    "/%41",
    "/catalog/item",
    "/catalog/",
    "rel",
    "",
    "/a/../b",
    "/catalog/../admin",
    "/catalog/./item",
    "/.well-known/x",
    "/a//b",
    "/catalog/item ",
    " /catalog/item",
    "\t/x\n",
    "https://example.com/abs ",
    " https://example.com/abs",
    "/%2E%2e/x",
    "/x/.",
]
LASTMODS: list[Any] = [
    None,
    datetime(2024, 1, 2, 3, 4, 5),
    datetime(2024, 1, 2, 3, 4, 5, 678),
    datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
    datetime(2024, 1, 2, 3, 4, 5, 678, tzinfo=UTC),  # aware in UTC, as Django's ORM gives
    datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(0))),  # UTC, another tzinfo
    date(2024, 1, 2),
    "2024-01-02",
    "2024-01-02T03:04Z",
    "bad",
    17,
]
CHANGEFREQS: list[Any] = [None, "weekly", "Daily", "sometimes", 3]
PRIORITIES: list[Any] = [None, 0.5, 1.0, True, 1, Decimal("0.25"), "0.3", 7.0, float("nan")]


def slow(rules: EntryRules, batch: list[RawEntry]) -> list[str]:
    return [url_element(url) for raw in batch if (url := rules.check("s", raw)) is not None]


def combos() -> list[RawEntry]:
    rows: list[RawEntry] = []
    for i, loc in enumerate(LOCS):
        for j, lastmod in enumerate(LASTMODS):
            rows.append(
                (i * 100 + j, loc, lastmod, CHANGEFREQS[(i + j) % 5], PRIORITIES[(i * j) % 9])
            )
    return rows


@pytest.mark.parametrize("scope_path", ["/sitemap.xml", "/catalog/sitemap.xml"])
@pytest.mark.parametrize("naive", [UTC, ZoneInfo("America/New_York")])
def test_fast_paths_match_the_rules(scope_path: str, naive: Any) -> None:
    site = Site.build("https://example.com/", scope_path)
    rows = combos()
    for batch in [rows, *[[row] for row in rows]]:
        renderer = Renderer(EntryRules(site, naive))
        renderer.elements("s", Batch.of(rows[:40]))  # warm the tail cache with other values
        assert renderer.elements("s", Batch.of(batch)) == slow(EntryRules(site, naive), batch)


@pytest.mark.parametrize(
    "batch",
    [
        [(i, f"/p/{i}", None, "weekly", 0.5) for i in range(50)],
        [(i, f"/p/{i}", datetime(2024, 1, 1, i % 24), None, None) for i in range(50)],
        [(i, f"/p/{i}", date(2024, 1, 1 + i % 28), "daily", None) for i in range(50)],
        # Aware in UTC (Django's ORM): column-wise; with another zone: row by row.
        [(i, f"/p/{i}", datetime(2024, 1, 1, i % 24, tzinfo=UTC), "daily", 0.5) for i in range(50)],
        [
            (i, f"/p/{i}", datetime(2024, 1, 1, 3, i, i, i, tzinfo=timezone(timedelta(0))), None, 1)
            for i in range(50)
        ],
        [
            (i, f"/p/{i}", datetime(2024, 1, 1, i % 24, tzinfo=UTC if i else NEW_YORK), None, 1)
            for i in range(50)
        ],
        [(i, f"/p/{i}", None, None, True if i == 7 else 1.0) for i in range(50)],
        [(i, f"/p/{i}", None, "weekly" if i != 9 else "Weekly", None) for i in range(50)],
        [(i, f"/p/{i}" if i != 3 else "/p/a b", None, None, None) for i in range(50)],
        [(i, f"/p/{i}" if i != 5 else "/p/../../x", None, None, None) for i in range(50)],
    ],
)
def test_uniform_batches_match_the_rules(batch: list[RawEntry]) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    assert Renderer(EntryRules(site, UTC)).elements("s", Batch.of(batch)) == slow(
        EntryRules(site, UTC), batch
    )


# A listed_until at 2024-01-02 03:04:05 (UTC): later lastmods are future, bad fields.
LISTED_UNTIL = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
AROUND: list[tuple[Any, bool]] = [  # (lastmod, future)
    (datetime(2024, 1, 2, 3, 4, 5), False),
    (datetime(2024, 1, 2, 3, 4, 5, 999_999), False),  # the same whole second
    (datetime(2024, 1, 2, 3, 4, 6), True),
    (datetime(2024, 1, 2, 3, 4, 5, 999_999, tzinfo=UTC), False),
    (datetime(2024, 1, 2, 3, 4, 6, tzinfo=UTC), True),
    (datetime(9999, 12, 31), True),
    (date(2024, 1, 2), False),  # a date counts from midnight UTC
    (date(2024, 1, 3), True),
    (date(9999, 12, 31), True),
    ("9999-12-31T00:00:00Z", True),
    (datetime(2024, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))), False),
    (datetime(2024, 1, 2, 5, 4, 6, tzinfo=timezone(timedelta(hours=2))), True),
]


@pytest.mark.parametrize(("lastmod", "future"), AROUND)
@pytest.mark.parametrize("alone", [True, False], ids=["uniform", "mixed"])
def test_future_lastmods_take_the_same_rule_on_every_path(
    lastmod: Any, future: bool, alone: bool
) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    batch: list[RawEntry] = [(i, f"/p/{i}", lastmod, "weekly", 0.5) for i in range(20)]
    if not alone:  # a batch of another shape: row by row
        batch.append((99, "/p/odd", datetime(2024, 1, 1), "daily", None))
    fast = Renderer(EntryRules(site, UTC)).elements("s", Batch.of(batch), LISTED_UNTIL)
    rules = EntryRules(site, UTC)
    full = [url_element(url) for raw in batch if (url := rules.check("s", raw, LISTED_UNTIL))]
    assert fast == full
    assert ("<lastmod>" not in fast[0]) == future
    if future:
        assert rules.stats["s"].fields_dropped == 20


# --- template locs written in parts ------------------------------------------------------

AFFIXES = ["/articles/", "/", "", "//x/", "/catalog/", "/catalog", "/a b/", "/caf\u00e9/", "/x?"]
SUFFIXES = ["", "/", ".html", " x", "&", "..", "../x", "/.."]
middles = st.one_of(
    st.from_regex(r"[a-z0-9-]{0,12}", fullmatch=True),
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.sampled_from(["", "a b", "caf\u00e9", "x&y", "it's", "a\nb", "/", "//", "\x01"]),
    st.sampled_from(["x/", "caf\u00e9/", "a b/", "/\u00e9", "\u00e9/x", "a%20b", "a%2", "q?"]),
    st.sampled_from(["..", ".", "a/../..", "./x", "..x"]),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(AFFIXES),
    st.lists(middles, min_size=1, max_size=30),
    st.sampled_from(SUFFIXES),
    st.sampled_from(["/sitemap.xml", "/catalog/sitemap.xml"]),
    st.sampled_from([None, datetime(2024, 1, 2, 3, 4, 5)]),
)
# A middle ending in "/" makes a segment of what follows it: ".." is a dot segment.
@example("/catalog", ["x/", "y", "caf\u00e9/", "/"], "..", "/sitemap.xml", None)
@example("/catalog", ["x/", "caf\u00e9/"], "../x", "/sitemap.xml", None)
def test_affixed_locs_give_the_bytes_of_whole_locs(
    before: str, values: list[str], after: str, scope_path: str, lastmod: Any
) -> None:
    site = Site.build("https://example.com/", scope_path)
    locs = Affixed(before, values, after)
    assert list(locs) == [before + value + after for value in values]
    assert locs[1:] == [before + value + after for value in values[1:]]
    rows: list[RawEntry] = [(i, loc, lastmod, "daily", None) for i, loc in enumerate(list(locs))]
    whole = Batch.of(rows)
    parts = Batch(whole.keys, locs, whole.lastmods, whole.changefreqs, whole.priorities)
    # As a loc template gives them: the middles newline-joined already.
    joined = Affixed(before, values, after, "\n".join(values))
    with_joined = Batch(whole.keys, joined, whole.lastmods, whole.changefreqs, whole.priorities)
    full = EntryRules(site, UTC)
    expected = slow(full, rows)
    for batch in (parts, with_joined, whole):
        rules = EntryRules(site, UTC)
        assert Renderer(rules).elements("s", batch) == expected
        assert rules.stats == full.stats  # the same bad rows, for the same reasons


def test_dot_segments_are_bad_rows_on_the_fast_paths_too() -> None:
    site = Site.build("https://example.com/", "/catalog/sitemap.xml")
    batch = [
        (1, "/catalog/a/../b", None, None, None),
        (2, "/catalog/../admin", None, None, None),
        (3, "/catalog/c", None, None, None),
    ]
    for rows in (batch, batch[:1], batch[1:]):
        rules = EntryRules(site, UTC)
        elements = Renderer(rules).elements("s", Batch.of(rows))
        assert "admin" not in "".join(elements) and "/b<" not in "".join(elements)
        assert rules.stats["s"].skipped == len([row for row in rows if ".." in row[1]])
    assert Renderer(EntryRules(site, UTC)).elements("s", Batch.of(batch)) == [
        "<url><loc>https://example.com/catalog/c</loc></url>\n"
    ]


def test_template_middles_that_are_dot_segments_are_bad_rows() -> None:
    site = Site.build("https://example.com/", "/catalog/sitemap.xml")
    locs = Affixed("/catalog/", ["a", "..", "b/../../admin", ".", "%2E", "c "], "")
    keys = list(range(6))
    batch = Batch(keys, locs, [None] * 6, [None] * 6, [None] * 6)
    rules = EntryRules(site, UTC)
    assert Renderer(rules).elements("s", batch) == [
        "<url><loc>https://example.com/catalog/a</loc></url>\n",
        "<url><loc>https://example.com/catalog/c%20</loc></url>\n",  # kept, encoded
    ]
    assert rules.stats["s"].skipped == 4


# --- no loc twice in one document ------------------------------------------------------------


def unique(site: Site, batches: list[list[RawEntry]]) -> tuple[list[str], int]:
    """The reference: every row through the full rules, a loc whose comparison form was
    listed before in the document dropped; and how many rows were skipped."""
    rules = EntryRules(site, UTC)
    listed: set[str] = set()
    out = []
    for rows in batches:
        for raw in rows:
            url = rules.check("s", raw)
            if url is not None and comparison_form(url.loc) not in listed:
                listed.add(comparison_form(url.loc))
                out.append(url_element(url))
    return out, sum(map(len, batches)) - len(out)


SPELLINGS = ["a", "%61", "with space", "with%20space", "m\u00fcsli", "m%C3%BCsli", "m%c3%bcsli"]
spellings = st.sampled_from([*SPELLINGS, "b", "b ", "q%3Fx", "x/y", "..", "c&d", "c%26d"])
row_fields = st.tuples(
    st.sampled_from([None, datetime(2024, 1, 2, 3, 4, 5), date(2024, 1, 2)]),
    st.sampled_from([None, 0.5, 0]),  # an int priority sends the batch row by row
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(spellings, row_fields), min_size=1, max_size=40),
    st.lists(st.integers(1, 8), min_size=1, max_size=10),
    st.sampled_from(["affixed", "whole", "absolute", "mixed"]),
    st.booleans(),
)
def test_every_path_drops_repeated_locs_as_the_rules_say(
    rows: list[tuple[str, tuple[Any, Any]]], sizes: list[int], form: str, uniform: bool
) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    raws: list[RawEntry] = []
    for key, (middle, (lastmod, priority)) in enumerate(rows):
        loc = {"absolute": f"https://example.com/p/{middle}"}.get(form, f"/p/{middle}")
        if form == "mixed" and key % 3 == 1:
            loc = f"HTTPS://EXAMPLE.COM/p/{middle}"
        raws.append((key, loc, None if uniform else lastmod, "daily", 0.5 if uniform else priority))
    batches, at = [], 0
    for size in sizes * len(raws):
        if at >= len(raws):
            break
        batches.append(raws[at : at + size])
        at += size
    rules = EntryRules(site, UTC)
    renderer, seen = Renderer(rules), SeenLocs(site)
    out: list[str] = []
    for chunk in batches:
        whole = Batch.of(chunk)
        batch = whole
        if form == "affixed" or (form == "mixed" and len(chunk) % 2):
            values = [rows[key][0] for key, *_ in chunk]
            batch = Batch(
                whole.keys,
                Affixed("/p/", values, ""),
                whole.lastmods,
                whole.changefreqs,
                whole.priorities,
            )
        out += renderer.elements("s", batch, seen=seen)
    expected, skipped = unique(site, batches)
    assert out == expected
    assert rules.stats.get("s", BadRowStats()).skipped == skipped
    assert len(seen) == len(out)


def test_spellings_of_one_loc_are_one_loc() -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    rules = EntryRules(site, UTC)
    batch = Batch.of([(i, f"/p/{value}", None, None, None) for i, value in enumerate(SPELLINGS)])
    assert Renderer(rules).elements("s", batch, seen=SeenLocs(site)) == [
        "<url><loc>https://example.com/p/a</loc></url>\n",
        "<url><loc>https://example.com/p/with%20space</loc></url>\n",
        "<url><loc>https://example.com/p/m%C3%BCsli</loc></url>\n",
    ]
    assert rules.stats["s"].skipped == 4


def test_template_middles_meet_whole_paths_listed_before() -> None:
    """A path listed whole before the template's first batch is found by its middle."""
    site = Site.build("https://example.com/", "/sitemap.xml")
    rules = EntryRules(site, UTC)
    renderer, seen = Renderer(rules), SeenLocs(site)
    first = Batch.of([(0, "/p/a", None, None, None), (1, "/q/a", None, None, None)])
    assert len(renderer.elements("s", first, seen=seen)) == 2
    nothing = [None] * 3
    second = Batch([2, 3, 4], Affixed("/p/", ["b", "a", "b"], ""), nothing, nothing, nothing)
    assert renderer.elements("s", second, seen=seen) == [
        "<url><loc>https://example.com/p/b</loc></url>\n"
    ]
    third = Batch.of([(5, "/p/b", None, None, None), (6, "/q/a", None, None, None)])
    assert renderer.elements("s", third, seen=seen) == []
    assert rules.stats["s"].skipped == 4


@pytest.mark.parametrize(
    "values",
    [
        ["%61", "%61", "a"],
        ["%61", "a", "%61"],
        ["a", "%61", "%61"],
        ["x", "%61", "%2561", "a"],
        # encoded column-wise (no "%") against encoded by the rules (kept escapes)
        ["m\u00fcsli", "m%c3%bcsli", "m%C3%BCsli"],
        ["m%c3%bcsli", "m\u00fcsli", "m\u00fcsli"],
        ["with space", "with%20space", "with space", "x y"],
    ],
)
def test_encoded_and_plain_spellings_in_one_batch_keep_the_first(values: list[str]) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    count = len(values)
    nothing: list[Any] = [None] * count
    batch = Batch(list(range(count)), Affixed("/p/", values, ""), nothing, nothing, nothing)
    rules = EntryRules(site, UTC)
    out = Renderer(rules).elements("s", batch, seen=SeenLocs(site))
    rows = [(i, f"/p/{value}", None, None, None) for i, value in enumerate(values)]
    assert out == unique(site, [rows])[0]
    assert len(out) == len({comparison_form(iri_to_uri(value)) for value in values})


# --- changefreq and priority columns on the column-wise path ---------------------------------

GOOD_CHANGEFREQS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
ODD_CHANGEFREQS: list[Any] = ["Daily", " weekly ", "sometimes", "", 3, b"daily", True]
GOOD_PRIORITIES: list[Any] = [0.0, 0.1, 0.25, 0.5, 1.0, 0.12345, 1, 0, Decimal("0.3")]
ODD_PRIORITIES: list[Any] = [
    -0.0,
    True,
    False,
    7.0,
    -0.1,
    float("nan"),
    float("inf"),
    "0.3",
    Decimal("NaN"),
    Decimal("sNaN"),
    10**400,
]
column_rows = st.lists(
    st.tuples(
        st.one_of(st.from_regex(r"[a-z0-9-]{1,8}", fullmatch=True), st.sampled_from(SPELLINGS)),
        st.sampled_from([None, datetime(2024, 1, 2, 3, 4, 5), datetime(2024, 5, 6, 7, 8, 9, 10)]),
        st.one_of(st.none(), st.sampled_from(GOOD_CHANGEFREQS), st.sampled_from(ODD_CHANGEFREQS)),
        st.one_of(st.none(), st.sampled_from(GOOD_PRIORITIES), st.sampled_from(ODD_PRIORITIES)),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(column_rows, min_size=1, max_size=4), st.booleans(), st.booleans())
def test_changefreq_and_priority_columns_give_the_bytes_of_the_rules(
    batches: list[list[tuple[str, Any, Any, Any]]], affixed: bool, one_lastmod: bool
) -> None:
    """Columns of valid values and NULLs, with or without bad values among them: the same
    elements, the same bad rows (repeated locs included) as the full rules row by row."""
    site = Site.build("https://example.com/", "/sitemap.xml")
    raw_batches: list[list[RawEntry]] = []
    key = 0
    for rows in batches:
        raws: list[RawEntry] = []
        for middle, lastmod, changefreq, priority in rows:
            lastmod = rows[0][1] if one_lastmod else lastmod
            raws.append((key, f"/p/{middle}", lastmod, changefreq, priority))
            key += 1
        raw_batches.append(raws)
    rules = EntryRules(site, UTC)
    renderer, seen = Renderer(rules), SeenLocs(site)
    out: list[str] = []
    for raws, rows in zip(raw_batches, batches, strict=True):
        batch = Batch.of(raws)
        if affixed:
            middles = [middle for middle, *_ in rows]
            locs = Affixed("/p/", middles, "")
            batch = Batch(batch.keys, locs, batch.lastmods, batch.changefreqs, batch.priorities)
        out += renderer.elements("s", batch, seen=seen)
    # The reference: row by row, a repeated loc skipped before its other fields are judged.
    reference, listed = EntryRules(site, UTC), set()

    def first(url: str) -> bool:
        new = comparison_form(url) not in listed
        listed.add(comparison_form(url))
        return new

    expected = [
        url_element(url)
        for raws in raw_batches
        for raw in raws
        if (url := reference.check("s", raw, None, first)) is not None
    ]
    assert out == expected
    assert rules.stats.get("s", BadRowStats()) == reference.stats.get("s", BadRowStats())


@pytest.mark.parametrize("naive", [UTC, NEW_YORK])
def test_aware_utc_lastmods_take_the_column_wise_path(naive: Any) -> None:
    """Django's ORM gives aware datetimes in UTC: written as one column, whatever zone naive
    ones are read in."""
    site = Site.build("https://example.com/", "/sitemap.xml")
    raws: list[RawEntry] = [
        (i, f"/p/{i}", datetime(2024, 1, 1, 3, 4, i % 60, i, tzinfo=UTC), "daily", 0.5)
        for i in range(60)
    ]
    fast = Renderer(EntryRules(site, naive)).column_wise("s", Batch.of(raws), LISTED_UNTIL)
    assert fast is not None  # not the row-by-row path
    assert fast == slow(EntryRules(site, naive), raws)
    later = [*raws, (60, "/p/60", LISTED_UNTIL + timedelta(seconds=1), "daily", 0.5)]
    assert Renderer(EntryRules(site, naive)).column_wise("s", Batch.of(later), LISTED_UNTIL) is None


@pytest.mark.parametrize("affixed", [True, False])
def test_valid_changefreq_and_priority_columns_take_the_column_wise_path(affixed: bool) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    raws: list[RawEntry] = [
        (
            i,
            f"/p/{i}",
            datetime(2024, 1, 2, 3, 4, i % 60),
            None if i % 3 == 0 else GOOD_CHANGEFREQS[i % 7],
            None if i % 3 == 1 else GOOD_PRIORITIES[i % 9],
        )
        for i in range(60)
    ]
    batch = Batch.of(raws)
    if affixed:
        locs = Affixed("/p/", [str(i) for i in range(60)], "")
        batch = Batch(batch.keys, locs, batch.lastmods, batch.changefreqs, batch.priorities)
    renderer = Renderer(EntryRules(site, UTC))
    fast = renderer.column_wise("s", batch, None, SeenLocs(site))
    assert fast is not None  # not the row-by-row path
    assert fast == slow(EntryRules(site, UTC), raws)
    assert "<changefreq>daily</changefreq><priority>0.12345</priority>" not in "".join(fast)
    assert "<priority>0.1235</priority>" in "".join(fast)


def test_negative_zero_is_written_as_zero_on_every_path() -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    raws: list[RawEntry] = [(i, f"/p/{i}", None, None, [0.0, -0.0][i % 2]) for i in range(4)]
    for batch in (raws, raws[1:2]):
        out = Renderer(EntryRules(site, UTC)).elements("s", Batch.of(batch))
        assert out == slow(EntryRules(site, UTC), batch)
        assert all("<priority>0.0</priority>" in element for element in out)


def test_a_repeated_column_reads_as_a_list_of_its_value() -> None:
    column = Repeated("daily", 3)
    assert list(column) == ["daily"] * 3 and len(column) == 3
    assert column[0] == column[-3] == "daily" and column[1:] == ["daily"] * 2
    assert column.count("daily") == 3 and column.count(None) == 0
    with pytest.raises(IndexError):
        column[3]
    assert Repeated(None, 0)[:] == []


@pytest.mark.parametrize("changefreq", [None, "weekly", "Daily", "sometimes", 3])
@pytest.mark.parametrize("priority", [None, 0.5, 1, True, 7.0, "0.3", [0.5]])
def test_repeated_columns_give_the_bytes_of_the_rules(changefreq: Any, priority: Any) -> None:
    site = Site.build("https://example.com/", "/sitemap.xml")
    rows: list[RawEntry] = [
        (i, f"/p/{i}", datetime(2024, 1, 2, 3, 4, 5), changefreq, priority) for i in range(20)
    ]
    whole = Batch.of(rows)
    batch = Batch(
        whole.keys, whole.locs, whole.lastmods, Repeated(changefreq, 20), Repeated(priority, 20)
    )
    full = EntryRules(site, UTC)
    expected = slow(full, rows)
    rules = EntryRules(site, UTC)
    assert Renderer(rules).elements("s", batch) == expected
    assert rules.stats == full.stats
