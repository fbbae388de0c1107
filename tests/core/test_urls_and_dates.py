"""Locs (resolution, IRI to URI, scope, length) and lastmod forms."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from sitemap_middleware.core.dates import LastmodError, format_lastmod, parse_w3c, to_utc
from sitemap_middleware.core.urls import LocError, Site, comparison_form, iri_to_uri, quote_rest
from sitemap_middleware.output.xml import escape

SITE = Site.build("https://example.com/", "/sitemap.xml")


@pytest.mark.parametrize(
    ("loc", "url"),
    [
        ("/", "https://example.com/"),
        ("/about", "https://example.com/about"),
        ("about", "https://example.com/about"),
        ("https://example.com/x", "https://example.com/x"),
        ("HTTPS://EXAMPLE.com/x", "https://example.com/x"),
        ("https://example.com:443/x", "https://example.com/x"),
        ("https://example.com", "https://example.com/"),
        ("/über uns", "https://example.com/%C3%BCber%20uns"),
        ("/caf%C3%A9", "https://example.com/caf%C3%A9"),  # existing escapes kept
        ("/café%20x", "https://example.com/caf%C3%A9%20x"),
        ("/100%", "https://example.com/100%25"),  # a lone % is escaped
        ("/a%zz", "https://example.com/a%25zz"),
        ('/q?a=1&b="2"', "https://example.com/q?a=1&b=%222%22"),
        ("/<tag>", "https://example.com/%3Ctag%3E"),
        ("/日本語", "https://example.com/%E6%97%A5%E6%9C%AC%E8%AA%9E"),
        ("/🚀", "https://example.com/%F0%9F%9A%80"),
        # Whitespace at either end is data, encoded like any other (never stripped).
        ("  /padded  ", "https://example.com/%20%20/padded%20%20"),
        ("/p/trail ", "https://example.com/p/trail%20"),
        ("/p/ lead", "https://example.com/p/%20lead"),
        ("\t/p/x\r\n", "https://example.com/%09/p/x%0D%0A"),
        ("https://example.com/p/trail ", "https://example.com/p/trail%20"),
        ("HTTPS://EXAMPLE.COM/p/trail \t", "https://example.com/p/trail%20%09"),
        ("/it's", "https://example.com/it's"),
        ("/q?x=/../y#/./z", "https://example.com/q?x=/../y#/./z"),  # only the path's dots count
        ("/a/..b/.c/..%20/%2e%2ex", "https://example.com/a/..b/.c/..%20/%2e%2ex"),
        ("/a/.. ", "https://example.com/a/..%20"),  # "..%20" is no dot segment to a client
        ("/.well-known/x", "https://example.com/.well-known/x"),
        ("/a#b#c", "https://example.com/a#b%23c"),  # one fragment delimiter at most
        ("/a?q#f#g?h", "https://example.com/a?q#f%23g?h"),
    ],
)
def test_resolve(loc: str, url: str) -> None:
    assert SITE.resolve(loc) == url


@pytest.mark.parametrize(
    ("loc", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("http://example.com/x", "not on"),  # other scheme
        ("https://other.example/x", "not on"),
        ("https://sub.example.com/x", "not on"),
        ("https://example.com:8443/x", "not on"),
        ("//example.com/x", "scheme-relative"),
        ("ftp://example.com/x", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("https://user:pw@example.com/x", "credentials"),
        ("/bad\x01char", "U+0001"),
        ("/bad\ufffe", "U+FFFE"),
        ("/lone\ud800", "U+D800"),
        ("/" + "a" * 2100, "characters long"),
        # Whitespace before a scheme or "//" would turn a URL into a relative path.
        (" https://example.com/x", "whitespace before its scheme"),
        ("\n//example.com/x", "whitespace before its scheme or '//'"),
        ("https://exa mple.com/x", "whitespace in its host"),
        ("https://example.com\t/x", "whitespace in its host"),
    ],
)
def test_rejected_locs(loc: str, reason: str) -> None:
    with pytest.raises(LocError, match=re.escape(reason)):
        SITE.resolve(loc)


@pytest.mark.parametrize(
    "spelling", ["https://example.com", "HTTPS://EXAMPLE.COM", "https://example.com:443"]
)
@pytest.mark.parametrize(
    ("rest", "uri"),
    [
        ("/a\tb\r\nc", "/a%09b%0D%0Ac"),  # kept (escaped), as in a relative loc
        ("/a#x#y", "/a#x%23y"),
        ("/a#", "/a#"),
        ("/a?", "/a?"),
    ],
)
def test_absolute_locs_in_any_spelling_give_the_same_uri(
    spelling: str, rest: str, uri: str
) -> None:
    assert SITE.resolve(spelling + rest) == "https://example.com" + uri
    assert SITE.resolve(rest) == "https://example.com" + uri


def test_length_limit_counts_the_encoded_url() -> None:
    room = 2047 - len("https://example.com/")
    assert len(SITE.resolve("/" + "a" * room)) == 2047
    with pytest.raises(LocError):
        SITE.resolve("/" + "a" * (room + 1))
    with pytest.raises(LocError):  # fits as an IRI, too long once encoded
        SITE.resolve("/" + "é" * (room // 2))


def test_scope_is_the_sitemap_directory_under_the_base_url() -> None:
    site = Site.build("https://example.com/shop", "/catalog/sitemap.xml")
    assert site.base_url == "https://example.com/shop/"
    assert site.scope == "https://example.com/shop/catalog/"
    assert site.resolve("/catalog/item") == "https://example.com/shop/catalog/item"
    with pytest.raises(LocError, match="scope"):
        site.resolve("/images/x")
    with pytest.raises(LocError, match="scope"):
        site.resolve("https://example.com/catalog/item")
    assert site.url_for("/catalog/sitemap.xml") == "https://example.com/shop/catalog/sitemap.xml"


@pytest.mark.parametrize(
    "loc",
    [
        "/catalog/../images/x",
        "catalog/../../x",
        "/catalog/%2e%2e/images/x",
        "/catalog/.%2E/images/x",
        "/catalog/%2E./images/x",
        "https://example.com/shop/catalog/../../x",
        "HTTPS://EXAMPLE.COM:443/shop/catalog/a/%2e%2e/b",
        # Dot segments that stay in the scope, or climb nowhere, are refused as well.
        "/catalog/a/../b",
        "/catalog/./item",
        "/catalog/item/.",
        "/catalog/item/..",
        "/catalog/item/%2E",
        "./catalog/item",
        "/catalog/a/..?q",
        "/catalog/a/.#f",
    ],
)
def test_dot_segments_are_bad_rows_never_resolved(loc: str) -> None:
    site = Site.build("https://example.com/shop", "/catalog/sitemap.xml")
    with pytest.raises(LocError, match="dot segment"):
        site.resolve(loc)


@pytest.mark.parametrize(
    ("link", "url"),
    [
        ("/img/a.png ", "https://example.com/img/a.png%20"),
        (" /img/a.png", "https://example.com/%20/img/a.png"),
        ("https://cdn.example/a.png\t", "https://cdn.example/a.png%09"),
        ("HTTPS://CDN.example/a b.png ", "https://cdn.example/a%20b.png%20"),
    ],
)
def test_extension_links_keep_their_whitespace(link: str, url: str) -> None:
    assert SITE.resolve_link(link) == url


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ("/img/../a.png", "dot segment"),
        ("https://cdn.example/a/%2E%2E/b.png", "dot segment"),
        ("https://cdn.example/./b.png", "dot segment"),
        (" https://cdn.example/a.png", "whitespace before its scheme"),
        ("https://cdn .example/a.png", "whitespace in its host"),
        ("  ", "whitespace only"),
    ],
)
def test_extension_links_follow_the_loc_rule(link: str, reason: str) -> None:
    with pytest.raises(LocError, match=re.escape(reason)):
        SITE.resolve_link(link)


def test_urlsplit_never_strips_or_deletes_whitespace() -> None:
    """urlsplit strips leading C0 controls and spaces and deletes tab, CR and LF anywhere;
    every spelling of an absolute loc keeps them as the relative one does."""
    for rest in ["/a b", "/a\tb", "/a\nb", "/a\rb", "/ab ", "/ab\t", "/ab\r\n", "/a?q #f "]:
        relative = SITE.resolve(rest)
        for origin in ["https://example.com", "HTTPS://Example.COM", "https://example.com:443"]:
            assert SITE.resolve(origin + rest) == relative
        assert SITE.resolve_link("https://example.com" + rest) == relative
        assert SITE.resolve_link("HTTPS://EXAMPLE.COM" + rest) == relative
        assert " " not in relative and "\t" not in relative


def test_an_empty_path_is_the_root_in_every_spelling() -> None:
    for loc in ["https://example.com?q", "HTTPS://EXAMPLE.COM?q", "/?q"]:
        assert SITE.resolve(loc) == "https://example.com/?q"


def test_base_url_with_dot_segments_is_refused() -> None:
    with pytest.raises(ValueError, match="base_url"):
        Site.build("https://example.com/shop/../", "/sitemap.xml")


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://example.com/m%c3%bcsli", "https://example.com/m%C3%BCsli"),
        ("https://example.com/%41b", "https://example.com/Ab"),
        ("https://example.com/a%7e", "https://example.com/a~"),
    ],
)
def test_comparison_form_follows_rfc_3986(one: str, other: str) -> None:
    assert comparison_form(one) == comparison_form(other)


def test_comparison_form_keeps_reserved_escapes_apart() -> None:
    assert comparison_form("https://example.com/a%2Fb") != comparison_form(
        "https://example.com/a/b"
    )
    assert comparison_form("https://example.com/a%3Fb") != comparison_form(
        "https://example.com/a?b"
    )


def test_idn_host_and_port() -> None:
    site = Site.build("http://Bücher.example:8080/", "/sitemap.xml")
    assert site.origin == "http://xn--bcher-kva.example:8080"
    assert site.resolve("http://bücher.example:8080/a") == "http://xn--bcher-kva.example:8080/a"


@pytest.mark.parametrize(
    "bad", ["/relative", "example.com", "ftp://example.com/", "https://x/?q=1", "https://", 42]
)
def test_bad_base_urls(bad: object) -> None:
    with pytest.raises(ValueError, match="base_url"):
        Site.build(bad, "/sitemap.xml")  # type: ignore[arg-type]


def test_iri_to_uri_never_double_encodes() -> None:
    once = iri_to_uri("/a b/ü/%41")
    assert once == "/a%20b/%C3%BC/%41"
    assert iri_to_uri(once) == once


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a&b", "a&amp;b"),
        ("it's", "it&apos;s"),
        ('"q"', "&quot;q&quot;"),
        ("<>", "&lt;&gt;"),
        ("&amp;", "&amp;amp;"),  # data is data: an ampersand is escaped exactly once
        ("plain", "plain"),
    ],
)
def test_entity_escaping(text: str, escaped: str) -> None:
    assert escape(text) == escaped


BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("value", "naive", "text"),
    [
        (date(2024, 1, 2), UTC, "2024-01-02"),
        (datetime(2024, 1, 2, 3, 4, 5), UTC, "2024-01-02T03:04:05+00:00"),
        (datetime(2024, 1, 2, 3, 4, 5, 999999), UTC, "2024-01-02T03:04:05+00:00"),
        (datetime(2024, 1, 2, 3, 4, 5), BERLIN, "2024-01-02T03:04:05+01:00"),
        (datetime(2024, 7, 2, 3, 4, 5), BERLIN, "2024-07-02T03:04:05+02:00"),
        (
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
            UTC,
            "2024-01-02T03:04:05-05:30",
        ),
        (datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), BERLIN, "2024-01-02T03:04:05+00:00"),
        # An offset with seconds has no W3C form: written in UTC.
        (
            datetime(1890, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(minutes=53, seconds=28))),
            UTC,
            "1890-01-02T02:10:37+00:00",
        ),
        # Past the XSD's 14 hours of offset (Python allows 24): written in UTC.
        (
            datetime(2000, 1, 1, tzinfo=timezone(timedelta(hours=14, minutes=1))),
            UTC,
            "1999-12-31T09:59:00+00:00",
        ),
        (
            datetime(2000, 1, 1, tzinfo=timezone(timedelta(hours=-14))),
            UTC,
            "2000-01-01T00:00:00-14:00",
        ),
        ("2024-01-02T03:04:05-23:59", UTC, "2024-01-03T03:03:05+00:00"),
        ("2024-01-02", UTC, "2024-01-02"),
        ("2024-01-02T03:04Z", UTC, "2024-01-02T03:04:00+00:00"),
        ("2024-01-02T03:04:05+08:00", UTC, "2024-01-02T03:04:05+08:00"),
        ("2024-01-02T03:04:05.123-03:00", UTC, "2024-01-02T03:04:05-03:00"),
        ("2024-01-02T03:04:05", BERLIN, "2024-01-02T03:04:05+01:00"),
    ],
)
def test_lastmod_forms(value: object, naive: timezone, text: str, sitemap_schema: Any) -> None:
    assert format_lastmod(value, naive) == text
    document = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>'
        f"<loc>https://example.com/</loc><lastmod>{text}</lastmod></url></urlset>"
    )
    assert sitemap_schema.validate(etree.fromstring(document)), sitemap_schema.error_log


@pytest.mark.parametrize(
    "value",
    [
        "2024",
        "2024-05",
        "2024-13-01",
        "2024-02-30",
        "yesterday",
        "2024-01-02 03:04:05",
        "2024-01-02T03:04:05+05:60",  # offset minutes run to 59
        "0001-01-01T00:00+23:00",  # written in UTC (past 14 hours), it is in year 0
        datetime(1, 1, 1, tzinfo=timezone(timedelta(seconds=30))),
        "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0662",  # Arabic-Indic digits
        "\uff12\uff10\uff12\uff14-01-02",  # fullwidth digits
        1700000000,
        None,
    ],
)
def test_bad_lastmods(value: object) -> None:
    with pytest.raises(LastmodError):
        format_lastmod(value, UTC)


def test_to_utc() -> None:
    assert to_utc(date(2024, 1, 2), UTC) == datetime(2024, 1, 2, tzinfo=UTC)
    assert to_utc(datetime(2024, 1, 2, 1), BERLIN) == datetime(2024, 1, 2, 0, tzinfo=UTC)
    assert to_utc("2024-01-02T03:04:05+02:00", UTC) == datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC)
    assert to_utc("nonsense", UTC) is None
    assert parse_w3c("2024-01-02", UTC) == date(2024, 1, 2)


@pytest.mark.parametrize(
    ("link", "url"),
    [
        ("https://cdn.example.net/a b.jpg", "https://cdn.example.net/a%20b.jpg"),
        ("https://Bücher.example:8443/x", "https://xn--bcher-kva.example:8443/x"),
        ("https://[::1]/x", "https://[::1]/x"),
        ("HTTPS://cdn.example.net/a\tb#x#y", "https://cdn.example.net/a%09b#x%23y"),
    ],
)
def test_links_on_any_host(link: str, url: str) -> None:
    assert SITE.resolve_link(link) == url


@pytest.mark.parametrize(
    "link",
    ["https://a|b.example/x", "https://{x}.example/", "https://a<b>.example/", "https://a%zz/"],
)
def test_links_need_a_host_in_uri_characters(link: str) -> None:
    with pytest.raises(LocError, match="invalid host"):
        SITE.resolve_link(link)


def test_comparison_form_changes_exactly_the_escapes_it_must() -> None:
    """Every escape of every byte, in each case mix: the quick test agrees with the rewrite."""
    for byte in range(256):
        upper = f"%{byte:02X}"
        for escape_ in {
            upper,
            upper.lower(),
            upper[:2] + upper[2].lower(),
            upper[:2].lower() + upper[2],
        }:
            uri = f"https://example.com/a{escape_}b"
            unreserved = chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) in "-._~")
            expected = f"https://example.com/a{chr(byte) if unreserved else upper}b"
            assert comparison_form(uri) == expected, uri


@given(st.text(st.characters(codec="utf-8"), max_size=20))
def test_quote_rest_writes_what_quote_writes(text: str) -> None:
    assert quote_rest(text) == quote(text, safe="!$&'()*+,;=:@/?#%~")


def test_quote_rest_refuses_a_lone_surrogate_as_quote_does() -> None:
    with pytest.raises(UnicodeEncodeError):
        quote_rest("a\ud800")
