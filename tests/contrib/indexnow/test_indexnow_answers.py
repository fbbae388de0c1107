"""What the endpoint's answers mean, the backoff, and the posts built from changed rows
(pure parts of IndexNow)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.contrib.indexnow.answers import Accepted, Backoff, Rejected, Retry, verdict
from sitemap_middleware.contrib.indexnow.submission import Submission
from sitemap_middleware.core.http import format_http_date
from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.entry import Batch, EntryRules
from sitemap_middleware.output.extensions import Extensions
from sitemap_middleware.sources.base import Changes, Mark
from sitemap_middleware.state.bad_rows import LanguageKey

NOW = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("status", [200, 202])
def test_received_is_accepted(status: int) -> None:
    assert verdict(status, None, "", NOW) == Accepted(status)


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (400, "malformed"),
        (403, "key not valid"),
        (422, "not on the submitted host"),
        (404, "refused (404)"),
    ],
)
def test_refusals_stop_and_say_what_was_refused(status: int, says: str) -> None:
    found = verdict(status, None, "  bad\n url  ", NOW)
    assert isinstance(found, Rejected)
    assert says in found.reason
    assert found.reason.endswith("the endpoint said: bad url")


@pytest.mark.parametrize("status", [429, 500, 503])
def test_busy_and_server_errors_are_tried_again(status: int) -> None:
    assert verdict(status, "7", "", NOW) == Retry(verdict(status, "7", "", NOW).reason, 7.0)  # type: ignore[union-attr]
    later = format_http_date(NOW + timedelta(seconds=30))
    found = verdict(status, later, "", NOW)
    assert isinstance(found, Retry) and found.after == 30.0
    unreadable = verdict(status, "soon", "", NOW)
    assert isinstance(unreadable, Retry) and unreadable.after is None


@given(
    st.floats(0.01, 10),
    st.floats(1, 1000),
    st.lists(st.one_of(st.none(), st.floats(0, 5000)), min_size=1, max_size=30),
)
def test_delays_grow_honour_retry_after_and_stay_under_the_cap(
    first: float, cap: float, asked: list[float | None]
) -> None:
    backoff = Backoff(first, cap)
    previous = 0.0
    for i, after in enumerate(asked):
        delay = backoff.delay(after)
        grown = min(cap, first * 2**i)
        assert delay <= cap
        assert delay >= min(grown, cap)
        if after is not None:
            assert delay >= min(after, cap)
        else:
            assert delay == grown >= previous or delay == cap
        previous = grown
    backoff.reset()
    assert backoff.delay(None) == min(first, cap)


RULES = EntryRules(Site.build("https://example.com/", "/sitemap.xml"), UTC)


def changes(rows: list[tuple[int, list[tuple[object, object, object]]]]) -> Changes:
    """Rows ``(key, [(entry key, loc, extensions)])`` in mark order."""
    entries = [entry for _, row in rows for entry in row]
    keys = [e[0] for e in entries]
    locs = [e[1] for e in entries]
    batch = Batch(
        keys,
        locs,
        [None] * len(keys),
        [None] * len(keys),
        [None] * len(keys),
        extras=[e[2] for e in entries],
    )  # type: ignore[misc]
    marks = [(key, Mark(f"2025-01-01 00:00:{i:02d}", str(key))) for i, (key, _) in enumerate(rows)]
    return Changes(marks, batch)


@given(st.integers(1, 40), st.lists(st.integers(0, 6), min_size=1, max_size=40))
def test_posts_hold_whole_rows_up_to_the_limit(max_urls: int, sizes: list[int]) -> None:
    rows = [
        (i, [(LanguageKey(i, f"l{j}"), f"/p/{i}/{j}", None) for j in range(n)])
        for i, n in enumerate(sizes)
    ]
    post = Submission(RULES, "abcdefgh", "https://example.com/abcdefgh.txt", max_urls).first_post(
        "pages", changes(rows)
    )
    assert post.rows >= 1 and len(post.urls) <= max_urls
    assert post.mark == Mark(f"2025-01-01 00:00:{post.rows - 1:02d}", str(post.rows - 1))
    expected = [
        f"https://example.com/p/{i}/{j}" for i, n in enumerate(sizes[: post.rows]) for j in range(n)
    ]
    # A row alone past the limit is cut to it (logged); rows are never split otherwise.
    assert post.urls == expected[:max_urls]
    assert len(expected) <= max_urls or sizes[0] > max_urls
    if post.rows < len(sizes):  # the next row did not fit
        assert len(expected) + sizes[post.rows] > max_urls


def test_bad_rows_are_skipped_and_alternates_on_the_site_pushed() -> None:
    alternates = Extensions(
        {"en": "/en/a", "de": "https://example.com/de/a", "fr": "https://other.org/fr/a"}
    )
    post = Submission(RULES, "abcdefgh", "https://example.com/abcdefgh.txt").first_post(
        "pages",
        changes(
            [
                (1, [(1, "https://elsewhere.com/x", None)]),
                (2, [(2, "/en/a", alternates)]),
                (3, [(3, None, None)]),
            ]
        ),
    )
    assert post.urls == ["https://example.com/en/a", "https://example.com/de/a"]
    assert post.rows == 3
    assert RULES.stats["pages"].rows_skipped >= 2


def test_the_body_is_the_protocol_s_json() -> None:
    submission = Submission(RULES, "abcdefgh", "https://example.com/abcdefgh.txt")
    body = json.loads(submission.body(["https://example.com/a"]))
    assert body == {
        "host": "example.com",
        "key": "abcdefgh",
        "keyLocation": "https://example.com/abcdefgh.txt",
        "urlList": ["https://example.com/a"],
    }
