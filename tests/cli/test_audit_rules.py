"""The pure parts of the lastmod audit: sharing N between sitemaps, sampling, verdicts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.cli.audit_rules import (
    FAIL,
    PASS,
    UNKNOWN,
    WARN,
    PageAnswer,
    classify,
    future_finding,
    lastmod_stats,
    page_findings,
    stamp_finding,
)
from sitemap_middleware.cli.audit_sample import Listed, allocate, presample, take
from sitemap_middleware.core.http import format_http_date

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@given(st.lists(st.integers(0, 60), max_size=12), st.integers(0, 400))
def test_allocate_shares_as_evenly_as_sizes_allow(sizes: list[int], total: int) -> None:
    shares = allocate(sizes, total)
    assert sum(shares) == min(total, sum(sizes))
    assert all(0 <= share <= size for share, size in zip(shares, sizes, strict=True))
    for share, size in zip(shares, sizes, strict=True):
        if share < size:  # pages left: at most one fewer than any other sitemap's share
            assert share >= max(shares) - 1
    assert allocate(sizes, total) == shares


def _entries(count: int) -> list[Listed]:
    return [Listed(f"https://example.com/{i}", None) for i in range(count)]


@given(st.integers(0, 300), st.integers(1, 100), st.integers(0, 100))
def test_even_samples_keep_both_ends(count: int, size: int, share: int) -> None:
    entries = _entries(count)
    picked = take(presample(entries, size, None, "s"), min(share, size), None)
    assert len(picked) == min(count, size, share)
    assert len(set(picked)) == len(picked) and set(picked) <= set(entries)
    if len(picked) >= 2:
        assert picked[0] == entries[0] and picked[-1] == entries[-1]


@given(st.integers(0, 300), st.integers(1, 100), st.integers(0, 9))
def test_seeded_samples_are_random_but_repeatable(count: int, size: int, seed: int) -> None:
    entries = _entries(count)
    first = presample(entries, size, seed, "https://example.com/s.xml")
    assert first == presample(entries, size, seed, "https://example.com/s.xml")
    assert len(first) == min(count, size) and set(first) <= set(entries)
    assert take(first, 3, seed) == first[:3]


def test_seeds_and_sitemaps_change_the_sample() -> None:
    entries = _entries(1000)
    samples = {tuple(presample(entries, 10, seed, "a")) for seed in range(5)}
    samples |= {tuple(presample(entries, 10, 0, name)) for name in ("b", "c")}
    assert len(samples) == 7


def test_one_instant_in_any_spelling_is_a_stamp() -> None:
    spellings = ["2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", "2023-12-31T19:00:00-05:00"]
    lastmods: list[str | None] = [spellings[i % 3] for i in range(12)] + [None] * 3
    lastmods += [f"2024-02-{d:02d}T00:00:00Z" for d in range(1, 11)]
    stats = lastmod_stats([f"/{i}" for i in range(len(lastmods))], lastmods, NOW)
    assert (stats.entries, stats.with_lastmod, stats.stamp_count) == (25, 22, 12)
    finding = stamp_finding(stats)
    assert (finding.verdict, finding.count, finding.of) == (FAIL, 12, 22)
    assert finding.examples == ["2024-01-01T00:00:00Z on 12 of 22"]


def test_a_date_stamp_warns_and_few_lastmods_pass() -> None:
    days = ["2024-01-01"] * 10 + ["2024-01-02"] * 2
    assert stamp_finding(lastmod_stats(["/"] * 12, list(days), NOW)).verdict == WARN
    nine: list[str | None] = ["2024-01-01T00:00:00Z"] * 9
    assert stamp_finding(lastmod_stats(["/"] * 9, nine, NOW)).verdict == PASS
    half: list[str | None] = ["2024-01-01T00:00:00Z"] * 9 + [f"2024-01-0{d}" for d in range(2, 9)]
    assert stamp_finding(lastmod_stats(["/"] * 16, half, NOW)).verdict == FAIL


def test_future_lastmods_use_the_lastmod_rule_tolerance() -> None:
    lastmods: list[str | None] = [
        "2026-06-01T12:00:30Z",  # within the minute of tolerance
        "2026-06-01T12:05:00Z",
        "2026-06-02",  # already today east of UTC+12
        "2026-06-03",
        None,
    ]
    stats = lastmod_stats([f"/{i}" for i in range(5)], lastmods, NOW)
    finding = future_finding(stats)
    assert (finding.verdict, finding.count, finding.of) == (FAIL, 2, 4)
    assert finding.examples == ["2026-06-01T12:05:00Z (/1)", "2026-06-03 (/3)"]
    assert future_finding(lastmod_stats(["/"], ["2026-01-01"], NOW)).verdict == PASS


def _answer(lastmod: str | None, modified: datetime | None, **kw: object) -> PageAnswer:
    header = format_http_date(modified) if modified is not None else None
    date = format_http_date(NOW)
    fields = {"method": "HEAD", "status": 200, "last_modified": header, "date": date, **kw}
    return PageAnswer(Listed("https://example.com/p", lastmod), **fields)  # type: ignore[arg-type]


def test_a_lastmod_covers_its_second_minute_or_day() -> None:
    t = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    cases = [
        ("2026-05-01T10:00:00Z", t, "ok"),
        ("2026-05-01T10:00:00Z", t + timedelta(seconds=1), "ok"),
        ("2026-05-01T10:00:00Z", t + timedelta(seconds=2), "older"),
        ("2026-05-01T10:00Z", t + timedelta(seconds=59), "ok"),
        ("2026-05-01T10:00Z", t + timedelta(seconds=61), "older"),
        ("2026-05-01T12:00:00+02:00", t + timedelta(seconds=1), "ok"),
        ("2026-05-01", t + timedelta(hours=25), "ok"),  # still 1 May at UTC-12
        ("2026-05-01", t + timedelta(hours=26, seconds=1), "older"),
        ("2026-05-02", t, "ok"),  # a later lastmod than the page is not this finding
        (None, t, "no-lastmod"),
        ("not a date", t, "no-lastmod"),
    ]
    for lastmod, modified, kind in cases:
        assert classify(_answer(lastmod, modified))[0] == kind, (lastmod, modified)


def test_what_cannot_be_compared() -> None:
    assert classify(_answer("2026-05-01", None))[0] == "none"
    assert classify(_answer("2026-05-01", None, last_modified="yesterday"))[0] == "none"
    assert classify(_answer("2026-05-01", NOW))[0] == "now"
    assert classify(_answer("2026-05-01", NOW - timedelta(seconds=2)))[0] == "older"
    assert classify(_answer("2026-05-01", NOW, status=404)) == (
        "status",
        "https://example.com/p: HEAD 404",
    )
    assert classify(_answer("2026-05-01", NOW, error="refused"))[0] == "unreachable"


def test_verdicts_on_the_pages() -> None:
    old = datetime(2026, 5, 1, tzinfo=UTC)
    honest = _answer("2026-05-01T00:00:00Z", old)
    stale = _answer("2026-05-01T00:00:00Z", old + timedelta(days=1))
    skipped = PageAnswer(Listed("https://example.com/s", None), skipped=True)

    def verdicts(answers: list[PageAnswer]) -> dict[str, str]:
        return {f.code: f.verdict for f in page_findings(answers)}

    assert verdicts([honest] * 3 + [stale])["audit.older"] == WARN
    assert verdicts([honest, stale])["audit.older"] == FAIL
    assert verdicts([honest, skipped])["audit.older"] == PASS
    assert verdicts([skipped, _answer("2026-05-01", None)]) == {
        "audit.status": PASS,
        "audit.unreachable": PASS,
        "audit.no-last-modified": WARN,
        "audit.last-modified-now": PASS,
        "audit.older": UNKNOWN,
    }
