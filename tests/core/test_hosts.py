"""Host views: which view a request's Host gets, and that every view shares one bad-row log."""

from __future__ import annotations

import logging
from datetime import UTC

import pytest

from sitemap_middleware import Settings
from sitemap_middleware.core.hosts import Hosts
from sitemap_middleware.output.entry import EntryRules

PAGE_SIZES = {"urls": 1000}


def make_hosts(**settings: object) -> Hosts:
    options = Settings(base_url="https://example.com/", **settings)  # type: ignore[arg-type]
    return Hosts(options, EntryRules(options.site, UTC), PAGE_SIZES)


def test_without_allowed_hosts_every_request_gets_the_base_urls_view() -> None:
    hosts = make_hosts()
    assert hosts.site_for("evil.example", True) is hosts.default
    assert hosts.site_for(None, True) is hosts.default
    assert hosts.default.site.base_url == "https://example.com/"


def test_allowed_hosts_build_their_own_urls_and_refuse_others() -> None:
    hosts = make_hosts(allowed_hosts=["example.com", "www.example.com"])
    www = hosts.site_for("WWW.example.com:443", True)
    assert www is not None and www.site.base_url == "https://www.example.com/"
    assert hosts.site_for("www.example.com", True) is www  # made once
    assert www.fingerprint != hosts.default.fingerprint  # its URLs are in its ETags
    assert hosts.site_for("example.com", True) is hosts.default
    assert hosts.site_for("evil.example", True) is None
    assert hosts.site_for("exa mple.com", True) is None
    assert hosts.site_for(None, True) is None  # a Host field, but not exactly one
    assert hosts.site_for(None, False) is hosts.default  # HTTP/1.0 without a Host


def test_every_view_counts_and_logs_bad_rows_in_one_place(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hosts = make_hosts(allowed_hosts=["example.com", "www.example.com"])
    www = hosts.site_for("www.example.com", True)
    assert www is not None
    row = (7, "/x", None, None, 7)  # a priority of 7: listed without it, on either host
    with caplog.at_level(logging.WARNING, logger="sitemap_middleware"):
        assert hosts.default.rules.check("urls", row) is not None
        assert www.rules.check("urls", row) is not None
    assert len([r for r in caplog.records if "bad sitemap row" in r.message]) == 1
    assert hosts.default.rules.stats["urls"].rows_with_fields_dropped == 2
    assert www.rules.stats == hosts.default.rules.stats
