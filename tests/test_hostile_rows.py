"""Arbitrary rows never make an invalid document, and the fast path agrees with the rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemap_middleware.entry import Batch, EntryRules, RawEntry
from sitemap_middleware.render import Renderer
from sitemap_middleware.urls import Site
from sitemap_middleware.xml import UrlsetWriter, url_element

from .conftest import assert_valid_urlset

SITE = Site.build("https://example.com/", "/sitemap.xml")

# Every code point, lone surrogates, U+FFFE and control characters included.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
locs = st.one_of(
    texts,
    texts.map(lambda t: "/" + t),
    texts.map(lambda t: "https://example.com/" + t),
    texts.map(lambda t: "https://other.example/" + t),
    st.from_regex(r"/[a-z0-9/-]{0,30}", fullmatch=True),
    st.none(),
    st.integers(),
)
lastmods = st.one_of(
    st.none(),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(timezone(timedelta(hours=5, minutes=30)))),
    st.datetimes(timezones=st.just(UTC)),
    texts,
    st.from_regex(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?)?", fullmatch=True),
)
changefreqs = st.one_of(
    st.none(), st.sampled_from(["daily", "Weekly", "never", "sometimes", ""]), texts
)
priorities = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.0, 0.0, True, 1, "0.3", "x"]),
)
rows = st.lists(st.tuples(st.integers(), locs, lastmods, changefreqs, priorities), max_size=40)


def slow(batch: list[RawEntry]) -> list[str]:
    rules = EntryRules(SITE, UTC)
    return [url_element(u) for raw in batch if (u := rules.check("s", raw)) is not None]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows)
def test_any_rows_give_a_valid_document(sitemap_schema: etree.XMLSchema, batch: list[Any]) -> None:
    elements = Renderer(EntryRules(SITE, UTC)).elements("s", Batch.of(batch))
    assert elements == slow(batch)
    if elements:
        writer = UrlsetWriter()
        document = writer.open() + writer.write(elements) + writer.close()
        assert_valid_urlset(document, sitemap_schema)


def test_dates_at_the_edges_of_the_calendar(sitemap_schema: etree.XMLSchema) -> None:
    batch: list[RawEntry] = [
        (1, "/a", date(1, 1, 1), None, None),
        (2, "/b", datetime(9999, 12, 31, 23, 59, 59), None, None),
        (3, "/c", datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=-12))), None, None),
    ]
    elements = Renderer(EntryRules(SITE, UTC)).elements("s", Batch.of(batch))
    writer = UrlsetWriter()
    assert_valid_urlset(writer.open() + writer.write(elements) + writer.close(), sitemap_schema)
