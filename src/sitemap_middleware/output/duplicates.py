"""No loc twice in one document: the locs a ``urlset`` has listed so far.

Two locs are one when their final URIs are equal in comparison form
(:func:`~sitemap_middleware.core.urls.comparison_form`): ``with space`` and
``with%20space``, ``müsli`` and ``m%C3%BCsli`` give one URI. The first in
document order is listed, later ones are bad rows. A document holds at most
``max_urls`` URLs, so the memory is bounded by that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.urls import Site, comparison_form

NO_CHECKED: Mapping[int, str | None] = {}
_GAP = object()  # stands for a checked row among a batch's plain locs


class SeenLocs:
    """The listed locs of one document, as paths relative to the site's root.

    Template locs written in parts (``before + middle + after``, see
    :class:`~sitemap_middleware.output.entry.Affixed`) are remembered by their
    middles, so that a batch of them is checked in a few C-level set
    operations, without building the paths. Every path of that one shape is
    kept as its middle (whichever way it came), so a path has one key.
    """

    def __init__(self, site: Site) -> None:
        self.root = site.base_url[:-1]
        self.paths: set[str] = set()
        self.affixes: tuple[str, str] | None = None
        self.middles: set[str] = set()

    def __len__(self) -> int:
        return len(self.paths) + len(self.middles)

    def first_url(self, url: str) -> bool:
        """Whether a checked loc (an absolute URI on the site) is new here; it is remembered."""
        return self.first_path(comparison_form(url[len(self.root) :]))

    def first_path(self, path: str) -> bool:
        """Whether a root-relative path in comparison form is new here; it is remembered."""
        store, key = self._place(path)
        if key in store:
            return False
        store.add(key)
        return True

    def repeats(
        self,
        values: Sequence[str],
        before: str = "",
        after: str = "",
        checked: Mapping[int, str | None] = NO_CHECKED,
    ) -> list[int]:
        """The positions of a batch's locs listed before (earlier in the batch included);
        the others are remembered.

        ``before + values[i] + after`` is the root-relative path of row ``i``, in
        comparison form already (a plain path, or one the renderer encoded), except for
        the rows in ``checked``
        (ascending positions), whose final URI the rules gave (None: the row was
        skipped, so it is ignored).
        """
        if (before or after) and self.affixes is None:
            self._adopt(before, after)
        if (before, after) != (self.affixes or ("", "")):
            return self._one_by_one(values, before, after, checked)
        store = self.middles if self.affixes is not None else self.paths
        keys: Sequence[Any] = values
        if checked:
            keys = list(values)
            for at in checked:
                keys[at] = _GAP
        # The common batch: its plain locs are distinct and new. Two C-level passes over the
        # store tell: none is there, and adding them all adds as many keys as there are
        # (else they are taken out again: none was there before).
        size = len(store)
        if not store.isdisjoint(keys):
            return self._one_by_one(values, before, after, checked)
        store.update(keys)
        store.discard(_GAP)
        if len(store) - size != len(values) - len(checked):
            store.difference_update(keys)
            return self._one_by_one(values, before, after, checked)
        if not checked:
            return []
        batch = set(keys)
        found: list[int] = []
        demoted: set[int] = set()
        for at, url in checked.items():
            if url is None:
                continue
            place, key = self._place(comparison_form(url[len(self.root) :]))
            if key not in place:
                place.add(key)
                continue
            if place is store and key in batch:
                # Also a plain loc of this batch: the later of the two is the repeat.
                plain_at = keys.index(key)
                if plain_at > at and plain_at not in demoted:
                    demoted.add(plain_at)
                    found.append(plain_at)
                    continue
            found.append(at)
        return sorted(found)

    def _one_by_one(
        self,
        values: Sequence[str],
        before: str,
        after: str,
        checked: Mapping[int, str | None],
    ) -> list[int]:
        """:meth:`repeats` row by row, in document order (a batch with repeats in it)."""
        direct = (before, after) == (self.affixes or ("", ""))
        found = []
        for at, value in enumerate(values):
            if at in checked:
                url = checked[at]
                if url is None:
                    continue
                new = self.first_url(url)
            elif direct:
                new = self.first_path(value) if self.affixes is None else self._first_middle(value)
            else:
                new = self.first_path(before + value + after)
            if not new:
                found.append(at)
        return found

    def _first_middle(self, middle: str) -> bool:
        if middle in self.middles:
            return False
        self.middles.add(middle)
        return True

    def _place(self, path: str) -> tuple[set[str], str]:
        """The set a path's key belongs to, and the key."""
        if self.affixes is not None:
            before, after = self.affixes
            if (
                len(path) >= len(before) + len(after)
                and path.startswith(before)
                and path.endswith(after)
            ):
                return self.middles, path[len(before) : len(path) - len(after)]
        return self.paths, path

    def _adopt(self, before: str, after: str) -> None:
        """Keep paths of this shape as their middles from now on, those seen so far too."""
        self.affixes = (before, after)
        for path in list(self.paths):
            store, key = self._place(path)
            if store is self.middles:
                self.paths.discard(path)
                self.middles.add(key)
