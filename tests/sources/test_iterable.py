"""Sources over Python data (``sources/iterable.py``): lists, functions, async generators."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import (
    AsyncIterableSource,
    ConfigurationError,
    Entry,
    Image,
    IterableSource,
    KeyRange,
)
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.sources.base import ALL, page_keys
from sitemap_middleware.sources.iterable import as_source

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)
DAY = timedelta(days=1)


def dated(n: int) -> list[Entry]:
    return [Entry(f"/p/{i}", NOW - (n - i) * DAY) for i in range(n)]


def test_iterable_source_summary_changes_with_the_data() -> None:
    first = IterableSource([Entry("/a", "2024-01-01"), "/b"]).summarize(ALL, AsOf.now())
    same = IterableSource([Entry("/a", "2024-01-01"), "/b"]).summarize(ALL, AsOf.now())
    fewer = IterableSource([Entry("/a", "2024-01-01")]).summarize(ALL, AsOf.now())
    assert first == same
    assert first.count == 2 and first.newest == datetime(2024, 1, 1, tzinfo=UTC)
    assert fewer.token != first.token


def test_keys_are_positions_and_pages_are_ranges_of_them() -> None:
    source = IterableSource(dated(25))
    page = page_keys(2, 10)  # positions 10..19
    batches = list(source.batches(page, size=4))
    assert [len(b) for b in batches] == [4, 4, 2]
    assert [k for b in batches for k in b.keys] == list(range(10, 20))
    assert batches[0].locs[0] == "/p/10"
    summary = source.summarize(page, AsOf(UTC, NOW))
    assert summary.count == 10 and summary.newest == NOW - 6 * DAY
    pages = source.pages(10, AsOf(UTC, NOW))
    assert [(b.index, b.count) for b in pages] == [(0, 10), (1, 10), (2, 5)]
    assert pages[1].newest == summary.newest and pages[2].newest == NOW - DAY
    assert list(source.batches(KeyRange((24,), None))) == []


def test_a_lastmod_past_listed_until_is_not_the_newest_but_when_the_summary_expires() -> None:
    later = NOW + timedelta(hours=1)
    source = IterableSource([Entry("/a", NOW - DAY), Entry("/b", later)])
    before = source.summarize(ALL, AsOf(UTC, NOW))
    assert before.newest == NOW - DAY and before.expires == later
    assert before.fresh(NOW) and not before.fresh(later)
    after = source.summarize(ALL, AsOf(UTC, later))
    assert after.newest == later and after.expires is None
    assert after.token != before.token  # the rows served changed with ``listed_until``


def test_a_function_is_called_for_every_read_unless_a_version_says_enough() -> None:
    calls: list[int] = []
    rows = ["/a", "/b"]

    def items() -> list[str]:
        calls.append(1)
        return list(rows)

    source = IterableSource(items)
    first = source.summarize(ALL, AsOf(UTC, NOW))
    rows.append("/c")
    assert source.summarize(ALL, AsOf(UTC, NOW)).token != first.token
    assert len(calls) == 2

    versioned = IterableSource(items, version=lambda: "v7")
    assert versioned.summarize(ALL, AsOf(UTC, NOW)).token == "v7"
    assert len(calls) == 2  # the version spared the pass over the data
    assert [b.locs for b in versioned.batches(ALL)] == [("/a", "/b", "/c")]


def test_a_list_is_read_once_and_its_shape_seen_up_front() -> None:
    items: list[Any] = ["/a", {"loc": "/b", "priority": 0.5}, Entry("/c", images=[Image("/i")])]
    source = IterableSource(items)
    items.clear()
    assert [b.locs for b in source.batches(ALL)] == [("/a", "/b", "/c")]
    assert source.shape.images == 1 and IterableSource(["/a"]).shape.images == 0


def test_what_cannot_be_a_source_is_refused_when_built() -> None:
    with pytest.raises(TypeError, match="read only once"):
        IterableSource(iter(["/x"]))
    with pytest.raises(ConfigurationError, match=r"^items: "):
        IterableSource("/x")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^version: "):
        IterableSource(lambda: [], version="v1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^images: "):
        IterableSource(lambda: [], images=-1)
    with pytest.raises(TypeError, match="must return an iterable"):
        IterableSource(lambda: 3).summarize(ALL, AsOf.now())  # type: ignore[arg-type,return-value]


@pytest.mark.anyio
async def test_an_async_generator_gives_what_the_same_list_gives() -> None:
    entries = dated(25)
    closed: list[bool] = []

    async def produce() -> AsyncIterator[Entry]:
        try:
            for entry in entries:
                yield entry
        finally:
            closed.append(True)

    source = as_source(produce, "urls")
    assert isinstance(source, AsyncIterableSource)
    plain = IterableSource(entries)
    page = page_keys(2, 10)
    assert await source.summarize(page, AsOf(UTC, NOW)) == plain.summarize(page, AsOf(UTC, NOW))
    assert await source.pages(10, AsOf(UTC, NOW)) == plain.pages(10, AsOf(UTC, NOW))
    got = [batch async for batch in source.batches(page, 4)]
    assert [b.keys for b in got] == [b.keys for b in plain.batches(page, 4)]
    assert closed == [True, True, True]  # the generator is closed however far it was read


def test_as_source_keeps_sources_and_wraps_the_rest() -> None:
    source = IterableSource(["/a"], name="pages")
    assert as_source(source) is source

    def items() -> Iterator[str]:
        yield "/a"

    wrapped = as_source(items, "news")
    assert isinstance(wrapped, IterableSource) and wrapped.name == "news"
    with pytest.raises(ConfigurationError, match="read only once"):
        as_source(items())


_LASTMODS = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
    ),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1)),
    st.dates(),
    st.text(max_size=30),
)


@given(
    st.lists(
        st.tuples(
            st.text(max_size=20),
            _LASTMODS,
            st.sampled_from([None, "daily"]),
            st.sampled_from([None, 0.5]),
            st.booleans(),
        ),
        max_size=40,
    ),
    st.integers(min_value=0, max_value=40),
)
def test_digesting_items_together_gives_the_digest_of_each(rows: list[Any], cut: int) -> None:
    """``Digest.add_all`` (the C-level passes an adopted Django class's pages use) gives the
    summary of ``add`` item by item: newest, expiry, count and token."""
    from sitemap_middleware.output.extensions import Extensions
    from sitemap_middleware.sources.iterable import Digest

    items = [
        (
            (key, loc, lastmod, changefreq, priority),
            Extensions(alternates={"en": loc}) if e else None,
        )
        for key, (loc, lastmod, changefreq, priority, e) in enumerate(rows)
    ]
    listed_until = datetime(2030, 1, 1, tzinfo=UTC)
    one_by_one, together = Digest(AsOf(UTC, listed_until)), Digest(AsOf(UTC, listed_until))
    for item in items:
        one_by_one.add(item)
    together.add_all(items[:cut])
    together.add_all(items[cut:])
    assert together.summary() == one_by_one.summary()
