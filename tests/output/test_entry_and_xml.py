"""The bad-row rule, the XML writer and its limits."""

from __future__ import annotations

import logging
from datetime import UTC, date
from decimal import Decimal

import pytest
from lxml import etree

from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.entry import (
    BadRowError,
    Entry,
    EntryRules,
    coerce_item,
    format_priority,
)
from sitemap_middleware.output.xml import LimitExceeded, UrlFields, UrlsetWriter, url_element

from ..support import assert_valid_urlset

SITE = Site.build("https://example.com/", "/sitemap.xml")


def rules(strict: bool = False) -> EntryRules:
    return EntryRules(SITE, UTC, strict)


def test_good_entry() -> None:
    url = rules().check("s", coerce_item(1, Entry("/a", date(2024, 1, 2), "Daily", 0.8)))
    assert url == UrlFields("https://example.com/a", "2024-01-02", "daily", "0.8")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0.0"),
        (1, "1.0"),
        (0.5, "0.5"),
        ("0.25", "0.25"),
        (Decimal("0.125"), "0.125"),
        (1e-4, "0.0001"),
    ],
)
def test_priority_forms(value: object, text: str) -> None:
    assert format_priority(value) == text


@pytest.mark.parametrize("value", [7, -0.1, 1.01, float("nan"), float("inf"), "high", True, None])
def test_bad_priorities(value: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        format_priority(value)


def test_bad_loc_skips_the_row_logs_once_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    checker = rules()
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    for _ in range(3):
        assert checker.check("articles", (42, "https://evil.example/x", None, None, None)) is None
    assert checker.stats["articles"].skipped == 3
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    assert "'articles'" in lines[0] and "42" in lines[0] and "evil.example" not in lines[0]


@pytest.mark.parametrize(
    "loc", [None, 17, "", "/x\x00", "/x\x1f", "/x\ud800", "/x\uffff", "http://example.com/x"]
)
def test_unlistable_locs_are_skipped(loc: object) -> None:
    checker = rules()
    assert checker.check("s", (1, loc, None, None, None)) is None
    assert checker.stats["s"].skipped == 1


def test_bad_optional_fields_are_dropped_not_the_row(caplog: pytest.LogCaptureFixture) -> None:
    checker = rules()
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    url = checker.check("s", (9, "/ok", "last tuesday", "sometimes", 7))
    assert url == UrlFields("https://example.com/ok", None, None, None)
    stats = checker.stats["s"]  # one row, one URL: three fields dropped from it
    assert (stats.rows_with_fields_dropped, stats.urls_with_fields_dropped) == (1, 1)
    assert stats.skipped == 0
    assert [problem.reason.split(":")[0] for problem in stats.recent] == [
        "lastmod dropped",
        "changefreq dropped",
        "priority dropped",
    ]
    messages = " ".join(r.getMessage() for r in caplog.records)
    for name in ("lastmod dropped", "changefreq dropped", "priority dropped"):
        assert name in messages


def test_strict_mode_raises() -> None:
    with pytest.raises(BadRowError, match="row 5"):
        rules(strict=True).check("s", (5, "/ok", None, None, 3))
    with pytest.raises(BadRowError, match="row 6"):
        rules(strict=True).check("s", (6, "https://other/x", None, None, None))


def test_coerce_items() -> None:
    assert coerce_item(0, "/a") == (0, "/a", None, None, None)
    assert coerce_item(1, {"loc": "/b", "priority": 0.1}) == (1, "/b", None, None, 0.1)
    assert coerce_item(2, Entry("/c", changefreq="never")) == (2, "/c", None, "never", None)


def test_url_element_order_and_escaping(sitemap_schema: etree.XMLSchema) -> None:
    element = url_element(UrlFields("https://example.com/?a=1&b='2'", "2024-01-02", "daily", "0.5"))
    assert element == (
        "<url><loc>https://example.com/?a=1&amp;b=&apos;2&apos;</loc><lastmod>2024-01-02</lastmod>"
        "<changefreq>daily</changefreq><priority>0.5</priority></url>\n"
    )
    writer = UrlsetWriter()
    document = writer.open() + writer.write(
        [url_element(UrlFields("https://example.com/?a=1&b='2'", None, None, None))]
    )
    document += writer.close()
    (url,) = assert_valid_urlset(document, sitemap_schema)
    assert url[0].text == "https://example.com/?a=1&b='2'"
    assert writer.bytes == len(document)


def test_writer_refuses_more_urls_than_the_limit() -> None:
    writer = UrlsetWriter(max_urls=2)
    writer.open()
    writer.write([url_element(UrlFields("https://example.com/1", None, None, None))] * 2)
    with pytest.raises(LimitExceeded, match="max_urls=2"):
        writer.write([url_element(UrlFields("https://example.com/3", None, None, None))])


def test_writer_refuses_more_bytes_than_the_limit() -> None:
    writer = UrlsetWriter(max_bytes=4096)
    writer.open()
    long_url = url_element(UrlFields("https://example.com/" + "a" * 2000, None, None, None))
    writer.write([long_url])
    with pytest.raises(LimitExceeded, match="max_bytes=4096"):
        writer.write([long_url])
    assert writer.bytes + len("</urlset>\n") <= 4096
