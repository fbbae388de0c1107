"""The response header rules for a sitemap (RFC 9110; sitemaps.org on gzip files).

* ``Content-Type``: an XML type (``application/xml``, ``text/xml``, ``*+xml``;
  charset UTF-8 if given) for a sitemap; ``application/gzip`` (or
  ``application/x-gzip``) *without* ``Content-Encoding`` for a ``.xml.gz`` file.
* ``ETag`` present and an entity-tag; ``Last-Modified`` in IMF-fixdate, not later
  than ``Date`` (itself present and in IMF-fixdate). A document without
  ``Last-Modified`` (one without lastmods) is information, not an error: the
  ``ETag`` revalidates it.
* No field defined as one value (``Date``, ``Content-Type``, ``ETag``, ...:
  :data:`~sitemap_middleware.core.http.SINGLETON_FIELDS`) sent twice, in any answer: a
  server that adds its own ``Date`` beside the application's sends two, which a
  client merging repeated fields reads as one comma-joined value that is no date.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from ..core.http import SINGLETON_FIELDS, format_http_date, parse_http_date
from ..core.spec import ENTITY_TAG
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


REPEATED = (
    "a field defined as one value is sent more than once (RFC 9110 §5.3): a client that "
    "merges repeated fields reads one comma-joined value, which is none"
)


def check_singletons(headers: httpx.Headers, findings: Findings, answer: str) -> None:
    """Each singleton field at most once in the ``answer`` (``GET``, ``HEAD``, a ``304``...)."""
    for name in SINGLETON_FIELDS:
        values = headers.get_list(name)  # the field lines as sent, commas not split
        if len(values) > 1:
            findings.add("http.repeated", REPEATED, f"{answer}: {name}: {' | '.join(values)}")


def check_headers(url: str, headers: httpx.Headers, findings: Findings) -> None:
    """Content type, coding and validators of a 200 for the sitemap at ``url``."""
    check_singletons(headers, findings, "GET")
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
    elif not all(ENTITY_TAG.fullmatch(tag) for tag in etag):
        findings.add("http.etag", 'ETag is not an entity-tag such as W/"abc"', ", ".join(etag))
    # Repeated Dates are http.repeated; each must still be a date, and Last-Modified not
    # later than any.
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
    if not all(imf_fixdate(value) for value in last_modified):
        findings.add(
            "http.last-modified",
            "Last-Modified is not an IMF-fixdate such as Sun, 06 Nov 1994 08:49:37 GMT",
            ", ".join(last_modified),
        )
        return
    value = max(last_modified, key=lambda v: parse_http_date(v) or latest)
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
