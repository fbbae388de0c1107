"""The value rules of the sitemap schema and protocol: ``loc``, ``lastmod``, ``changefreq``,
``priority``.

Pure functions, no I/O. What the official XSDs accept (``xsd:date |
xsd:dateTime``, ``xsd:decimal`` in 0.0-1.0) libxml2 judges itself, with the XSDs'
simple types built from :mod:`sitemap_middleware.core.spec` (no schema file is
needed); the ``anyURI`` length and the ``changefreq`` enumeration are compared with
the same constants. The other rules are the protocol's own, which no schema can
express (absolute, percent-encoded locs under 2,048 characters; W3C Datetime, read
by :func:`sitemap_middleware.core.dates.parse_w3c` as the writer reads it).
"""

from __future__ import annotations

import functools
import re
import threading
from datetime import date, datetime, timedelta, timezone
from urllib.parse import urlsplit

from lxml import etree

from ..core.dates import LastmodError, later_than, parse_w3c
from ..core.spec import (
    CHANGEFREQS,
    MAX_LOC_LENGTH,
    MAX_PRIORITY,
    MIN_LOC_LENGTH,
    MIN_PRIORITY,
    XML_WHITESPACE,
    XSD_MAX_LOC_LENGTH,
    XSD_MAX_OFFSET,
)
from ..core.urls import LONE_PERCENT

# XSD whitespace "collapse" applies to anyURI, date, dateTime and decimal.
_XSD_SPACE = re.compile(r"[ \t\n\r]+")
# RFC 3986 characters; anything else in a loc must be percent-encoded.
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
# The common case, checked in one match: a lowercase http(s) origin and RFC 3986 characters.
_PLAIN_LOC = re.compile(
    r"https?://[a-z0-9.\-]+(?::[0-9]{1,5})?/[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*"
    r"(?:%[0-9A-Fa-f]{2}[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*)*"
)
# A minute of tolerance for clock skew between the site and this machine.
CLOCK_SKEW = timedelta(minutes=1)
# A date is "today" somewhere once it has begun at the easternmost offset the XSD allows:
# future only when no zone has reached it yet. It ends last at UTC-12.
EARLIEST_DAY = timezone(XSD_MAX_OFFSET)
_LATEST_DAY = timezone(-timedelta(hours=12))


def collapse(value: str) -> str:
    """XSD whitespace collapse: trim, and runs of space/tab/newline become one space."""
    return _XSD_SPACE.sub(" ", value).strip(" ")


# The simple types of sitemap.xsd's lastmod and priority, as the XSD writes them.
_TYPES = f"""<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <xsd:element name="lastmod">
    <xsd:simpleType><xsd:union memberTypes="xsd:date xsd:dateTime"/></xsd:simpleType>
  </xsd:element>
  <xsd:element name="decimal" type="xsd:decimal"/>
  <xsd:element name="priority">
    <xsd:simpleType>
      <xsd:restriction base="xsd:decimal">
        <xsd:minInclusive value="{MIN_PRIORITY}"/><xsd:maxInclusive value="{MAX_PRIORITY}"/>
      </xsd:restriction>
    </xsd:simpleType>
  </xsd:element>
</xsd:schema>"""


class _Types(threading.local):
    """The types, loaded once per thread (an lxml schema validates in one thread at a time)."""

    def __init__(self) -> None:
        self.schema = etree.XMLSchema(etree.fromstring(_TYPES))
        self.elements = {name: etree.Element(name) for name in ("lastmod", "decimal", "priority")}


_types = _Types()


def _xsd_accepts(name: str, value: str) -> bool:
    """Whether libxml2 takes ``value`` as the XSD type of element ``name``."""
    element = _types.elements[name]
    try:
        element.text = value
    except ValueError:  # a character no XML document holds
        return False
    return bool(_types.schema.validate(element))


def xsd_lastmod(value: str) -> bool:
    """Whether the XSD's ``xsd:date | xsd:dateTime`` union accepts ``value``."""
    return _xsd_accepts("lastmod", value)


def w3c_moment(value: str) -> datetime | date | None:
    """The moment a W3C Datetime names (year-only and year-month forms: their first day),
    or None when ``value`` is not W3C Datetime."""
    try:
        return parse_w3c(value, None, partial=True)
    except LastmodError:
        return None


@functools.lru_cache(maxsize=65_536)
def _lastmod(value: str) -> tuple[bool, datetime | date | None]:
    """Whether the XSD accepts it, and the W3C moment (sitemaps repeat their dates a lot)."""
    moment = w3c_moment(value)
    if moment is not None and _xsd_offset(moment):
        # W3C's day and seconds forms are xsd:date and xsd:dateTime (their zones up to 14
        # hours): the XSD accepts them, no need to ask it.
        text = value.strip(XML_WHITESPACE)
        if len(text) == len("YYYY-MM-DD") or text[16:17] == ":":
            return True, moment
    return xsd_lastmod(value), moment


def lastmod_problems(value: str, now: datetime) -> list[tuple[str, str]]:
    """(code, message) for a lastmod: XSD-invalid, not W3C Datetime, or in the future."""
    xsd_ok, moment = _lastmod(value)
    if not xsd_ok:
        if moment is not None and _xsd_offset(moment):
            return [
                (
                    "schema.lastmod",
                    "lastmod is W3C Datetime but not an xsd:date/xsd:dateTime (the XSD rejects "
                    "year-only, year-month and minute-precision forms); write YYYY-MM-DD or "
                    "YYYY-MM-DDThh:mm:ss+hh:mm",
                )
            ]
        return [("schema.lastmod", "lastmod is not a date or date-time the XSD accepts")]
    if moment is None:
        return [
            (
                "lastmod.w3c",
                "lastmod is accepted by the XSD but is not W3C Datetime (a time needs a "
                "timezone, a date takes none; years have four digits; hours end at 23)",
            )
        ]
    if is_future(moment, now):
        return [("lastmod.future", "lastmod is in the future")]
    return []


def _xsd_offset(moment: datetime | date) -> bool:
    """Whether the zone is one the XSD takes (W3C Datetime's run past 14 hours)."""
    offset = moment.utcoffset() if isinstance(moment, datetime) else None
    return offset is None or abs(offset) <= XSD_MAX_OFFSET


def day_ends_last(day: date) -> datetime:
    """The end of a date wherever on Earth it ends last (UTC-12): past it, no one's
    ``2024-05-06`` is still today."""
    return datetime(day.year, day.month, day.day, tzinfo=_LATEST_DAY) + timedelta(days=1)


def is_future(moment: datetime | date, now: datetime) -> bool:
    """The rule the writer applies to its own lastmods, with a reader's allowances: the
    clock skew, and a date counted from its start east of UTC."""
    return later_than(moment, now + CLOCK_SKEW, EARLIEST_DAY)


def changefreq_problem(value: str) -> str | None:
    if value in CHANGEFREQS:
        return None
    return f"changefreq must be exactly one of {', '.join(CHANGEFREQS)} (lowercase, no spaces)"


def priority_problem(value: str) -> str | None:
    if _xsd_accepts("priority", value):
        return None
    if not _xsd_accepts("decimal", value):
        return "priority must be a plain decimal such as 0.5 (no exponent)"
    return f"priority must lie between {MIN_PRIORITY} and {MAX_PRIORITY}"


def loc_problems(value: str) -> list[tuple[str, str]]:
    """(code, message) for a loc: length (XSD and protocol), absolute http(s), encoded."""
    if MIN_LOC_LENGTH <= len(value) <= MAX_LOC_LENGTH and _PLAIN_LOC.fullmatch(value):
        return []
    problems = []
    text = value.strip(XML_WHITESPACE)
    if text != value:
        problems.append(("loc.whitespace", "loc has whitespace around the URL"))
    length = len(collapse(value))  # what the XSD measures
    if length < MIN_LOC_LENGTH:
        problems.append(
            ("schema.loc", f"loc is shorter than the XSD's {MIN_LOC_LENGTH} characters")
        )
    elif length > MAX_LOC_LENGTH:
        code = "schema.loc" if length > XSD_MAX_LOC_LENGTH else "loc.length"
        problems.append(
            (code, f"loc is {MAX_LOC_LENGTH + 1:,} characters or longer; it must be shorter")
        )
    try:
        parts = urlsplit(text)
        absolute = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        absolute = False
    if not absolute:
        problems.append(("loc.absolute", "loc is not an absolute http(s) URL"))
    if not _URI_CHARS.fullmatch(text) or LONE_PERCENT.search(text):
        problems.append(
            (
                "loc.encoding",
                "loc is not a percent-encoded URI (whitespace, characters outside RFC 3986 "
                "or a % without two hex digits)",
            )
        )
    return problems
