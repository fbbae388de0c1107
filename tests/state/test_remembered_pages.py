"""What the sitemap remembers between requests: pages per data version, recent summaries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from sitemap_middleware import ALL, IterableSource, KeyRange, SyncSource
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.core.validators import Summary
from sitemap_middleware.output.entry import Batch
from sitemap_middleware.sources.base import NotPageable, Page
from sitemap_middleware.state.remembered_pages import RememberedPages, RememberedSummaries

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


class Whole(SyncSource):
    """A source that cannot be split into pages (no ``pages``)."""

    name = "whole"
    pageable = False

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        return Summary(NOW, 3, "v1")

    def batches(self, keys: KeyRange, size: int) -> Iterator[Batch]:
        return iter(())


def test_pages_are_used_only_for_the_data_version_they_were_read_for() -> None:
    source = IterableSource(["/a", "/b"], name="urls")
    known = RememberedPages({"urls": 10})
    assert known.pages(source) == [] and known.needs_pages(source, Summary(NOW, 2, "v1"))
    pages = [Page(0, 2, NOW)]
    known.remember(source, Summary(NOW, 2, "v1", listed_until=NOW), pages)
    assert known.pages(source) == pages and known.of(source).listed_until == NOW
    assert not known.needs_pages(source, Summary(NOW, 2, "v1"))
    assert known.needs_pages(source, Summary(NOW, 3, "v2"))


def test_a_source_that_cannot_be_split_is_one_page_or_refused() -> None:
    source = Whole()
    known = RememberedPages({"whole": 3})
    assert not known.needs_pages(source, Summary(NOW, 3, "v1"))  # its summary is its page
    assert known.pages(source) == [Page(0, 3, NOW)]
    with pytest.raises(NotPageable, match="more than one page holds"):
        known.needs_pages(source, Summary(NOW, 4, "v2"))


def test_recent_summaries_last_summary_ttl_and_no_longer_than_their_rows() -> None:
    source = IterableSource(["/a"], name="urls")
    parts = ((source, ALL),)
    later = NOW + timedelta(minutes=5)
    summary = Summary(NOW, 1, "v1", expires=later)  # a lastmod comes due at ``later``
    off = RememberedSummaries(0.0)
    off.keep(parts, [summary])
    assert off.get(parts, NOW) is None
    recent = RememberedSummaries(0.2)
    recent.keep(parts, [summary])
    assert recent.get(parts, NOW) == [summary]
    assert recent.get(parts, later) is None  # the row it saw in the future is served now
    assert recent.get(((source, KeyRange(None, (9,))),), NOW) is None  # another range
    time.sleep(0.25)
    assert recent.get(parts, NOW) is None
