"""Fuzz targets over the request- and header-parsing core, each checking invariants.

Every target takes the raw bytes a fuzzer (or a corpus file) gives and raises
``AssertionError`` (or anything else) when an invariant breaks. The ``check_*``
functions take the decoded values, so property tests can call them directly.
Inputs are text, one field a line, so corpus files stay readable:

* ``http_date``, ``entity_tags``: a header value (latin-1, as adapters decode
  header lines); ``accept_encoding``: its lines, one a line;
* ``preconditions``: ``METHOD`` then ``name: value`` lines;
* ``routing``: a raw request path (``%``-escaped as on the wire);
* ``urls``: a loc as a source gives it (UTF-8; bytes that are not become lone
  surrogates);
* ``lastmod``: a lastmod string (UTF-8, likewise);
* ``core``: ``METHOD`` (`` HTTP/1.0`` after it for such a client), a raw request
  path, then ``name: value`` lines.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any
from urllib.parse import unquote
from zoneinfo import ZoneInfo

from lxml import etree

from sitemap_middleware import Entry, Settings, SyncSource
from sitemap_middleware.core import effects, handler
from sitemap_middleware.core.dates import LastmodError, format_lastmod, to_utc
from sitemap_middleware.core.http import (
    accepts_gzip,
    evaluate_preconditions,
    format_http_date,
    parse_entity_tags,
    parse_http_date,
    strong_match,
    weak_match,
)
from sitemap_middleware.core.routing import NotFoundTarget, PageTarget, RootTarget, Routes
from sitemap_middleware.core.sitemap import Request, Response, Sitemap
from sitemap_middleware.core.urls import LocError, Site, iri_to_uri
from sitemap_middleware.output.xml import escape

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)

# --- decoding -------------------------------------------------------------------------------------


def header_text(data: bytes) -> str:
    return data.decode("latin-1")


def source_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def header_lines(lines: Sequence[bytes]) -> dict[str, Sequence[str]]:
    """``name: value`` lines as adapters give them to the core: names lowercased, repeats kept."""
    headers: dict[str, list[str]] = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers.setdefault(header_text(name).strip().lower(), []).append(header_text(value).strip())
    return {name: values for name, values in headers.items()}


# --- HTTP dates -----------------------------------------------------------------------------------

_IMF = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT", re.A
)


def check_http_date(value: str) -> None:
    parsed = parse_http_date(value, NOW)
    if parsed is None:
        return
    assert parsed.tzinfo is UTC and parsed.microsecond == 0, parsed
    # Only the three HTTP-date forms are dates: ASCII, and every digit of the moment is in it.
    assert value.strip(" \t").isascii(), value
    formatted = format_http_date(parsed)
    assert _IMF.fullmatch(formatted), formatted
    assert parse_http_date(formatted, NOW) == parsed, (value, formatted)
    assert f"{parsed.hour:02d}:{parsed.minute:02d}:{parsed.second:02d}" in value
    if _IMF.fullmatch(value.strip()) and value.strip()[:3] == formatted[:3]:
        assert formatted == value.strip(), (value, formatted)  # canonical input stays as it is


def check_moment(moment: datetime) -> None:
    """Any whole-second moment survives IMF-fixdate and back."""
    moment = moment.replace(microsecond=0)
    formatted = format_http_date(moment)
    assert _IMF.fullmatch(formatted), formatted
    assert parse_http_date(formatted, NOW) == moment.astimezone(UTC)


def fuzz_http_date(data: bytes) -> None:
    check_http_date(header_text(data))


# --- entity tags and preconditions ----------------------------------------------------------------

_ENTITY_TAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')


def check_entity_tags(value: str) -> None:
    tags = parse_entity_tags(value)
    if tags is None:
        assert value.strip(" \t") == "*", value
        return
    assert value.strip(" \t") != "*"
    for tag in tags:
        assert _ENTITY_TAG.fullmatch(tag), (value, tag)
        assert tag in value, (value, tag)
        assert weak_match(tag, tag)
        assert strong_match(tag, tag) == (not tag.startswith("W/"))
    assert parse_entity_tags(", ".join(tags)) == tags, (value, tags)


def fuzz_entity_tags(data: bytes) -> None:
    check_entity_tags(header_text(data))


CONDITIONAL = ("if-match", "if-none-match", "if-modified-since", "if-unmodified-since")
RESOURCES = [
    ('W/"sitemap-1"', datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)),
    ('"sitemap-1"', datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)),
    ('W/"sitemap-1"', None),
    ('"x"', datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
]


def _one_date(lines: Sequence[str] | None) -> datetime | None:
    """RFC 9110: a date field with more than one member, or not a date, is ignored."""
    if not lines or len(lines) != 1 or lines[0].count(",") > 1:
        return None
    return parse_http_date(lines[0], NOW)


def reference_preconditions(
    method: str, headers: Mapping[str, Sequence[str]], etag: str, last_modified: datetime | None
) -> int:
    """RFC 9110 §13.2.2, step by step, for a resource that exists."""
    if headers.get("if-match"):  # step 1
        tags = parse_entity_tags(", ".join(headers["if-match"]))
        if tags is not None and not any(strong_match(tag, etag) for tag in tags):
            return 412
    else:  # step 2
        ius = _one_date(headers.get("if-unmodified-since"))
        if ius is not None and last_modified is not None and not last_modified <= ius:
            return 412
    if headers.get("if-none-match"):  # step 3
        tags = parse_entity_tags(", ".join(headers["if-none-match"]))
        matches = tags is None or any(weak_match(tag, etag) for tag in tags)
        if not matches:
            return 200
        return 304 if method in ("GET", "HEAD") else 412
    if method in ("GET", "HEAD") and last_modified is not None:  # step 4
        ims = _one_date(headers.get("if-modified-since"))
        if ims is not None and last_modified <= ims:
            return 304
    return 200


def check_preconditions(method: str, headers: Mapping[str, Sequence[str]]) -> None:
    for etag, last_modified in RESOURCES:
        status = evaluate_preconditions(method, dict(headers), etag, last_modified)
        assert status in (200, 304, 412), status
        assert status == reference_preconditions(method, headers, etag, last_modified), (
            method,
            headers,
            etag,
            last_modified,
            status,
        )
        present = {name for name in CONDITIONAL if headers.get(name)}
        if not present:
            assert status == 200
        if status == 304:
            assert method in ("GET", "HEAD")
            assert present & {"if-none-match", "if-modified-since"}


def fuzz_preconditions(data: bytes) -> None:
    method, *lines = data.split(b"\n")
    check_preconditions(header_text(method), header_lines(lines))


# --- Accept-Encoding ------------------------------------------------------------------------------

_CODING = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


def reference_accepts_gzip(value: str) -> bool | None:
    """RFC 9110 §12.5.3 for a well-formed field value; None when it is not one."""
    weights: dict[str, float] = {}
    for member in value.split(","):
        member = member.strip(" \t")
        if not member:
            continue
        coding, *params = (part.strip(" \t") for part in member.split(";"))
        if not _CODING.fullmatch(coding) or len(params) > 1:
            return None
        q = 1.0
        if params:
            name, _, number = params[0].partition("=")
            if name.strip(" \t").lower() != "q" or not _QVALUE.fullmatch(number.strip(" \t")):
                return None
            q = float(number)
        coding = coding.lower()
        weights[coding] = max(q, weights.get(coding, q))
    gzip = [weights[c] for c in ("gzip", "x-gzip") if c in weights]
    if gzip:
        return max(gzip) > 0
    return weights.get("*", 0.0) > 0


def check_accept_encoding(values: list[str]) -> None:
    accepted = accepts_gzip(values)
    assert isinstance(accepted, bool)
    if accepted:
        text = ",".join(values).lower()
        assert "gzip" in text or "*" in text, values
    expected = reference_accepts_gzip(",".join(values))
    if expected is not None:
        assert accepted == expected, (values, accepted, expected)
    assert accepts_gzip(None) is False and accepts_gzip([]) is False


def fuzz_accept_encoding(data: bytes) -> None:
    check_accept_encoding([header_text(line) for line in data.split(b"\n")])


# --- routing --------------------------------------------------------------------------------------

ROUTES = [
    Routes("/sitemap.xml", ["articles", "news", "news-2024", "a_b"]),
    Routes("/maps/sitemap.xml", ["pages"], html=True),
    Routes("/site-map.xml", ["x"]),
]


def check_route(path: str) -> None:
    for routes in ROUTES:
        target = routes.match(path)
        html = routes.html and path.endswith(".html")
        xml = path.removesuffix(".html") + ".xml" if html else path
        plain = xml.removesuffix(".gz")
        ours = plain == routes.root or (
            plain.startswith(routes.child_prefix) and plain.endswith(".xml")
        )
        assert (target is not None) == ours, (path, target)
        if target is None or isinstance(target, NotFoundTarget):  # NotFound: ours, a 404
            continue
        assert isinstance(target, RootTarget | PageTarget), (path, target)
        assert target.html == html, (path, target)
        assert target.gz == xml.endswith(".gz"), (path, target)
        if isinstance(target, RootTarget):
            assert path == (routes.html_path(target) if html else xml), (path, target)
            continue
        assert target.source in routes.names
        assert 1 <= target.page <= 9_999_999_999
        assert routes.page_path(target.source, target.page, target.gz, html) == path, target
        assert routes.match(path) == target


def fuzz_routing(data: bytes) -> None:
    # As a server gives it: the %-decoded path (UTF-8, errors replaced).
    check_route(unquote(header_text(data)))


# --- locs -----------------------------------------------------------------------------------------

SITES = [
    Site.build("https://example.com/", "/sitemap.xml"),
    Site.build("https://example.com/shop", "/catalog/sitemap.xml"),
    Site.build("http://bücher.example:8080/", "/sitemap.xml", max_loc_length=64),
]
# RFC 3986 characters (unreserved, reserved, "%"): a loc holds nothing else.
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@cache
def _schema() -> etree.XMLSchema:
    """sitemap.xsd's loc type, kept here so the target needs no files."""
    return etree.XMLSchema(
        etree.XML(
            f"""<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"
                targetNamespace="{SITEMAP_NS}" xmlns="{SITEMAP_NS}" elementFormDefault="qualified">
              <xsd:element name="urlset"><xsd:complexType><xsd:sequence>
                <xsd:element name="loc" maxOccurs="unbounded">
                  <xsd:simpleType><xsd:restriction base="xsd:anyURI">
                    <xsd:minLength value="12"/><xsd:maxLength value="2048"/>
                  </xsd:restriction></xsd:simpleType></xsd:element>
                <xsd:element name="lastmod" minOccurs="0" maxOccurs="unbounded">
                  <xsd:simpleType><xsd:union memberTypes="xsd:date xsd:dateTime"/></xsd:simpleType>
                </xsd:element>
              </xsd:sequence></xsd:complexType></xsd:element>
            </xsd:schema>"""
        )
    )


def _valid(loc: str, lastmod: str | None = None) -> bool:
    """Whether a loc (and a lastmod) pass the official XSD's types."""
    document = f'<urlset xmlns="{SITEMAP_NS}"><loc>{escape(loc)}</loc>'
    if lastmod is not None:
        document += f"<lastmod>{escape(lastmod)}</lastmod>"
    return _schema().validate(etree.fromstring(document + "</urlset>"))


def check_loc(loc: str) -> None:
    for site in SITES:
        _check_link(site, loc)
        try:
            url = site.resolve(loc)
        except LocError:
            continue
        assert url.isascii() and url.isprintable() and " " not in url, url
        assert _URI_CHARS.fullmatch(url) and not _ESCAPE.search(url), url
        assert url.count("#") <= 1, url
        assert url.startswith(site.scope), (url, site.scope)
        assert 12 <= len(url) <= site.max_loc_length, url
        path = re.split(r"[?#]", url[len(site.origin) :], maxsplit=1)[0]
        # A "." or ".." segment, written or %2e-escaped (%2F is data, not a slash).
        segments = {segment.lower().replace("%2e", ".") for segment in path.split("/")}
        assert not segments & {".", ".."}, url
        assert site.resolve(url) == url, url  # a listed loc is its own resolution
        assert _valid(url), url
    text = loc.strip()
    if not any("\ud800" <= c <= "\udfff" for c in text):
        once = iri_to_uri(text)
        assert iri_to_uri(once) == once, (text, once)


def _check_link(site: Site, link: str) -> None:
    """An extension's URL (image, video, alternate): any http(s) host, encoded as a loc is."""
    try:
        url = site.resolve_link(link)
    except LocError:
        return
    assert url.isascii() and url.isprintable() and " " not in url, url
    assert _URI_CHARS.fullmatch(url) and not _ESCAPE.search(url), url
    assert url.count("#") <= 1 and len(url) <= site.max_loc_length, url
    assert url.startswith(("http://", "https://")), url
    assert site.resolve_link(url) == url, url
    assert len(url) < 12 or _valid(url), url  # (the 12 characters at least are a loc's rule)


def fuzz_urls(data: bytes) -> None:
    check_loc(source_text(data))


# --- lastmod --------------------------------------------------------------------------------------

_WRITTEN = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)(Z|[+-](\d\d):(\d\d)))?", re.ASCII
)
ZONES = [UTC, ZoneInfo("Europe/Paris"), ZoneInfo("Pacific/Kiritimati")]


def check_lastmod(value: object) -> None:
    for zone in ZONES:
        try:
            written = format_lastmod(value, zone)
        except LastmodError:
            continue
        m = _WRITTEN.fullmatch(written)
        assert m is not None, (value, written)
        if m[8] is not None:
            assert timedelta(hours=int(m[8]), minutes=int(m[9])) <= timedelta(hours=14), written
        assert format_lastmod(written, zone) == written, (value, written)  # idempotent
        assert to_utc(written, zone) == _instant(value, zone), (value, written)
        assert _valid("https://example.com/", written), written


def _instant(value: object, zone: Any) -> datetime | None:
    """The moment a lastmod value names, whole seconds (dates count from UTC midnight)."""
    moment = to_utc(value, zone)
    return None if moment is None else moment.replace(microsecond=0)


def fuzz_lastmod(data: bytes) -> None:
    check_lastmod(source_text(data))


# --- the core's decision for a request ------------------------------------------------------------

# Two sitemaps: URLs from the configuration only, and URLs from an allowed Host.
_SETTINGS = [
    Settings(base_url="https://example.com/", path="/maps/sitemap.xml", html=True),
    Settings(
        base_url="https://example.com/",
        path="/maps/sitemap.xml",
        allowed_hosts=("example.com", "www.example.com:8443"),
    ),
]
_ORIGINS = ("https://example.com/maps/", "https://www.example.com:8443/maps/")
_HEADER_SHAPES = {
    "content-type": re.compile(
        r"text/xml; charset=utf-8|application/gzip|text/(plain|html); charset=utf-8"
    ),
    "content-length": re.compile(r"[0-9]+"),
    "content-encoding": re.compile(r"gzip"),
    "content-security-policy": re.compile(r"[ -~]+"),
    "etag": re.compile(r'W/"[A-Za-z0-9_-]{24}"'),
    "last-modified": _IMF,
    "date": _IMF,
    "cache-control": re.compile(r"no-cache|no-store"),
    "vary": re.compile(r"Accept-Encoding"),
    "x-robots-tag": re.compile(r"noindex"),
    "allow": re.compile(r"GET, HEAD"),
    "retry-after": re.compile(r"[0-9]+"),
}


@cache
def _sitemaps() -> list[Sitemap]:
    pages = [
        Entry("/maps/", date(2024, 1, 2), "daily", 0.5),
        "/maps/a?b=1&c='2'",
        Entry("/maps/über", datetime(2024, 3, 4, 5, 6, 7)),
        "/elsewhere",  # out of scope: a bad row
    ]
    return [Sitemap({"pages": pages, "empty": []}, settings) for settings in _SETTINGS]


def _perform(effect: effects.Effect) -> Any:
    """What an adapter does for the handler: read the (list) sources."""
    if isinstance(effect, effects.Summarize):
        return [_sync(source).summarize(keys, effect.as_of) for source, keys in effect.parts]
    return _sync(effect.source).pages(effect.page_size, effect.as_of)


def check_request(
    method: str, path: str, headers: Mapping[str, Sequence[str]], http_version: str = "1.1"
) -> None:
    """The whole sans-I/O flow of one request, as an adapter runs it; check what comes out."""
    for sitemap in _sitemaps():
        target = sitemap.routes.match(path)
        if target is None:  # the application's (check_route holds the routing invariants)
            continue
        request = Request(method, headers, http_version)
        outcome = handler.run_effects(handler.handle(sitemap, request, target, NOW), _perform)
        if isinstance(outcome, Response):
            _check_plan(outcome, method, headers)
            if outcome.status == 200 and method == "GET":
                _check_document(outcome.body, outcome)
            continue
        transfer = outcome
        assert method == "GET" and transfer.plan.head.status == 200
        try:
            body = b""
            for source, keys in transfer.parts:
                for batch in _sync(source).batches(keys, 2):
                    body += transfer.feed(source.name, batch)
            start = transfer.start()
            finish = transfer.finish()
            if not isinstance(finish, Response):
                body += b"".join(finish)
        finally:
            transfer.close()
        if isinstance(finish, Response):  # every row rejected: a 404, never an empty urlset
            assert body == b""
            _check_plan(finish, method, headers)
            assert finish.status == 404
            continue
        assert start is not None
        _check_plan(start, method, headers)
        _check_document(body, start)


def _check_document(document: bytes, response: Response) -> None:
    headers = dict(response.headers)
    if headers.get("content-encoding") == "gzip" or headers["content-type"] == "application/gzip":
        document = gzip.decompress(document)
    if headers["content-type"].startswith("text/html"):
        assert document.lower().startswith(b"<!doctype html>"), document[:40]
        return
    root = etree.fromstring(document)
    locs = [loc.text or "" for loc in root.iter(f"{{{SITEMAP_NS}}}loc")]
    assert locs and all(loc.startswith(_ORIGINS) for loc in locs), locs


def _sync(source: object) -> SyncSource:
    assert isinstance(source, SyncSource)  # the core target's sources are lists
    return source


def _check_plan(plan: Any, method: str, headers: Mapping[str, Sequence[str]]) -> None:
    status = plan.status
    assert status in (200, 304, 400, 404, 405, 412, 503), status
    if method not in ("GET", "HEAD"):
        assert status == 405
    names = [name for name, _ in plan.headers]
    assert len(names) == len(set(names)), names
    for name, value in plan.headers:
        # A closed set of shapes: nothing the client sent can come back.
        shape = _HEADER_SHAPES.get(name)
        assert shape is not None and shape.fullmatch(value), (name, value)
        value.encode("latin-1")
    if status in (304, 412) or method == "HEAD":
        assert isinstance(plan, Response)  # complete: nothing left to stream
    if status == 304:
        assert plan.body == b"" and "etag" in names
    present = {name for name in CONDITIONAL if headers.get(name)}
    if status == 412:
        assert present & {"if-match", "if-unmodified-since", "if-none-match"}
    if status == 304:
        assert present & {"if-none-match", "if-modified-since"}


def fuzz_core(data: bytes) -> None:
    request_line, _, rest = data.partition(b"\n")
    method, _, version = header_text(request_line).partition(" HTTP/")
    raw_path, *lines = rest.split(b"\n")
    path = unquote(header_text(raw_path))
    check_request(method, path, header_lines(lines), version or "1.1")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "http_date": fuzz_http_date,
    "entity_tags": fuzz_entity_tags,
    "preconditions": fuzz_preconditions,
    "accept_encoding": fuzz_accept_encoding,
    "routing": fuzz_routing,
    "urls": fuzz_urls,
    "lastmod": fuzz_lastmod,
    "core": fuzz_core,
}
"""Every fuzz target by name (``fuzz/corpus/<name>/`` holds its corpus)."""
