"""The hot path: a batch of raw entries to ``<url>`` elements.

The common row (a plain ASCII path, a naive UTC ``datetime`` or a ``date``,
a changefreq/priority seen before) is written directly; anything else goes
through the full rules in :mod:`sitemap_middleware.entry` and
:func:`~sitemap_middleware.xml.url_element`. Both paths give the same bytes
(the tests compare them).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from operator import attrgetter

from .entry import Batch, EntryRules, RawEntry, format_changefreq, format_priority
from .extensions import Shape
from .urls import MIN_LOC_LENGTH
from .xml import escape, url_element

# A path that needs neither percent-encoding nor entity-escaping, and is not "//host".
_PLAIN_PATH = re.compile(r"/(?:[A-Za-z0-9\-._~][A-Za-z0-9\-._~/]*)?")
_tzinfo = attrgetter("tzinfo")
_TAIL_CACHE_SIZE = 256


class Renderer:
    """Renders batches for one sitemap (its site, scope and timezone rule)."""

    def __init__(self, rules: EntryRules) -> None:
        self.rules = rules
        site = rules.site
        self.root = site.base_url[:-1]  # "/path" is appended to it
        self.scope_path = site.scope[len(self.root) :]
        self.room = site.max_loc_length - len(self.root)  # the longest plain path
        self.naive_is_utc = rules.naive_timezone is UTC
        # "(changefreq, priority)" -> the closing part of a <url>, for values already checked.
        self._tails: dict[tuple[str | None, float | None], str] = {(None, None): "</url>\n"}

    def _tail(self, changefreq: object, priority: object) -> str | None:
        if not (changefreq is None or type(changefreq) is str) or not (
            priority is None or type(priority) is float
        ):
            return None
        try:
            parts = []
            if changefreq is not None:
                parts.append(f"<changefreq>{format_changefreq(changefreq)}</changefreq>")
            if priority is not None:
                parts.append(f"<priority>{format_priority(priority)}</priority>")
        except (ValueError, TypeError):
            return None  # the full rules report it
        tail = "".join(parts) + "</url>\n"
        if len(self._tails) < _TAIL_CACHE_SIZE:
            self._tails[(changefreq, priority)] = tail
        return tail

    def elements(self, source: str, batch: Batch) -> list[str]:
        """The ``<url>`` elements of a batch, in order; bad rows follow the bad-row rule."""
        if not batch:
            return []
        uniform = self._uniform(source, batch)
        return uniform if uniform is not None else self._rows(source, batch)

    def _uniform(self, source: str, batch: Batch) -> list[str] | None:
        """A batch of the common shape in a few C-level passes: one (changefreq, priority)
        pair, lastmods all absent, all naive datetimes read as UTC, or all dates, and string
        locs. Plain paths are written directly, other locs go through the rules.
        None when the batch has another shape."""
        count = len(batch)
        locs, lastmods = batch.locs, batch.lastmods
        changefreqs, priorities = batch.changefreqs, batch.priorities
        changefreq, priority = changefreqs[0], priorities[0]
        # Compare types too: True == 1.0, yet a bool is not a priority.
        for value, column, kind in (
            (changefreq, changefreqs, str),
            (priority, priorities, float),
        ):
            if value is None:
                if column.count(None) != count:
                    return None
            elif set(map(type, column)) != {kind} or column.count(value) != count:
                return None
        tail = self._tails.get((changefreq, priority)) or self._tail(changefreq, priority)
        if tail is None:
            return None
        texts: list[str] | None = None
        if lastmods.count(None) != count:
            kinds = set(map(type, lastmods))
            if kinds == {datetime} and self.naive_is_utc:
                if list(map(_tzinfo, lastmods)).count(None) != count:
                    return None
                texts = list(map(datetime.isoformat, lastmods))
                if max(map(len, texts)) > 19:  # fractions of a second are dropped
                    texts = [text[:19] for text in texts]
                tail = "</lastmod>" + tail
                zone = "+00:00"
            elif kinds == {date}:
                texts = list(map(date.isoformat, lastmods))
                tail = "</lastmod>" + tail
                zone = ""
            else:
                return None
        try:
            plain = list(map(_PLAIN_PATH.fullmatch, locs))
        except TypeError:  # a loc that is not a string
            return None
        lengths = list(map(len, locs))
        root = self.root
        if max(lengths) > self.rules.site.max_loc_length - len(root) or min(
            lengths
        ) < MIN_LOC_LENGTH - len(root):
            return None
        if self.scope_path != "/":
            scope = self.scope_path
            plain = [
                m if m and loc.startswith(scope) else None
                for m, loc in zip(plain, locs, strict=True)
            ]
        if texts is None:
            out = [f"<url><loc>{root}{loc}</loc>{tail}" for loc in locs]
        else:
            out = [
                f"<url><loc>{root}{loc}</loc><lastmod>{text}{zone}{tail}"
                for loc, text in zip(locs, texts, strict=True)
            ]
        if None not in plain:
            return out
        # Locs that need encoding or escaping (or are bad): the loc rule, the rest as checked.
        for at, m in enumerate(plain):
            if m is None:
                loc = locs[at]
                url = self.rules.check_loc(source, batch.keys[at], loc)
                # The element so far starts "<url><loc>{root}{loc}</loc>"; keep what follows.
                rest = out[at][len(root) + len(loc) + 16 :] if url is not None else ""
                out[at] = f"<url><loc>{escape(url)}</loc>{rest}" if url is not None else ""
        return [element for element in out if element]

    def _checked(self, source: str, raw: RawEntry) -> str:
        """One row through the full rules; ``""`` when it is skipped."""
        url = self.rules.check(source, raw)
        return "" if url is None else url_element(url)

    def _rows(self, source: str, batch: Batch) -> list[str]:
        """Row by row: a fast path per row, the full rules for the rest."""
        root, scope_path, plain = self.root, self.scope_path, _PLAIN_PATH.fullmatch
        room = self.room
        shortest = MIN_LOC_LENGTH - len(root)
        naive_is_utc, tails = self.naive_is_utc, self._tails
        out: list[str] = []
        for raw in batch.rows():
            _, loc, lastmod, changefreq, priority = raw
            if (
                type(loc) is str
                and shortest <= len(loc) <= room
                and loc.startswith(scope_path)
                and plain(loc)
            ):
                try:
                    # True == 1.0 would find 1.0's tail, but a bool is not a priority.
                    tail = None if type(priority) is bool else tails.get((changefreq, priority))
                except TypeError:  # unhashable field: the full rules report it
                    tail = None
                if tail is None:
                    tail = self._tail(changefreq, priority)
                if tail is not None:
                    if lastmod is None:
                        out.append(f"<url><loc>{root}{loc}</loc>{tail}")
                        continue
                    kind = type(lastmod)
                    if kind is datetime and naive_is_utc and lastmod.tzinfo is None:
                        text = lastmod.isoformat()
                        out.append(
                            f"<url><loc>{root}{loc}</loc><lastmod>{text[:19]}+00:00</lastmod>{tail}"
                        )
                        continue
                    if kind is date:
                        out.append(
                            f"<url><loc>{root}{loc}</loc><lastmod>{lastmod.isoformat()}</lastmod>{tail}"
                        )
                        continue
            element = self._checked(source, raw)
            if element:
                out.append(element)
        return out

    def extended(
        self, source: str, batch: Batch, shape: Shape, news_cutoff: datetime | None
    ) -> list[str]:
        """The ``<url>`` elements of a batch whose rows carry extensions (full rules per row)."""
        extras = batch.extras
        assert extras is not None
        out = []
        for raw, extensions in zip(batch.rows(), extras, strict=True):
            url = self.rules.check(source, raw)
            if url is None:
                continue
            if extensions is not None:
                url = self.rules.extend(source, raw[0], url, extensions, shape, news_cutoff)
            out.append(url_element(url))
        return out
