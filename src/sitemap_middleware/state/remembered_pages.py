"""What the sitemap remembers between requests: each source's pages as last read, and the
summaries read in the last ``freshness.summary_ttl`` seconds.

Both are keyed by the data, never trusted past it: pages are used only for the
whole-source summary (token) they were read for, and a remembered summary only
while no lastmod it saw in the future has come due.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..core.exchange import Part
from ..core.routing import DocumentTarget, PageTarget
from ..core.validators import Summary
from ..sources.base import ALL, AnySource, KeyRange, NotPageable, Page


@dataclass(frozen=True, slots=True)
class PagesRead:
    """A source's non-empty pages, for the data version (summary token) they came from,
    with ``listed_until`` they were read under."""

    token: str
    pages: list[Page]
    listed_until: datetime | None


_NONE_READ = PagesRead("", [], None)


class RememberedPages:
    """Each source's pages as last read: an index lists them, cut pages are found in them."""

    def __init__(self, page_sizes: Mapping[str, int]) -> None:
        self._page_sizes = page_sizes
        self._read: dict[str, PagesRead] = {}

    def of(self, source: AnySource) -> PagesRead:
        """The pages of a source as last read (none yet: no pages, for no data version)."""
        return self._read.get(source.name, _NONE_READ)

    def pages(self, source: AnySource) -> list[Page]:
        """The non-empty pages of a source, as last read."""
        return self.of(source).pages

    def remember(self, source: AnySource, summary: Summary, pages: list[Page]) -> None:
        self._read[source.name] = PagesRead(summary.token, pages, summary.listed_until)

    def needs_pages(self, source: AnySource, summary: Summary) -> bool:
        """Whether a source's pages must be read for its whole-source ``summary``.

        A source that cannot be split is one page, known from its summary alone;
        past one page it is refused (:class:`NotPageable`).
        """
        if self.of(source).token == summary.token:
            return False
        if not source.pageable:
            page_size = self._page_sizes[source.name]
            if summary.count is not None and summary.count > page_size:
                raise NotPageable(
                    f"source {source.name!r} has {summary.count} rows, more than one page "
                    f"holds ({page_size}), and cannot be split into pages; split it "
                    "into several sources, or give it pages() (see Source.pages)"
                )
            self.remember(source, summary, [Page(0, summary.count or 1, summary.newest)])
            return False
        return True

    def index_needs(
        self, parts: Sequence[Part], summaries: Sequence[Summary]
    ) -> list[tuple[AnySource, Summary]]:
        """The sources whose pages must be read (not remembered for their current data)."""
        return [
            (source, summary)
            for (source, _), summary in zip(parts, summaries, strict=True)
            if self.needs_pages(source, summary)
        ]

    def page_summaries(
        self, target: DocumentTarget, parts: Sequence[Part], cut: bool = False
    ) -> list[Summary] | None:
        """A cut page's summary, known from its cut (read just before): no query needed."""
        source, keys = parts[0]
        if (source.fixed_ranges and not cut) or keys == ALL or not isinstance(target, PageTarget):
            return None
        read = self.of(source)
        page = read.pages[target.page - 1]  # Sitemap.parts found the page
        if page.last is None:
            return None  # the data no longer needs cuts: a page of fixed key ranges
        token = f"cut:{page.count}:{keys!r}:{page.checksum}:{page.newest}:{page.expires}"
        if source.versioned:
            # The version sees what the checksum cannot (a renamed slug), but only for the
            # whole source: cut pages shift, so every one of them follows it.
            token += ":" + read.token
        return [Summary(page.newest, page.count, token, read.listed_until, page.expires)]


class RememberedSummaries:
    """``freshness.summary_ttl``: summaries read in the last few seconds, by (source, key range)."""

    LIMIT = 65_536
    """One entry per page: bounded, and cheap to refill."""

    def __init__(self, ttl: float) -> None:
        self._ttl = ttl
        self._kept: dict[tuple[str, KeyRange], tuple[float, Summary]] = {}

    def get(self, parts: Sequence[Part], listed_until: datetime) -> list[Summary] | None:
        """The parts' summaries if all were read less than ``freshness.summary_ttl`` seconds
        ago and no future lastmod they saw is due by ``listed_until``."""
        if not self._ttl:
            return None
        now = time.monotonic()
        found = []
        for source, keys in parts:
            kept = self._kept.get((source.name, keys))
            if kept is None or kept[0] < now or not kept[1].fresh(listed_until):
                return None
            found.append(kept[1])
        return found

    def keep(self, parts: Sequence[Part], summaries: Sequence[Summary]) -> None:
        if not self._ttl:
            return
        if len(self._kept) > self.LIMIT:
            self._kept.clear()
        expires = time.monotonic() + self._ttl
        for (source, keys), summary in zip(parts, summaries, strict=True):
            self._kept[(source.name, keys)] = (expires, summary)
