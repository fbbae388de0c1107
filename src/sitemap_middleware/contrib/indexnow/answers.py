"""What an IndexNow endpoint's answer means, and how long to wait before trying again.

* ``200`` (received) and ``202`` (received, the key is being checked): accepted; the
  watermark advances.
* ``400``, ``403``, ``422`` and any other ``4xx`` but ``429``: rejected; the source's
  push stops with an error saying what the endpoint refused (a ``403`` is the key, a
  ``422`` a URL outside the host or a key of the wrong form). Sending the same batch
  again would be refused again.
* ``429`` (too many requests), ``5xx``, a network error or a timeout: try again later,
  after ``Retry-After`` when the endpoint sends one, else after a delay that doubles
  each time, never more than the cap. The watermark stays where it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ...core.http import parse_http_date

REASONS = {
    400: "malformed request (400): the endpoint could not read the submission",
    403: "key not valid (403): the key file at keyLocation is missing or does not hold "
    "the key; check indexnow.key and that the key file is served",
    422: "unprocessable (422): a URL is not on the submitted host, or the key does not "
    "match the protocol's form",
}


@dataclass(frozen=True, slots=True)
class Accepted:
    status: int


@dataclass(frozen=True, slots=True)
class Rejected:
    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class Retry:
    reason: str
    after: float | None = None
    """Seconds the endpoint asked for (``Retry-After``), if it did."""


Verdict = Accepted | Rejected | Retry


def verdict(status: int, retry_after: str | None, body: str, now: datetime) -> Verdict:
    """The meaning of the endpoint's answer (``body``: its first characters, for errors)."""
    if status in (200, 202):
        return Accepted(status)
    if status == 429 or status >= 500:
        label = "too many requests (429)" if status == 429 else f"server error ({status})"
        return Retry(label, retry_seconds(retry_after, now))
    reason = REASONS.get(status, f"refused ({status})")
    detail = " ".join(body.split())[:200]
    return Rejected(status, f"{reason}; the endpoint said: {detail}" if detail else reason)


def retry_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds or an HTTP date; None if absent or
    unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    moment = parse_http_date(text, now)
    if moment is None:
        return None
    return max(0.0, (moment - now.astimezone(UTC)).total_seconds())


@dataclass
class Backoff:
    """Growing delays between attempts: ``first``, doubled each time, at most ``cap``; a
    ``Retry-After`` is honoured up to the cap. :meth:`reset` after an accepted post."""

    first: float = 1.0
    cap: float = 300.0
    failures: int = 0

    def delay(self, asked: float | None) -> float:
        """The wait before the next attempt, after one more failure."""
        self.failures += 1
        grown = min(self.cap, self.first * 2.0 ** (self.failures - 1))
        return min(self.cap, max(grown, asked)) if asked is not None else grown

    def reset(self) -> None:
        self.failures = 0
