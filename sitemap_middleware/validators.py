"""``ETag`` and ``Last-Modified`` from the data and the configuration only.

No process state and no clock goes into an ETag, so every replica and every
restart gives the same tag for the same data. Tags are weak (``W/``): they
stand for "the same sitemap", and stay correct when a proxy compresses the
body; If-None-Match uses weak comparison anyway.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

FORMAT_VERSION = "1"
"""Bumped whenever the bytes written for the same data change."""


@dataclass(frozen=True, slots=True)
class Summary:
    """What a source says, cheaply, about the entries of one key range.

    ``newest`` is the newest lastmod (aware UTC) or None when there is none;
    ``count`` the number of rows, when known; ``token`` a string that changes
    whenever the rows of the range change (added, deleted, edited, moved).
    """

    newest: datetime | None
    count: int | None
    token: str


def make_etag(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    digest.update(FORMAT_VERSION.encode())
    for part in parts:
        digest.update(b"\x1f")
        digest.update(part.encode("utf-8", "surrogatepass"))
    return 'W/"' + base64.urlsafe_b64encode(digest.digest()[:18]).decode("ascii") + '"'


def last_modified(newest: Iterable[datetime | None], now: datetime) -> datetime | None:
    """The newest of the given moments, in whole seconds, never later than ``now``.

    RFC 9110 §8.8.2.1: an origin server must not send a Last-Modified later than
    its Date; a future value (clock skew, a future lastmod) becomes ``now``.
    """
    known = [moment for moment in newest if moment is not None]
    if not known:
        return None
    moment = max(known).astimezone(UTC).replace(microsecond=0)
    now = now.astimezone(UTC).replace(microsecond=0)
    return min(moment, now)
