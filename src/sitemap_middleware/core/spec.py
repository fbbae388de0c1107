"""The protocol's constants and grammars, each declared here and nowhere else.

The middleware writes by these rules and ``sitemap-middleware check`` reads
by them, so both import them from this module (which imports nothing of the
package). Sources: sitemaps.org and its XSDs (namespace, limits per file,
``loc`` length, ``changefreq``, ``priority``), Google's documentation of the
image, video, news and hreflang extensions, the W3C Datetime note, RFC 9110
(entity-tags) and RFC 3986 (default ports).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from types import MappingProxyType

# XML 1.0

XML_WHITESPACE = " \t\n\r"
"""XML's whitespace: what the XSDs' whitespace collapse trims around a value."""

# sitemaps.org

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
"""The namespace of ``urlset`` and ``sitemapindex`` and their children."""
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
"""The only namespace whose attributes the sitemap elements take."""

MAX_URLS = 50_000
"""``<url>`` entries per ``urlset``."""
MAX_CHILDREN = 50_000
"""``<sitemap>`` children per ``sitemapindex``."""
MAX_BYTES = 52_428_800
"""Bytes per document, uncompressed: 50 MB (the older text said 10,485,760)."""

MIN_LOC_LENGTH = 12
"""The XSD's ``minLength`` of ``loc``."""
MAX_LOC_LENGTH = 2_047
"""sitemaps.org: a loc "must be less than 2,048 characters"."""
XSD_MAX_LOC_LENGTH = 2_048
"""The XSD's ``maxLength`` of ``loc``: one more than the protocol allows."""

URL_FIELDS = ("loc", "lastmod", "changefreq", "priority")
"""The children of ``url`` in the XSD's sequence (``loc`` required), before any extension."""
SITEMAP_FIELDS = ("loc", "lastmod")
"""The children of an index's ``sitemap``, in the XSD's sequence (``loc`` required)."""
ENTRIES: Mapping[str, tuple[str, tuple[str, ...]]] = MappingProxyType(
    {"urlset": ("url", URL_FIELDS), "sitemapindex": ("sitemap", SITEMAP_FIELDS)}
)
"""Each root element: the entry element it repeats (at least once) and that entry's fields."""

CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
"""The ``changefreq`` values, in the XSD's order."""
MIN_PRIORITY = 0.0
MAX_PRIORITY = 1.0

# W3C Datetime (https://www.w3.org/TR/NOTE-datetime): YYYY, YYYY-MM, YYYY-MM-DD, then a
# time hh:mm, hh:mm:ss or hh:mm:ss.s followed by its zone designator (Z or +hh:mm).
# re.ASCII: \d would also match other scripts' digits, which int() accepts and XML does not.
_W3C_FORM = r"(\d{{4}})(?:-(\d\d)(?:-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?{zone})?)?)?"
_W3C_ZONE = r"(Z|[+-]\d\d:[0-5]\d)"
W3C_DATETIME = re.compile(_W3C_FORM.format(zone=_W3C_ZONE), re.ASCII)
"""A W3C Datetime. Groups: year, month, day, hour, minute, second, zone."""
W3C_DATETIME_ZONE_OPTIONAL = re.compile(_W3C_FORM.format(zone=_W3C_ZONE + "?"), re.ASCII)
"""A W3C Datetime or one whose time has no zone (a source's naive time): groups as above."""
XSD_MAX_OFFSET = timedelta(hours=14)
"""``xsd:dateTime`` takes zones from -14:00 to +14:00 (W3C Datetime's run to 23:59)."""

# Google's extensions

XHTML_NS = "http://www.w3.org/1999/xhtml"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
EXTENSION_NAMESPACES: Mapping[str, str] = MappingProxyType(
    {"xhtml": XHTML_NS, "image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS}
)
"""Each extension's customary prefix and its namespace."""
URL_EXTENSION_ELEMENTS: Mapping[str, str] = MappingProxyType(
    {XHTML_NS: "link", IMAGE_NS: "image", VIDEO_NS: "video", NEWS_NS: "news"}
)
"""The one element of each extension namespace that stands directly in a ``url``."""

RETIRED_IMAGE_FIELDS = ("caption", "geo_location", "title", "license")
"""Children of ``image:image`` Google stopped reading in 2022 (only ``image:loc`` is left)."""
VIDEO_FIELDS = (
    "thumbnail_loc",
    "title",
    "description",
    "content_loc",
    "player_loc",
    "duration",
    "expiration_date",
    "rating",
    "view_count",
    "publication_date",
    "tag",
    "family_friendly",
    "restriction",
    "requires_subscription",
    "uploader",
    "platform",
    "live",
)
"""The children of ``video:video`` Google documents, in the video XSD's sequence (which
holds a few more)."""
VIDEO_REQUIRED = VIDEO_FIELDS[:3]
"""Required in every ``video:video``, with one of :data:`VIDEO_PLAYABLE`."""
VIDEO_PLAYABLE = ("content_loc", "player_loc")
"""A ``video:video`` names at least one of these: the file itself, or its player."""

MAX_IMAGES = 1_000
"""Google: up to 1,000 ``image:image`` per ``url``."""
MAX_NEWS_PER_SITEMAP = 1_000
"""Google: up to 1,000 ``news:news`` per sitemap."""
NEWS_WINDOW = timedelta(days=2)
"""Google reads ``news:news`` of articles published in the last two days only."""

HREFLANG = re.compile(r"x-default|[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?")
"""BCP 47 as Google reads hreflang: a language, an optional script, an optional region;
or ``x-default``."""
NEWS_LANGUAGE = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}")
"""The news XSD's pattern of ``news:language``."""

# HTTP and URIs

ENTITY_TAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')
"""RFC 9110 §8.8.3: ``entity-tag = [ weak ] opaque-tag``."""

DEFAULT_PORTS: Mapping[str, int] = MappingProxyType({"http": 80, "https": 443})
"""The port each scheme a sitemap may use implies when a URL names none."""

# IndexNow (indexnow.org/documentation): one endpoint shares every submission with all
# the engines that take part.
INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
INDEXNOW_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")
"""A key: 8 to 128 characters from a-z, A-Z, 0-9 and '-'."""
INDEXNOW_MAX_URLS = 10_000
"""URLs in one POST."""
