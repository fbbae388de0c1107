"""Settings (``settings.py``): validated once; every error names the setting; the defaults are
those of the settings page (docs/settings.md)."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from datetime import UTC
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sitemap_middleware import ConfigurationError, Settings
from sitemap_middleware.core.sitemap import Sitemap
from sitemap_middleware.settings import make_settings

BASE = "https://example.com/"
SETTINGS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


def sitemap(**settings: object) -> Sitemap:
    options: dict[str, object] = {"base_url": BASE}
    options.update(settings)
    return Sitemap(["/a", "/b"], Settings(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"base_url": "/relative"}, "base_url"),
        ({"base_url": "example.com"}, "base_url"),
        ({"path": "sitemap.xml"}, "path"),
        ({"path": "/sitemaps/"}, "path"),
        ({"path": "/sitemap"}, "path"),
        ({"index": "sometimes"}, "index"),
        ({"gzip_level": 10}, "gzip_level"),
        ({"max_loc_length": 5000}, "max_loc_length"),
        ({"path": "/site map.xml"}, "path"),
        ({"mode": "sometimes"}, "mode"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_urls": 50_001}, "max_urls"),
        ({"max_bytes": 60_000_000}, "max_bytes"),
        ({"cache_control": "a\r\nSet-Cookie: x"}, "cache_control"),
        ({"content_type": ""}, "content_type"),
        ({"naive_timezone": "UTC"}, "naive_timezone"),
        ({"retry_after": -1}, "retry_after"),
    ],
)
def test_misconfiguration_names_the_setting(settings: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{named}: "):
        sitemap(**settings)


# Per setting: values refused, then values accepted (the bounds among them).
CHECKS: dict[str, tuple[list[Any], list[Any]]] = {
    "base_url": (
        ["/relative", "example.com", "ftp://example.com/", "https://", "https://example.com/?q"],
        ["https://example.com", "http://example.com:8080/shop/"],
    ),
    "path": (
        ["sitemap.xml", "/sitemaps/", "/sitemap", "/.xml", "/a/.xml", "/site map.xml", 1],
        ["/sitemap.xml", "/maps/news.xml"],
    ),
    "mode": (["sometimes", None, "INTERCEPT"], ["intercept", "fallback"]),
    "content_type": (["", " ", None, "text/xml\r\nx: y", "tëxt/xml", b"text/xml"], ["a/b"]),
    "cache_control": (["", "a\nb", 0], [None, "max-age=60"]),
    "x_robots_tag": (["", "\x00"], [None, "noindex, nofollow"]),
    "naive_timezone": (["UTC", None], [UTC, ZoneInfo("Europe/Paris")]),
    "strict": ([1, "yes", None], [True, False]),
    "gzip": ([0], [True, False]),
    "index_gz": ([1], [True]),
    "robots_txt": (["no"], [False]),
    "html": ([None], [True]),
    "index": (["sometimes", None], ["auto", "always"]),
    "batch_size": ([0, 50_001, 1.5, True, "10"], [1, 50_000]),
    "chunk_bytes": ([0, 16_777_217], [1, 16_777_216]),
    "retry_after": ([-1, 86_401], [0, 86_400]),
    "max_urls": ([0, 50_001], [1, 50_000]),
    "max_bytes": ([65_535, 52_428_801], [65_536, 52_428_800]),
    "max_loc_length": ([5000, 0], [2047]),
    "gzip_level": ([0, 10], [1, 9]),
    "max_generations": ([0, 10_001, False], [None, 1, 10_000]),
    "allowed_hosts": (["example.com", ["*.example.com"], [""], [1], 7], [[], ["example.org"]]),
    "busy_retry_after": ([-1, 86_401], [0, 86_400]),
    "news_tick": ([0, 86_401], [1, 86_400]),
    "lastmod_tolerance": ([-1, 86_401, 1.5], [0, 86_400]),
    "summary_ttl": ([-1, 3_601, True, "1"], [0, 0.5, 3_600]),
    "freshness": (["fast", None], ["incremental", "exact"]),
    "refresh_interval": ([-0.1, 3_601, None, True], [0, 0.25, 3_600]),
    "recount_interval": ([-1, 86_401, False], [None, 0, 86_400]),
    "exact_rows": ([-1, 10_000_001, 1.5, True], [0, 10_000, 10_000_000]),
    "indexnow_key": (
        ["short", "a" * 129, "bad key!", "clé-12345", 12345678, ""],
        [None, "abcdefgh", "A-" * 64],
    ),
    "indexnow_key_location": (["/k.txt", "k.txt", "/sitemap.xml", 5], [None]),
    "indexnow_endpoint": (
        ["ftp://x/indexnow", "api.indexnow.org", 5, "https://"],
        ["https://api.indexnow.org/indexnow", "http://127.0.0.1:8080/indexnow"],
    ),
    "indexnow_every": ([0, 86_401, True, 60], [None]),
}


def test_every_setting_is_checked_here() -> None:
    assert sorted(CHECKS) == sorted(f.name for f in fields(Settings))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_each_setting_refuses_bad_values_by_name(name: str) -> None:
    refused, accepted = CHECKS[name]
    options = {} if name == "base_url" else {"base_url": BASE}
    for value in refused:
        with pytest.raises(ConfigurationError, match=f"^{name}: ") as raised:
            make_settings({**options, name: value})
        # The value refused is shown, except where the message says what a valid one is.
        if name not in ("base_url", "allowed_hosts", "naive_timezone"):
            assert repr(value) in str(raised.value)
    for value in accepted:
        make_settings({**options, name: value})


def test_unknown_and_missing_options_are_named() -> None:
    with pytest.raises(ConfigurationError, match=r"^max_url: not a setting; the settings are "):
        make_settings({"base_url": BASE, "max_url": 10})
    with pytest.raises(ConfigurationError, match=r"^base_url: required, e\.g\. "):
        make_settings({"path": "/sitemap.xml"})


def test_allowed_hosts_are_canonical_and_start_with_the_base_urls() -> None:
    settings = make_settings(
        {
            "base_url": "https://Example.com:443/shop/",
            "allowed_hosts": ["WWW.example.com", "example.com:8443", "example.com"],
        }
    )
    assert settings.allowed_hosts == ("example.com", "www.example.com", "example.com:8443")


def documented_defaults() -> dict[str, str]:
    """``option -> default`` from the table of options of the settings page."""
    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    table = text[text.index("## Options") :]
    table = table[: table.index("\n## ", 1)]
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, re.MULTILINE))


def documented(cell: str) -> Any:
    value = cell.strip().strip("`")
    if value == "datetime.UTC":
        return UTC
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value  # an unquoted string: /sitemap.xml, no-cache


def test_the_defaults_are_the_documented_ones() -> None:
    defaults = documented_defaults()
    assert defaults.pop("sources") == defaults.pop("base_url") == "required"
    settings = make_settings({"base_url": BASE})
    assert sorted(defaults) == sorted(f.name for f in fields(Settings) if f.name != "base_url")
    for name, cell in defaults.items():
        assert getattr(settings, name) == documented(cell), name


def test_a_source_without_a_setting_it_needs_is_told_which() -> None:
    """As every other mistake: a ConfigurationError naming the setting (and a TypeError, as
    Python's own was), never Python's message about an internal ``__init__``."""
    from sqlalchemy import column, create_engine, select
    from sqlalchemy.ext.asyncio import create_async_engine

    from sitemap_middleware import AsyncSQLAlchemySource, SQLAlchemySource

    stmt = select(column("id"), column("slug"))
    engine, async_engine = create_engine("sqlite://"), create_async_engine("sqlite+aiosqlite://")
    made: list[tuple[Any, str]] = [
        (lambda: SQLAlchemySource(stmt, engine, loc="/{slug}"), "name: SQLAlchemySource"),
        (lambda: SQLAlchemySource(stmt, engine, name="a"), "loc: SQLAlchemySource"),
        (
            lambda: AsyncSQLAlchemySource(stmt, async_engine, loc="/{slug}"),
            "name: AsyncSQLAlchemySource",
        ),
    ]
    for make, named in made:
        with pytest.raises(ConfigurationError, match=f"^{named} needs ") as raised:
            make()
        assert isinstance(raised.value, TypeError)
        assert "__init__" not in str(raised.value) and "SQLSourceBase" not in str(raised.value)
    engine.dispose()
