"""The built-in rules of ``check`` (no schema files) against the official XSDs.

Every crafted bad document must be caught by both; every good one passes both.
Value predicates are compared with lxml's verdict value by value.
"""

from __future__ import annotations

import zlib
from datetime import UTC, datetime

import httpx
import pytest
from lxml import etree

from sitemap_middleware.cli.check import choose
from sitemap_middleware.cli.document import inspect
from sitemap_middleware.cli.fetch import TooLarge, gunzip
from sitemap_middleware.cli.findings import Findings
from sitemap_middleware.cli.headers import check_headers, imf_fixdate
from sitemap_middleware.cli.schemas import SchemaError, Schemas
from sitemap_middleware.cli.scope import scope_problem
from sitemap_middleware.cli.values import (
    changefreq_problem,
    lastmod_problems,
    loc_problems,
    priority_problem,
    xsd_lastmod,
)
from sitemap_middleware.core.http import SINGLETON_FIELDS

from ..support import DECLARATION, SCHEMAS, _schema, urlset, xsd_valid

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITEMAP = "https://example.com/sitemap.xml"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
LOC = "<loc>https://example.com/a</loc>"


def index(inner: str) -> bytes:
    return f'{DECLARATION}<sitemapindex xmlns="{NS}">{inner}</sitemapindex>'.encode()


def built_in(body: bytes) -> set[str]:
    findings = Findings()
    inspect(body, SITEMAP, NOW, findings)
    return {f.code for f in findings if f.severity == "error"}


GOOD = [
    urlset(f"<url>{LOC}</url>"),
    urlset(
        "<url><loc>https://example.com/b?x=1&amp;y=%C3%A9</loc><lastmod>2024-01-02</lastmod>"
        "<changefreq>daily</changefreq><priority>0.5</priority></url>"
        f"<url>{LOC}<lastmod>2024-01-02T03:04:05.123+05:30</lastmod><priority>1</priority></url>"
    ),
    urlset(
        f"<url>{LOC}<!-- a comment --><lastmod> 2024-01-02 </lastmod></url>",
        attributes=' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="a b"',
    ),
    index("<sitemap><loc>https://example.com/s-1.xml</loc><lastmod>2024-01-02</lastmod></sitemap>"),
]

# (what is wrong, document, the built-in code that must catch it)
BAD = [
    ("empty urlset", urlset(""), "schema.empty"),
    ("empty index", index(""), "schema.empty"),
    (
        "no namespace",
        urlset(f"<url>{LOC}</url>").replace(f' xmlns="{NS}"'.encode(), b""),
        "schema.namespace",
    ),
    (
        "https namespace",
        urlset(f"<url>{LOC}</url>").replace(b'"http://www.sitemaps', b'"https://www.sitemaps'),
        "schema.namespace",
    ),
    ("wrong root", f'<sitemaps xmlns="{NS}"><url>{LOC}</url></sitemaps>'.encode(), "schema.root"),
    ("url without loc", urlset("<url><lastmod>2024-01-02</lastmod></url>"), "schema.loc-missing"),
    (
        "priority before lastmod",
        urlset(f"<url>{LOC}<priority>0.5</priority><lastmod>2024-01-02</lastmod></url>"),
        "schema.order",
    ),
    (
        "loc after lastmod",
        urlset("<url><lastmod>2024-01-02</lastmod>" + LOC + "</url>"),
        "schema.order",
    ),
    ("two locs", urlset(f"<url>{LOC}{LOC}</url>"), "schema.order"),
    (
        "index lastmod before loc",
        index(
            "<sitemap><lastmod>2024-01-02</lastmod><loc>https://example.com/s.xml</loc></sitemap>"
        ),
        "schema.order",
    ),
    ("unknown sitemap element", urlset(f"<url>{LOC}<title>x</title></url>"), "schema.unexpected"),
    (
        "element without namespace",
        urlset(f'<url>{LOC}<note xmlns="">x</note></url>'),
        "schema.unexpected",
    ),
    ("sitemap inside urlset", urlset(f"<sitemap>{LOC}</sitemap>"), "schema.unexpected"),
    (
        "extension after the urls",
        urlset(f'<url>{LOC}</url><x:y xmlns:x="http://www.google.com/schemas/sitemap-image/1.1"/>'),
        "schema.order",
    ),
    ("text in url", urlset(f"<url>text{LOC}</url>"), "schema.text"),
    ("attribute", urlset(f'<url id="1">{LOC}</url>'), "schema.attribute"),
    (
        "xml:lang attribute",
        urlset(f"<url>{LOC}</url>", attributes=' xml:lang="en"'),
        "schema.attribute",
    ),
    (
        "element inside loc",
        urlset("<url><loc>https://example.com/<b>x</b></loc></url>"),
        "schema.unexpected",
    ),
    (
        "changefreq case",
        urlset(f"<url>{LOC}<changefreq>Daily</changefreq></url>"),
        "schema.changefreq",
    ),
    (
        "changefreq spaces",
        urlset(f"<url>{LOC}<changefreq> daily</changefreq></url>"),
        "schema.changefreq",
    ),
    ("priority above 1", urlset(f"<url>{LOC}<priority>1.01</priority></url>"), "schema.priority"),
    ("priority exponent", urlset(f"<url>{LOC}<priority>1e-1</priority></url>"), "schema.priority"),
    ("priority empty", urlset(f"<url>{LOC}<priority></priority></url>"), "schema.priority"),
    ("lastmod year only", urlset(f"<url>{LOC}<lastmod>2024</lastmod></url>"), "schema.lastmod"),
    (
        "lastmod minutes",
        urlset(f"<url>{LOC}<lastmod>2024-01-02T03:04Z</lastmod></url>"),
        "schema.lastmod",
    ),
    (
        "lastmod 30 February",
        urlset(f"<url>{LOC}<lastmod>2024-02-30</lastmod></url>"),
        "schema.lastmod",
    ),
    (
        "lastmod space",
        urlset(f"<url>{LOC}<lastmod>2024-01-02 03:04:05Z</lastmod></url>"),
        "schema.lastmod",
    ),
    ("loc too short", urlset("<url><loc>http://a.b/</loc></url>"), "schema.loc"),
    (
        "loc 2049 characters",
        urlset(f"<url><loc>https://example.com/{'a' * 2029}</loc></url>"),
        "schema.loc",
    ),
    ("loc stray percent", urlset("<url><loc>https://example.com/%zz</loc></url>"), "loc.encoding"),
    ("index loc too short", index("<sitemap><loc>http://a.b/</loc></sitemap>"), "schema.loc"),
]


@pytest.mark.parametrize("body", GOOD)
def test_good_documents_pass_both(body: bytes) -> None:
    assert xsd_valid(body)
    assert built_in(body) == set()


@pytest.mark.parametrize(("problem", "body", "code"), BAD, ids=[b[0] for b in BAD])
def test_bad_documents_fail_both(problem: str, body: bytes, code: str) -> None:
    assert not xsd_valid(body), problem
    assert code in built_in(body)


# Beyond the XSD: rules only the protocol states.
PROTOCOL_ONLY = [
    ("relative loc", urlset("<url><loc>articles/first-one</loc></url>"), "loc.absolute"),
    ("unencoded loc", urlset("<url><loc>https://example.com/é café</loc></url>"), "loc.encoding"),
    (
        "loc 2048 characters",
        urlset(f"<url><loc>https://example.com/{'a' * 2028}</loc></url>"),
        "loc.length",
    ),
    (
        "zone-less time",
        urlset(f"<url>{LOC}<lastmod>2024-01-02T03:04:05</lastmod></url>"),
        "lastmod.w3c",
    ),
    ("date with a zone", urlset(f"<url>{LOC}<lastmod>2024-01-02Z</lastmod></url>"), "lastmod.w3c"),
    ("future lastmod", urlset(f"<url>{LOC}<lastmod>2026-01-03</lastmod></url>"), "lastmod.future"),
    ("duplicate", urlset(f"<url>{LOC}</url><url>{LOC}</url>"), "duplicate.loc"),
    ("out of scope", urlset("<url><loc>https://example.org/a</loc></url>"), "scope.loc"),
    (
        "index child out of scope",
        index("<sitemap><loc>http://example.com/s.xml</loc></sitemap>"),
        "scope.child",
    ),
    ("not UTF-8", urlset(f"<url>{LOC}</url>").replace(b"UTF-8", b"ISO-8859-1"), "xml.encoding"),
    ("malformed", urlset(f"<url>{LOC}</url>")[:-3], "xml.malformed"),
    (
        "control character",
        urlset("<url><loc>https://example.com/\x01</loc></url>"),
        "xml.malformed",
    ),
]


@pytest.mark.parametrize(
    ("problem", "body", "code"), PROTOCOL_ONLY, ids=[p[0] for p in PROTOCOL_ONLY]
)
def test_protocol_rules_beyond_the_schema(problem: str, body: bytes, code: str) -> None:
    assert code in built_in(body), problem


def test_limits_on_entries() -> None:
    many = urlset("".join(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(50_001)))
    findings = Findings()
    document = inspect(many, SITEMAP, NOW, findings)
    assert {f.code for f in findings} == {"limit.urls"}
    assert document.entries == 50_001


def xsd_value(element: str, value: str) -> bool:
    before = "" if element == "loc" else LOC
    body = urlset(f"<url>{before}<{element}>{value}</{element}></url>")
    return bool(_schema("sitemap.xsd").validate(etree.fromstring(body)))


LASTMODS = [
    "2024-01-02",
    "2024-01-02T03:04:05Z",
    "2024-01-02T03:04:05.5+05:30",
    " 2024-01-02 ",
    "2024-01-02T24:00:00Z",
    "2024-01-02T24:00:01Z",
    "2024-01-02T23:59:60Z",
    "2024-02-29",
    "2023-02-29",
    "1900-02-29",
    "2000-02-29",
    "-0004-02-29",
    "-0001-02-29",
    "0000-01-01",
    "10000-01-01",
    "010000-01-01",
    "2024-01-02T03:04:05+14:00",
    "2024-01-02T03:04:05+14:01",
    "2024-01-02T03:04:05-12:60",
    "2024-01-02T03:04:05+12:60",
    "2024-01-02T03:04:05+15:00",
    "2024-01-02T03:04:05.123456789+14:00",
    "2024-01-02Z",
    "2024-1-02",
    "2024-01-02T03:04:05.Z",
    "2024-01-02t03:04:05Z",
    "2024-01-02T03:04:05+0200",
    "2024",
    "2024-01",
    "2024-01-02T03:04Z",
    "+2024-01-02",
    "\u0662\u0660\u0662\u0664-01-02",  # Arabic-Indic digits
    "",
]


@pytest.mark.parametrize("value", LASTMODS)
def test_lastmod_as_the_xsd_reads_it(value: str) -> None:
    accepted = xsd_value("lastmod", value)
    assert xsd_lastmod(value) == accepted
    codes = {code for code, _ in lastmod_problems(value, NOW)}
    assert ("schema.lastmod" not in codes) == accepted


PRIORITIES = [
    "1",
    "1.0",
    ".5",
    "0.50000",
    "-0.0",
    "+1",
    "1.",
    " 0.5 ",
    "00.5",
    "1.01",
    "1e-1",
    ".",
    "+",
    "2",
    "-0.1",
    "0x1",
    "\u0660.5",
]


@pytest.mark.parametrize("value", PRIORITIES)
def test_priority_as_the_xsd_reads_it(value: str) -> None:
    assert (priority_problem(value) is None) == xsd_value("priority", value)


@pytest.mark.parametrize("value", ["daily", "never", "Daily", " daily", "daily ", "often"])
def test_changefreq_as_the_xsd_reads_it(value: str) -> None:
    assert (changefreq_problem(value) is None) == xsd_value("changefreq", value)


@pytest.mark.parametrize("length", [11, 12, 2047, 2048, 2049])
def test_loc_length_as_the_xsd_reads_it(length: int) -> None:
    loc = "http://a.b/" + "a" * (length - 11)
    assert len(loc) == length
    codes = {code for code, _ in loc_problems(loc)}
    assert ("schema.loc" not in codes) == xsd_value("loc", loc)
    # The protocol is one stricter: "less than 2,048 characters".
    assert bool(codes) == (length < 12 or length >= 2048)


def test_lastmod_classes() -> None:
    now = datetime(2024, 6, 1, 12, tzinfo=UTC)
    assert lastmod_problems("2024-06-01T12:00:30Z", now) == []  # within the skew allowance
    assert lastmod_problems("2024-06-02", now) == []  # already June 2nd east of UTC
    assert [c for c, _ in lastmod_problems("2024-06-03", now)] == ["lastmod.future"]
    assert [c for c, _ in lastmod_problems("2024-06-01T13:00:00Z", now)] == ["lastmod.future"]
    assert "W3C Datetime but not" in lastmod_problems("2024-05", now)[0][1]
    assert [c for c, _ in lastmod_problems("2024-05-01T24:00:00Z", now)] == ["lastmod.w3c"]


def test_scope_messages() -> None:
    base = "https://example.com/shop/sitemap.xml"
    assert scope_problem("https://example.com/shop/a", base) is None
    assert scope_problem("https://example.com/shop/", base) is None
    assert "another scheme (http)" in str(scope_problem("http://example.com/shop/a", base))
    assert "another host (www.example.com)" in str(
        scope_problem("https://www.example.com/shop/a", base)
    )
    assert "another port (8443)" in str(scope_problem("https://example.com:8443/shop/a", base))
    assert "directory" in str(scope_problem("https://example.com/other", base))
    assert "spelled differently" in str(scope_problem("https://Example.com/shop/a", base))
    assert "spelled differently" in str(scope_problem("https://example.com:443/shop/a", base))
    # The directory is the path's, whatever the query holds.
    assert scope_problem("https://example.com/a", "https://example.com/map.xml?dir=/x/") is None


def test_gunzip_bounds_and_members() -> None:
    data = b"<urlset/>" * 1000
    one = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = one.compress(data) + one.flush()
    assert gunzip(packed + packed, 20_000) == data + data  # concatenated members
    with pytest.raises(TooLarge):
        gunzip(packed, 8_999)
    with pytest.raises(ValueError, match="truncated"):
        gunzip(packed[:-10], 20_000)
    with pytest.raises(ValueError, match="not valid gzip"):
        gunzip(b"\x1f\x8bnot gzip at all", 20_000)


def test_choosing_children() -> None:
    children = [f"c{i}" for i in range(10)]
    assert choose(children, None, None) == children
    assert choose(children, 3, None) == ["c0", "c1", "c2"]
    assert choose(children, None, 3) == ["c0", "c4", "c9"]  # (round(4.5) is 4)
    assert choose(children, None, 2) == ["c0", "c9"]
    assert choose(children, None, 10) == children
    assert choose(children, None, 0) == []
    assert choose(children, None, 1) == ["c0"]
    assert len(set(choose(children, None, 9))) == 9


def test_a_singleton_field_sent_twice_is_an_error() -> None:
    fine = [
        ("content-type", "application/xml; charset=utf-8"),
        ("etag", 'W/"abc"'),
        ("last-modified", "Mon, 06 May 2024 12:00:00 GMT"),
        ("date", "Tue, 07 May 2024 12:00:00 GMT"),
        ("cache-control", "no-cache"),
        ("vary", "Accept-Encoding"),
    ]

    def found(lines: list[tuple[str, str]]) -> Findings:
        findings = Findings()
        check_headers("https://example.com/sitemap.xml", httpx.Headers(lines), findings)
        return findings

    assert not found(fine).codes()
    # uvicorn's Date beside the application's, a second apart: a merging client reads
    # "Tue, 07 May 2024 12:00:00 GMT, Tue, 07 May 2024 12:00:01 GMT".
    twice = found([*fine, ("DATE", "Tue, 07 May 2024 12:00:01 GMT")])
    assert twice.codes() == {"http.repeated"} and twice.errors == 1
    (finding,) = twice
    assert finding.examples == [
        "GET: date: Tue, 07 May 2024 12:00:00 GMT | Tue, 07 May 2024 12:00:01 GMT"
    ]
    for name, value in fine[:4]:  # the same value twice is still two fields
        assert found([*fine, (name, value)]).codes() == {"http.repeated"}, name
    for name in SINGLETON_FIELDS:
        lines = [*fine, (name, "1"), (name, "1")]
        assert "http.repeated" in found(lines).codes(), name
    # List-based fields may be repeated: the lines are one comma-joined list.
    assert not found([*fine, ("cache-control", "max-age=60"), ("vary", "Cookie")]).codes()


def header_codes(**headers: str) -> set[str]:
    findings = Findings()
    check_headers("https://example.com/sitemap.xml", httpx.Headers(headers), findings)
    return {f.code for f in findings}


def test_header_rules() -> None:
    fine = {
        "content-type": "application/xml; charset=utf-8",
        "etag": 'W/"abc"',
        "last-modified": "Mon, 06 May 2024 12:00:00 GMT",
        "date": "Tue, 07 May 2024 12:00:00 GMT",
    }
    assert header_codes(**fine) == set()
    assert header_codes(**{**fine, "content-type": "text/xml"}) == set()
    assert header_codes(**{**fine, "content-type": "application/rss+xml"}) == set()
    assert header_codes(**{**fine, "content-type": "text/xml; charset=iso-8859-1"}) == {
        "http.content-type"
    }
    assert header_codes(**{**fine, "etag": "abc"}) == {"http.etag"}
    assert header_codes(**{**fine, "last-modified": "Wed, 08 May 2024 12:00:00 GMT"}) == {
        "http.last-modified"
    }
    assert header_codes(**{**fine, "last-modified": "Monday, 06-May-24 12:00:00 GMT"}) == {
        "http.last-modified"
    }
    without = dict(fine)
    del without["last-modified"], without["etag"]
    assert header_codes(**without) == {"http.last-modified", "http.etag"}
    findings = Findings()
    del without["date"]  # nor Date to compare it with
    check_headers("https://example.com/sitemap.xml", httpx.Headers(without), findings)
    severities = {f.code: f.severity for f in findings}
    # No Last-Modified (no lastmods) is information: the ETag revalidates the document.
    assert severities == {"http.last-modified": "info", "http.etag": "error", "http.date": "error"}
    assert findings.errors == 2


def test_imf_fixdate_is_strict() -> None:
    assert imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT")
    assert not imf_fixdate("Mon, 06 Nov 1994 08:49:37 GMT")  # wrong weekday
    assert not imf_fixdate("sun, 06 nov 1994 08:49:37 gmt")
    assert not imf_fixdate("Sun Nov  6 08:49:37 1994")
    assert not imf_fixdate("Sun, 6 Nov 1994 08:49:37 GMT")


def test_schemas_folder(tmp_path: object) -> None:
    schemas = Schemas(SCHEMAS)
    assert schemas.files == {
        "urlset": "urlset-with-extensions.xsd",
        "sitemapindex": "siteindex.xsd",
    }
    image = urlset(
        f'<url>{LOC}<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        "<image:loc>https://example.com/a.png</image:loc></image:image></url>"
    )
    assert schemas.errors(etree.fromstring(image), "urlset") == []
    assert built_in(image) == set()
    with pytest.raises(SchemaError, match=r"must hold sitemap\.xsd"):
        Schemas(SCHEMAS / "..")
