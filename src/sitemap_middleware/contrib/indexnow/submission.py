"""The URLs of changed rows, by the sitemap's own rules, and the protocol's JSON body.

A row's URLs are those the sitemap lists for it: its loc checked by the sitemap's
:class:`~..entry.EntryRules` (a bad row is skipped, logged once and counted, as in the
sitemap), one per language with ``languages``, and its ``alternates`` on the site. A
post holds at most ``max_urls`` (the protocol's 10,000) and whole rows only, so the
mark of its last row says exactly what was pushed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.spec import INDEXNOW_MAX_URLS
from ...core.urls import LocError
from ...output.entry import EntryRules
from ...output.extensions import Extensions
from ...sources.base import Changes, Mark
from ...state.bad_rows import LanguageKey

logger = logging.getLogger("sitemap_middleware")


@dataclass(frozen=True, slots=True)
class PostPlan:
    """The first post of a read: its URLs, the mark of its last row, rows it covers."""

    urls: list[str]
    mark: Mark
    rows: int


class Submission:
    """How one site submits: its host, key and key file, and the rules its URLs obey."""

    def __init__(
        self,
        rules: EntryRules,
        key: str,
        key_location: str,
        max_urls: int = INDEXNOW_MAX_URLS,
    ) -> None:
        if not 1 <= max_urls <= INDEXNOW_MAX_URLS:
            raise ValueError(f"max_urls: must be from 1 to {INDEXNOW_MAX_URLS}, got {max_urls}")
        self.rules = rules
        self.host = rules.site.origin.partition("://")[2].rpartition("@")[2]
        self.hostname = self.host.rsplit(":", 1)[0] if not self.host.endswith("]") else self.host
        self.key = key
        self.key_location = key_location
        self.max_urls = max_urls

    def body(self, urls: Sequence[str]) -> bytes:
        """The protocol's JSON for a list of URLs on the host."""
        document = {
            "host": self.hostname,
            "key": self.key,
            "keyLocation": self.key_location,
            "urlList": list(urls),
        }
        return json.dumps(document, ensure_ascii=True).encode("utf-8")

    def first_post(self, name: str, changes: Changes) -> PostPlan:
        """Whole rows from the start of ``changes`` while their URLs fit in one post."""
        by_row = _entries_by_row(changes)
        urls: dict[str, None] = {}
        mark, rows = changes.marks[0][1], 0
        for key, row_mark in changes.marks:
            found = self._row_urls(name, by_row.get(key, ()))
            fresh = [url for url in found if url not in urls]
            if rows and len(urls) + len(fresh) > self.max_urls:
                break
            if len(urls) + len(fresh) > self.max_urls:
                logger.warning(
                    "IndexNow %s: row %r has %d URLs, more than a post holds; %d are pushed",
                    name,
                    key,
                    len(fresh),
                    self.max_urls,
                )
            urls.update(dict.fromkeys(fresh[: self.max_urls - len(urls)]))
            mark, rows = row_mark, rows + 1
        return PostPlan(list(urls), mark, rows)

    def checked_urls(self, name: str, urls: Iterable[Any]) -> list[str]:
        """Queued URLs that are the site's (others are logged and left out), once each."""
        found: dict[str, None] = {}
        for url in urls:
            checked = self.rules.check_loc(name, url, url)
            if checked is not None:
                found[checked] = None
        return list(found)

    def _row_urls(self, name: str, entries: Sequence[tuple[Any, Any, Any]]) -> list[str]:
        out: list[str] = []
        for key, loc, extras in entries:
            url = self.rules.check_loc(name, key, loc)
            if url is None:
                continue
            out.append(url)
            if isinstance(extras, Extensions):
                out += self._alternates(extras)
        return out

    def _alternates(self, extras: Extensions) -> list[str]:
        """The alternates on this site (others are other hosts' to submit)."""
        alternates = extras.alternates
        try:
            hrefs: list[Any] = (
                list(alternates.values())
                if isinstance(alternates, Mapping)
                else [getattr(a, "href", a) for a in alternates]
            )
        except (AttributeError, TypeError):
            return []  # the sitemap reports the bad alternates
        out = []
        for href in hrefs:
            try:
                out.append(self.rules.site.resolve(href))
            except (LocError, ValueError, TypeError, UnicodeError):
                continue
        return out


def _entries_by_row(changes: Changes) -> dict[Any, list[tuple[Any, Any, Any]]]:
    """Each row's entries ``(entry key, loc, extensions)``, by the row's key."""
    batch = changes.batch
    extras = batch.extras if batch.extras is not None else [None] * len(batch)
    by_row: dict[Any, list[tuple[Any, Any, Any]]] = {}
    for key, loc, extension in zip(batch.keys, batch.locs, extras, strict=True):
        row = key.row if type(key) is LanguageKey else key
        by_row.setdefault(row, []).append((key, loc, extension))
    return by_row
