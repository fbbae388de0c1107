"""Which pages ``check --audit-lastmod N`` requests: N spread over every sitemap checked.

Each ``urlset`` keeps a *pre-sample* of at most N of its in-scope entries as
it is read (evenly spread, first and last included, or a seeded random
sample), so memory holds N entries per sitemap, never the whole site. Once
every sitemap is read, N is shared between them as evenly as their sizes
allow (a sitemap smaller than its share gives the rest to the others), in the
index's order, and each takes its share from its pre-sample. The same
sitemaps and the same seed give the same pages, whatever ``--concurrency``.
``check --audit-indexable N`` samples the same way, with N for each source.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TypeVar

from .spread import choose

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Listed:
    """One URL as a sitemap lists it."""

    loc: str
    lastmod: str | None


def presample(entries: list[T], size: int, seed: int | None, sitemap: str) -> list[T]:
    """At most ``size`` of ``entries`` in the order they are to be taken: spread evenly over
    the sitemap, or (with a seed) a random sample, its random order kept so that any prefix
    of it is a random sample too."""
    if seed is None:
        return choose(entries, None, size)
    rng = random.Random(f"{seed}:{sitemap}")
    return rng.sample(entries, min(size, len(entries)))


def take(candidates: list[T], count: int, seed: int | None) -> list[T]:
    """``count`` of a pre-sample: a spread of the spread, or the random sample's prefix."""
    if seed is None:
        return choose(candidates, None, count)
    return candidates[:count]


def allocate(sizes: list[int], total: int) -> list[int]:
    """Share ``total`` between sitemaps of ``sizes`` entries: equal shares (the earlier
    sitemaps take the remainder), none more than its size, what a small one cannot take
    passed on to the others. The shares add up to ``min(total, sum(sizes))``."""
    shares = [0] * len(sizes)
    remaining = total
    open_ = [i for i, size in enumerate(sizes) if size > 0]
    while remaining > 0 and open_:
        each = remaining // len(open_)
        # Whole rounds while they fit; the last few go one each to the earliest sitemaps.
        for i in open_ if each else open_[:remaining]:
            given = min(sizes[i] - shares[i], each or 1)
            shares[i] += given
            remaining -= given
        open_ = [i for i in open_ if shares[i] < sizes[i]]
    return shares
