"""A SQLAlchemy source's summaries read from its aggregate rows, and what is remembered
between requests: with a version, the summary of each key range until the version moves."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Row

from ...core.dates import AsOf, iso
from ...core.validators import Summary
from ..base import KeyRange
from .aggregates import Aggregates
from .change_counter import ChangeCounter

if TYPE_CHECKING:
    from .options import SQLOptions

UNKNOWN = object()
"""No lowest key remembered for this version."""


class SQLSummaries:
    """Summaries from aggregate rows; remembered per version and key range."""

    def __init__(self, options: SQLOptions, aggregates: Aggregates) -> None:
        self.aggregates = aggregates
        self.lastmod_name = options.lastmod_name
        self.version = options.version
        self._lowest_by_version: tuple[str, Any] | None = None
        # With a version: per key range, the version its summary was read for.
        self._by_range: dict[tuple[KeyRange, tzinfo], tuple[str, Summary]] = {}

    def lowest_for(self, version: Any) -> Any:
        """The lowest key remembered for an application's version (a callable): the version
        changes whenever the data does."""
        known = self._lowest_by_version
        return known[1] if known is not None and known[0] == repr(version) else UNKNOWN

    def remember_lowest(self, version: Any, lowest: Any) -> None:
        self._lowest_by_version = (repr(version), lowest)

    @staticmethod
    def must_cut(lowest: Any) -> bool:
        """Whether a fixed-range source's data needs cut pages (a key below 0)."""
        return lowest is not None and lowest < 0

    def version_of(self, value: Any) -> Any:
        """The version a statement or callable gave, as the token knows it."""
        if isinstance(self.version, ChangeCounter):
            return self.version.token(value)
        return value

    def cached(self, version: Any, keys: KeyRange, as_of: AsOf) -> Summary | None:
        """The summary already read for this version of the rows in ``keys``, if any and
        if no lastmod it saw in the future is due by ``listed_until``."""
        known = self._by_range.get((keys, as_of.naive_timezone))
        if known is not None and known[0] == repr(version) and known[1].fresh(as_of.listed_until):
            return known[1]
        return None

    def summary(
        self,
        row: Row[Any] | None,
        version: Any,
        keys: KeyRange,
        as_of: AsOf,
    ) -> Summary:
        assert row is not None
        values = tuple(row)
        count, low, high, checksum = values[0], values[1], values[2], values[3]
        epochs = self.aggregates.range_pass
        newest, expires = lastmod_moments(
            self.aggregates, self.lastmod_name, values[4:6], as_of, epochs
        )
        # Which lastmods are served changes when ``listed_until`` passes the earliest future one.
        moments = f"{iso(newest)}:{iso(expires)}"
        if self.version is None:
            token = f"n:{count}:{low!r}:{high!r}:{checksum}:{moments}"
            return Summary(newest, count, token, as_of.listed_until, expires, str(checksum))
        # The version says when the rows changed: remember the summary until it moves.
        summary = Summary(newest, count, f"v:{version!r}:{moments}", as_of.listed_until, expires)
        if len(self._by_range) >= 100_000:
            self._by_range.clear()
        self._by_range[(keys, as_of.naive_timezone)] = (repr(version), summary)
        return summary


def lastmod_moments(
    aggregates: Aggregates,
    lastmod_name: str | None,
    values: Sequence[Any],
    as_of: AsOf,
    epochs: bool = False,
) -> tuple[datetime | None, datetime | None]:
    """The newest served and earliest future lastmod of an aggregate's last two values."""
    if lastmod_name is None:
        return None, None
    moment = aggregates.moment
    return (
        moment(values[0], as_of, newest=True, epochs=epochs),
        moment(values[1], as_of, newest=False, epochs=epochs),
    )
