"""HTTP dates, entity tags and the RFC 9110 §13 precondition decision, as pure functions."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from .spec import ENTITY_TAG

_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_LONG_DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH = "|".join(_MONTHS)
_TIME = r"(\d\d):(\d\d):(\d\d)"
# RFC 9110 §5.6.7: all three forms must be accepted. Matching is case-insensitive
# and tolerates surrounding spaces and tabs ("recipients ... encouraged to be robust"),
# but only ASCII: no other script's digits, no long s (U+017F) for "s".
_IMF_FIXDATE = re.compile(rf"(?:{_DAYS}), (\d\d) ({_MONTH}) (\d{{4}}) {_TIME} GMT", re.I | re.A)
_RFC850 = re.compile(rf"(?:{_LONG_DAYS}), (\d\d)-({_MONTH})-(\d\d) {_TIME} GMT", re.I | re.A)
_ASCTIME = re.compile(rf"(?:{_DAYS}) ({_MONTH}) ([ \d]\d) {_TIME} (\d{{4}})", re.I | re.A)
_OWS = " \t"
_MONTH_NUMBER = {name.lower(): i for i, name in enumerate(_MONTHS, 1)}

_ENTITY_TAG = re.compile(rf"[ \t]*({ENTITY_TAG.pattern})[ \t]*(?:,|$)")

SINGLETON_FIELDS = (
    "age",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expires",
    "last-modified",
    "location",
    "retry-after",
    "server",
)
"""Response fields whose grammar is one value, not a list (RFC 9110; ``Age`` and ``Expires``
RFC 9111): a message carries each at most once (§5.3), for a recipient that merges repeated
lines reads a comma-joined value that is none. List-based fields (``Cache-Control``,
``Vary``, ``Content-Encoding``, ``Allow``) may be repeated."""


def format_http_date(moment: datetime) -> str:
    """IMF-fixdate, the only form a sender may generate."""
    return _imf_fixdate(moment.astimezone(UTC).replace(microsecond=0))


@functools.lru_cache(maxsize=64)  # a request formats the clock's second and a Last-Modified
def _imf_fixdate(moment: datetime) -> str:
    return (
        f"{('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun')[moment.weekday()]}, "
        f"{moment.day:02d} {_MONTHS[moment.month - 1]} {moment.year:04d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} GMT"
    )


def parse_http_date(value: str, now: datetime | None = None) -> datetime | None:
    """An HTTP-date in any of its three forms as aware UTC, or None if invalid."""
    value = value.strip(_OWS)
    if m := _IMF_FIXDATE.fullmatch(value):
        day, month, year, hh, mm, ss = m.groups()
    elif m := _RFC850.fullmatch(value):
        day, month, yy, hh, mm, ss = m.groups()
        # RFC 9110: a two-digit year more than 50 years in the future is in the past century.
        current = (now or datetime.now(UTC)).year
        full = current - current % 100 + int(yy)
        if full > current + 50:
            full -= 100
        year = str(full)
    elif m := _ASCTIME.fullmatch(value):
        month, day, hh, mm, ss, year = m.groups()
    else:
        return None
    try:
        return datetime(
            int(year),
            _MONTH_NUMBER[month.lower()],
            int(day),
            int(hh),
            int(mm),
            int(ss),
            tzinfo=UTC,
        )
    except ValueError:
        return None


def parse_entity_tags(value: str) -> list[str] | None:
    """The entity-tags of an ``If-None-Match``/``If-Match`` list; None for ``*``.

    Members that are not entity-tags are left out, so garbage matches nothing.
    """
    if value.strip(_OWS) == "*":
        return None
    tags = []
    position = 0
    while position < len(value):
        m = _ENTITY_TAG.match(value, position)
        if m is None:
            # Skip to the next comma: a broken member must not hide later ones.
            comma = value.find(",", position)
            if comma < 0:
                break
            position = comma + 1
            continue
        tags.append(m.group(1))
        position = m.end()
    return tags


def opaque_tag(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


def weak_match(a: str, b: str) -> bool:
    """RFC 9110 §8.8.3.2: opaque-tags equal, either or both may be weak."""
    return opaque_tag(a) == opaque_tag(b)


def strong_match(a: str, b: str) -> bool:
    return not a.startswith("W/") and not b.startswith("W/") and a == b


def evaluate_preconditions(
    method: str,
    header_values: dict[str, Sequence[str]],
    etag: str,
    last_modified: datetime | None,
) -> int:
    """200, 304 or 412 for a GET/HEAD of a resource that exists (RFC 9110 §13.2.2).

    ``header_values`` maps lowercase field names to every line received for it.
    ``last_modified`` must already be truncated to whole seconds.
    """
    if_match = header_values.get("if-match")
    if if_match:
        tags = parse_entity_tags(", ".join(if_match))
        if tags is not None and not any(strong_match(tag, etag) for tag in tags):
            return 412
    else:
        ius = _single_date(header_values.get("if-unmodified-since"))
        if ius is not None and last_modified is not None and last_modified > ius:
            return 412
    if_none_match = header_values.get("if-none-match")
    if if_none_match:
        tags = parse_entity_tags(", ".join(if_none_match))
        if tags is None or any(weak_match(tag, etag) for tag in tags):
            return 304 if method in ("GET", "HEAD") else 412
        return 200  # If-Modified-Since is not consulted (§13.1.3)
    if method in ("GET", "HEAD") and last_modified is not None:
        ims = _single_date(header_values.get("if-modified-since"))
        if ims is not None and last_modified <= ims:
            return 304
    return 200


def _single_date(lines: Iterable[str] | None) -> datetime | None:
    """The date of a date field with exactly one member; None when absent, doubled or invalid."""
    if not lines:
        return None
    values = list(lines)
    if len(values) != 1:
        return None
    value = values[0]
    # An IMF-fixdate or rfc850 date holds one comma; more means more than one member.
    if value.count(",") > 1:
        return None
    return parse_http_date(value)


def accepts_gzip(header_values: Sequence[str] | None) -> bool:
    """Whether ``Accept-Encoding`` allows gzip (RFC 9110 §12.5.3: ``q=0`` means "not")."""
    if not header_values:
        return False
    gzip_q: float | None = None
    star_q: float | None = None
    for member in ",".join(header_values).split(","):
        coding, _, params = member.partition(";")
        coding = coding.strip().lower()
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        if coding in ("gzip", "x-gzip"):
            gzip_q = q if gzip_q is None else max(gzip_q, q)
        elif coding == "*":  # repeated members: the best weight counts, as for gzip
            star_q = q if star_q is None else max(star_q, q)
    if gzip_q is not None:
        return gzip_q > 0
    return star_q is not None and star_q > 0
