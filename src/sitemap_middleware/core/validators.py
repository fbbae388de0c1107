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
from datetime import UTC, datetime, timedelta

FORMAT_VERSION = "2"
"""Bumped whenever the bytes written for the same data change."""

DATE_LAG = timedelta(seconds=2)
"""How far the server's ``Date`` may lag the clock the middleware reads for a request.

``Date`` is a singleton field and the server's to write: uvicorn and hypercorn add their own
to every response, werkzeug's server too (two fields if the application sent one), gunicorn
drops the application's, waitress and wsgiref add theirs when it has none. So no answer of
the middleware carries one, and ``Last-Modified`` is capped below any the server may write:
uvicorn's (gunicorn's uvicorn worker's) is the one it formatted at its last once-a-second
tick before the request arrived, up to a second older than the clock read after; waitress's
is when its worker took the request. The others read the clock as they send the head."""


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
    listed_until: datetime | None = None
    """The latest lastmod served when the summary was read (now + ``lastmods.tolerance``):
    later ones are bad fields, and the rows are rendered under this same listed_until."""
    expires: datetime | None = None
    """The earliest lastmod later than ``listed_until``: once ``listed_until`` reaches it that row's
    lastmod is served, so a remembered summary is stale from then on."""
    checksum: str | None = None
    """The rows' checksum, when the source reads one (pages kept current compare it)."""

    def fresh(self, listed_until: datetime) -> bool:
        """Whether this summary still describes the rows served under ``listed_until``."""
        return self.expires is None or listed_until < self.expires


def make_etag(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    digest.update(FORMAT_VERSION.encode())
    for part in parts:
        digest.update(b"\x1f")
        digest.update(part.encode("utf-8", "surrogatepass"))
    return 'W/"' + base64.urlsafe_b64encode(digest.digest()[:18]).decode("ascii") + '"'


def last_modified(newest: Iterable[datetime | None], now: datetime) -> datetime | None:
    """The newest of the given moments, in whole seconds, never later than ``now`` less
    :data:`DATE_LAG`.

    RFC 9110 §8.8.2.1: an origin server must not send a Last-Modified later than
    its Date. The Date is the server's, read at the request (``now``) or up to a
    second before it (a cached one), hence the lag. A lastmod within
    ``lastmods.tolerance`` of the clock is capped this way.
    """
    known = [moment for moment in newest if moment is not None]
    if not known:
        return None
    moment = max(known).astimezone(UTC).replace(microsecond=0)
    cap = now.astimezone(UTC).replace(microsecond=0) - DATE_LAG
    return min(moment, cap)
