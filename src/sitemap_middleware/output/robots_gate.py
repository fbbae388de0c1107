"""``robots_filter``: the rows whose loc the site's ``robots.txt`` disallows, left out of a
document before it is rendered.

Each one is a bad row of its source (``robots-disallowed``: counted, logged once), never
left out silently. A loc that cannot be listed at all is left to the bad-row rule, which
reports it for what it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.urls import LocError
from ..state.robots_rules import Rules
from .entry import Batch, EntryRules


class RobotsGate:
    """Leaves out of each batch the rows ``robots`` disallows (``rules``: the host's, which
    resolve the locs and count the rows left out)."""

    __slots__ = ("_robots", "_rules")

    def __init__(self, rules: EntryRules, robots: Rules) -> None:
        self._rules = rules
        self._robots = robots

    def admit(self, source: str, batch: Batch) -> Batch:
        """``batch`` without its disallowed rows (the same object when none is)."""
        robots, site = self._robots, self._rules.site
        if robots.matcher is None:
            return batch
        kept: list[int] = []
        for at, loc in enumerate(batch.locs):
            if type(loc) is str:
                try:
                    url = site.resolve(loc)
                except (LocError, ValueError, UnicodeError):
                    url = None  # the bad-row rule reports it
                if url is not None and not robots.allowed(url):
                    self._rules.robots_disallowed(source, batch.keys[at], url)
                    continue
            kept.append(at)
        if len(kept) == len(batch):
            return batch
        return _pick(batch, kept)


def _pick(batch: Batch, kept: list[int]) -> Batch:
    def column(values: Any) -> list[Any]:
        return [values[at] for at in kept]

    return replace(
        batch,
        keys=column(batch.keys),
        locs=column(batch.locs),
        lastmods=column(batch.lastmods),
        changefreqs=column(batch.changefreqs),
        priorities=column(batch.priorities),
        lastmod_texts=None if batch.lastmod_texts is None else column(batch.lastmod_texts),
        extras=None if batch.extras is None else column(batch.extras),
    )
