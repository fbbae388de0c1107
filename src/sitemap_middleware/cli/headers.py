"""The response header rules for a sitemap (RFC 9110; sitemaps.org on gzip files).

* ``Content-Type``: an XML type (``application/xml``, ``text/xml``, ``*+xml``;
  charset UTF-8 if given) for a sitemap; ``application/gzip`` (or
  ``application/x-gzip``) *without* ``Content-Encoding`` for a ``.xml.gz`` file.
* ``ETag`` present and an entity-tag; ``Last-Modified`` in IMF-fixdate, not later
  than ``Date`` (itself present and in IMF-fixdate). A document without
  ``Last-Modified`` (one without lastmods) is information, not an error: the
  ``ETag`` revalidates it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from ..http import format_http_date, parse_http_date
from ..protocol import ENTITY_TAG
from .findings import INFO, Findings

GZIP_TYPES = ("application/gzip", "application/x-gzip")


def media_type(value: str | None) -> tuple[str, dict[str, str]]:
    """``type/subtype`` (lowercase) and the parameters of a Content-Type value."""
    if not value:
        return "", {}
    kind, *params = value.split(";")
    parameters = {}
    for param in params:
        name, _, val = param.partition("=")
        parameters[name.strip().lower()] = val.strip().strip('"')
    return kind.strip().lower(), parameters


def is_xml_type(kind: str) -> bool:
    if kind in ("application/xml", "text/xml"):
        return True
    return kind.startswith(("application/", "text/")) and kind.endswith("+xml")


def wants_gzip_file(url: str, headers: httpx.Headers) -> bool:
    """Whether the URL names a gzip file: ``.gz``, or not ``.xml`` and served as gzip."""
    path = urlsplit(url).path
    if path.endswith(".gz"):
        return True
    return not path.endswith(".xml") and media_type(headers.get("content-type"))[0] in GZIP_TYPES


def imf_fixdate(value: str) -> bool:
    """Exactly ``Sun, 06 Nov 1994 08:49:37 GMT``: the only form a sender may generate."""
    moment = parse_http_date(value)
    return moment is not None and format_http_date(moment) == value


def check_headers(url: str, headers: httpx.Headers, findings: Findings) -> None:
    """Content type, coding and validators of a 200 for the sitemap at ``url``."""
    content_type = headers.get("content-type")
    kind, parameters = media_type(content_type)
    codings = content_codings(headers)
    if wants_gzip_file(url, headers):
        if kind not in GZIP_TYPES:
            findings.add(
                "http.content-type",
                "a .xml.gz file must be served as application/gzip",
                content_type or "(none)",
            )
        if codings:
            findings.add(
                "http.content-encoding",
                "a .xml.gz file must be served without Content-Encoding (clients would "
                "inflate it and store plain XML under a .gz name)",
                ", ".join(codings),
            )
    else:
        if not is_xml_type(kind):
            findings.add(
                "http.content-type",
                "a sitemap must be served as XML (application/xml or text/xml)",
                content_type or "(none)",
            )
        charset = parameters.get("charset")
        if charset is not None and charset.lower() not in ("utf-8", "utf8"):
            findings.add("http.content-type", "a sitemap must be UTF-8", content_type)
    etag = headers.get_list("etag")
    if not etag:
        findings.add("http.etag", "no ETag: crawlers cannot revalidate with If-None-Match")
    elif len(etag) > 1 or not ENTITY_TAG.fullmatch(etag[0]):
        findings.add("http.etag", 'ETag is not one entity-tag such as W/"abc"', ", ".join(etag))
    # Servers that add a Date of their own beside the application's (uvicorn, hypercorn,
    # werkzeug) send two lines: each must be a date, and Last-Modified not later than any.
    dates = headers.get_list("date")
    latest = datetime.max.replace(tzinfo=UTC)
    date = min(dates, key=lambda d: parse_http_date(d) or latest, default=None)
    if date is None:
        findings.add("http.date", "no Date header (an origin server with a clock must send it)")
    elif not all(imf_fixdate(d) for d in dates):
        findings.add("http.date", "Date is not an IMF-fixdate", ", ".join(dates))
    last_modified = headers.get_list("last-modified")
    if not last_modified:
        findings.add(
            "http.last-modified",
            "no Last-Modified (a document without lastmods has none): crawlers revalidate "
            "with If-None-Match only",
            severity=INFO,
        )
        return
    value = last_modified[0]
    if len(last_modified) > 1 or not imf_fixdate(value):
        findings.add(
            "http.last-modified",
            "Last-Modified is not one IMF-fixdate such as Sun, 06 Nov 1994 08:49:37 GMT",
            ", ".join(last_modified),
        )
        return
    moment, now = parse_http_date(value), parse_http_date(date or "")
    if moment is not None and now is not None and moment > now:
        findings.add("http.last-modified", "Last-Modified is later than Date", f"{value} > {date}")


def varies_by_encoding(headers: httpx.Headers) -> bool:
    """Whether ``Vary`` names Accept-Encoding (or ``*``)."""
    names = {v.strip().lower() for v in ",".join(headers.get_list("vary")).split(",")}
    return "accept-encoding" in names or "*" in names


def content_codings(headers: httpx.Headers) -> list[str]:
    return [
        c.strip().lower()
        for c in ",".join(headers.get_list("content-encoding")).split(",")
        if c.strip() and c.strip().lower() != "identity"
    ]
