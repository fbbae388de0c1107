"""Bounding a long list the way ``check`` does: the first few, or a sample spread evenly."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def choose(children: list[T], max_children: int | None, sample: int | None) -> list[T]:
    """The children to fetch: all, the first ``max_children``, or ``sample`` spread evenly
    (first and last included), so a sample of a huge index sees both ends."""
    if sample is not None and sample < len(children):
        if sample <= 1:
            return children[:sample]
        step = (len(children) - 1) / (sample - 1)
        return [children[round(i * step)] for i in range(sample)]
    if max_children is not None:
        return children[:max_children]
    return children
