"""Settings (``settings.py``): one declaration, validated once; every error names the setting
with its group; the settings page (docs/settings.md) renders the declaration."""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from dataclasses import MISSING, fields
from datetime import UTC
from pathlib import Path
from typing import Any, Required, get_origin, get_type_hints
from zoneinfo import ZoneInfo

import griffe
import pytest

from sitemap_middleware import (
    ConfigurationError,
    Freshness,
    Gzip,
    Headers,
    IndexNowSettings,
    Lastmods,
    Limits,
    Load,
    RobotsFilter,
    Settings,
    Tenants,
)
from sitemap_middleware import settings as settings_module
from sitemap_middleware.core.sitemap import Sitemap
from sitemap_middleware.settings import (
    GROUPS,
    ConfigurationTypeError,
    Options,
    make_settings,
)

from .support import shared_mypy_cache

BASE = "https://example.com/"
ROOT = Path(__file__).resolve().parents[1]
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
KEY = "abcdefgh"


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
        ({"gzip": {"level": 10}}, "gzip.level"),
        ({"limits": {"max_loc_length": 5000}}, "limits.max_loc_length"),
        ({"path": "/site map.xml"}, "path"),
        ({"mode": "sometimes"}, "mode"),
        ({"limits": {"batch_size": 0}}, "limits.batch_size"),
        ({"limits": {"max_urls": 50_001}}, "limits.max_urls"),
        ({"limits": {"max_bytes": 60_000_000}}, "limits.max_bytes"),
        ({"headers": {"cache_control": "a\r\nSet-Cookie: x"}}, "headers.cache_control"),
        ({"headers": {"content_type": ""}}, "headers.content_type"),
        ({"lastmods": {"naive_timezone": "UTC"}}, "lastmods.naive_timezone"),
        ({"headers": {"retry_after": -1}}, "headers.retry_after"),
    ],
)
def test_misconfiguration_names_the_setting(settings: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{re.escape(named)}: "):
        sitemap(**settings)


# Per setting (a group's as ``group.field``): values refused, then values accepted (the
# bounds among them).
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
    "index": (["sometimes", None], ["auto", "always"]),
    "html": ([None], [True]),
    "robots_txt": (["no"], [False]),
    "allowed_hosts": (["example.com", ["*.example.com"], [""], [1], 7], [[], ["example.org"]]),
    "strict": ([1, "yes", None], [True, False]),
    "headers": ([5, None, "x", Limits()], [Headers(), {}, {"retry_after": 0}]),
    "limits": ([5, None, Headers()], [Limits(), {}, {"max_urls": 1}]),
    "lastmods": ([5, None], [Lastmods(), {}]),
    "freshness": ([5, None, "exact"], [Freshness(), {"mode": "exact"}]),
    "load": ([5, None], [Load(), {"max_generations": None}]),
    "gzip": ([0, None, "yes"], [Gzip(), {}, {"level": 9}, True, False]),
    "indexnow": ([5, "abcdefgh"], [None, IndexNowSettings(key=KEY), {"key": KEY}]),
    "headers.content_type": (["", " ", None, "text/xml\r\nx: y", "tëxt/xml", b"text/xml"], ["a/b"]),
    "headers.cache_control": (["", "a\nb", 0], [None, "max-age=60"]),
    "headers.x_robots_tag": (["", "\x00"], [None, "noindex, nofollow"]),
    "headers.retry_after": ([-1, 86_401], [0, 86_400]),
    "headers.surrogate_keys": (
        ["surrogate-key", ["x-key"], [1], None],
        [(), ("surrogate-key",), ("cache-tag",), ("surrogate-key", "cache-tag")],
    ),
    "limits.max_urls": ([0, 50_001], [1, 50_000]),
    "limits.max_bytes": ([65_535, 52_428_801], [65_536, 52_428_800]),
    "limits.max_loc_length": ([5000, 0], [2047]),
    "limits.batch_size": ([0, 50_001, 1.5, True, "10"], [1, 50_000]),
    "limits.chunk_bytes": ([0, 16_777_217], [1, 16_777_216]),
    "lastmods.naive_timezone": (["UTC", None], [UTC, ZoneInfo("Europe/Paris")]),
    "lastmods.tolerance": ([-1, 86_401, 1.5], [0, 86_400]),
    "lastmods.news_tick": ([0, 86_401], [1, 86_400]),
    "freshness.mode": (["fast", None], ["incremental", "exact"]),
    "freshness.refresh_interval": ([-0.1, 3_601, None, True], [0, 0.25, 3_600]),
    "freshness.recount_interval": ([-1, 86_401, False], [None, 0, 86_400]),
    "freshness.exact_rows": ([-1, 10_000_001, 1.5, True], [0, 10_000, 10_000_000]),
    "freshness.summary_ttl": ([-1, 3_601, True, "1"], [0, 0.5, 3_600]),
    "load.max_generations": ([0, 10_001, False], [None, 1, 10_000]),
    "load.retry_after": ([-1, 86_401], [0, 86_400]),
    "gzip.level": ([0, 10], [1, 9]),
    "gzip.index_files": ([1], [True]),
    "indexnow.key": (
        ["short", "a" * 129, "bad key!", "clé-12345", 12345678, "", None],
        ["abcdefgh", "A-" * 64],
    ),
    "indexnow.key_location": (
        ["k.txt", "/sitemap.xml", "/robots.txt", 5, "/keys/k.txt"],
        [None, "/k.txt"],
    ),
    "indexnow.endpoint": (
        ["ftp://x/indexnow", "api.indexnow.org", 5, "https://"],
        ["https://api.indexnow.org/indexnow", "http://127.0.0.1:8080/indexnow"],
    ),
    "indexnow.every": ([0, 86_401, True], [None, 1, 60]),
    "tenants": ([5, None], [Tenants(), {}, {"max_sites": 1}]),
    "tenants.max_sites": ([0, 1_000_001, 1.5, True], [1, 1_000_000]),
    "tenants.ttl": ([-1, 86_401, True], [0, 0.5, 86_400]),
    "tenants.timeout": ([0, 301, None], [0.001, 300]),
    "tenants.retry_after": ([-1, 86_401], [0, 86_400]),
    "robots_filter": (
        [5, None, "yes", Tenants()],
        [False, True, RobotsFilter(), {}, {"ttl": 60}],
    ),
    "robots_filter.ttl": ([0, 86_401, True, None], [1, 0.5 + 1, 86_400]),
    "robots_filter.timeout": ([0, 0.001, 61, True, None, "5"], [0.01, 5, 60]),
}
GROUP_OF = {kind.group: kind for kind in GROUPS}


def declared() -> list[str]:
    """Every setting: the fields of Settings, and each group's as ``group.field``."""
    names = []
    for field in fields(Settings):
        names.append(field.name)
        if field.name in GROUP_OF:
            names += [f"{field.name}.{inner.name}" for inner in fields(GROUP_OF[field.name])]
    return names


def test_every_setting_is_checked_here() -> None:
    assert sorted(CHECKS) == sorted(declared())


def options_with(name: str, value: object) -> dict[str, Any]:
    """The plain options that set ``name`` (``group.field`` in its group's mapping)."""
    options: dict[str, Any] = {} if name == "base_url" else {"base_url": BASE}
    group, _, field = name.partition(".")
    if not field:
        return {**options, name: value}
    inner = {"key": KEY} if group == "indexnow" and field != "key" else {}
    return {**options, group: {**inner, field: value}}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_each_setting_refuses_bad_values_by_name(name: str) -> None:
    refused, accepted = CHECKS[name]
    for value in refused:
        with pytest.raises(ConfigurationError, match=f"^{re.escape(name)}: ") as raised:
            make_settings(options_with(name, value))
        # The value refused is shown, except where the message says what a valid one is.
        if name not in ("base_url", "allowed_hosts", "lastmods.naive_timezone"):
            assert repr(value) in str(raised.value)
    for value in accepted:
        make_settings(options_with(name, value))


@pytest.mark.parametrize("name", sorted(name for name in CHECKS if "." in name))
def test_a_group_built_by_hand_names_its_setting_the_same(name: str) -> None:
    """``Limits(max_urls=0)`` fails as ``limits={"max_urls": 0}`` does: the declaration
    checks itself, wherever it is built."""
    group, _, field = name.partition(".")
    kind = GROUP_OF[group]
    inner: dict[str, Any] = {"key": KEY} if group == "indexnow" and field != "key" else {}
    refused, accepted = CHECKS[name]
    for value in refused:
        if name == "indexnow.key_location" and value in ("/sitemap.xml", "/keys/k.txt"):
            continue  # refused against the sitemap's path: by Settings (below)
        with pytest.raises(ConfigurationError, match=f"^{re.escape(name)}: "):
            kind(**inner, **{field: value})
    for value in accepted:
        assert getattr(kind(**inner, **{field: value}), field) == value


def test_a_key_location_is_checked_against_the_sitemaps_path() -> None:
    located = IndexNowSettings(key=KEY, key_location="/keys/k.txt")
    with pytest.raises(ConfigurationError, match=r"^indexnow\.key_location: '/keys/k.txt': "):
        Settings(base_url=BASE, indexnow=located)
    Settings(base_url=BASE, path="/keys/sitemap.xml", indexnow=located)


def test_unknown_and_missing_options_are_named() -> None:
    with pytest.raises(ConfigurationError, match=r"^max_url: not a setting; the settings are "):
        make_settings({"base_url": BASE, "max_url": 10})
    with pytest.raises(ConfigurationError, match=r"^base_url: required, e\.g\. "):
        make_settings({"path": "/sitemap.xml"})
    # The old flat spelling is gone: named as unknown, as any other.
    with pytest.raises(ConfigurationError, match=r"^max_urls: not a setting; "):
        make_settings({"base_url": BASE, "max_urls": 10})
    with pytest.raises(
        ConfigurationError,
        match=r"^limits\.max_url: not a setting of Limits; its settings are max_urls, ",
    ):
        make_settings({"base_url": BASE, "limits": {"max_url": 10}})
    with pytest.raises(ConfigurationError, match=r"^indexnow\.key: required, "):
        make_settings({"base_url": BASE, "indexnow": {"every": 60}})


def test_no_indexnow_setting_exists_without_a_key() -> None:
    with pytest.raises(TypeError, match="key"):
        IndexNowSettings(every=60)  # type: ignore[call-arg]


def test_a_group_of_the_wrong_kind_is_a_type_error() -> None:
    with pytest.raises(ConfigurationTypeError, match=r"^limits: must be a Limits or a mapping "):
        make_settings({"base_url": BASE, "limits": 5})
    with pytest.raises(ConfigurationTypeError, match=r"^gzip: must be a Gzip, a mapping .* or "):
        make_settings({"base_url": BASE, "gzip": 0})


def test_plain_data_builds_the_groups() -> None:
    settings = make_settings(
        {
            "base_url": BASE,
            "limits": {"max_urls": 1000},
            "gzip": True,
            "indexnow": {"key": KEY, "every": 60},
        }
    )
    assert settings.limits == Limits(max_urls=1000)
    assert settings.gzip == Gzip()
    assert settings.indexnow == IndexNowSettings(key=KEY, every=60)
    assert settings.key_path == f"/{KEY}.txt"
    off = make_settings({"base_url": BASE, "gzip": False})
    assert off.gzip is False and off.gzip_files == Gzip()


def test_the_options_of_the_adapters_are_the_fields_of_settings() -> None:
    """The adapters take ``**settings: Unpack[Options]``: the same names, of the same types."""
    assert list(Options.__annotations__) == [f.name for f in fields(Settings)]
    assert get_type_hints(Options) == get_type_hints(Settings)
    # Required[...] as written (the annotations are strings: __required_keys__ misses it).
    hints = get_type_hints(Options, include_extras=True)
    required = {name for name, hint in hints.items() if get_origin(hint) is Required}
    assert required == {f.name for f in fields(Settings) if f.default is MISSING}


def test_allowed_hosts_are_canonical_and_start_with_the_base_urls() -> None:
    settings = make_settings(
        {
            "base_url": "https://Example.com:443/shop/",
            "allowed_hosts": ["WWW.example.com", "example.com:8443", "example.com"],
        }
    )
    assert settings.allowed_hosts == ("example.com", "www.example.com", "example.com:8443")


def reference_blocks() -> list[str]:
    """The objects the settings page renders (``::: sitemap_middleware.X``)."""
    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    return re.findall(r"^::: sitemap_middleware\.(\w+)$", text, re.MULTILINE)


def test_the_settings_page_renders_every_class_of_the_declaration() -> None:
    assert reference_blocks() == ["Settings", *(kind.__name__ for kind in GROUPS)]


@functools.cache
def _settings_as_griffe_reads_them() -> griffe.Module:
    """The settings module as mkdocstrings reads it, loaded once for every class of it."""
    return griffe.load("sitemap_middleware.settings", search_paths=[str(ROOT / "src")])


@pytest.mark.parametrize("kind", [Settings, *GROUPS], ids=lambda kind: kind.__name__)
def test_the_reference_shows_every_field_its_default_and_its_docstring(kind: type) -> None:
    """What mkdocstrings renders (read as it reads it, with griffe): each field with a
    docstring, and a default that reads as the declaration's value."""
    rendered = _settings_as_griffe_reads_them()[kind.__name__]
    assert rendered.docstring is not None and rendered.docstring.value.strip()
    for field in fields(kind):
        attribute = rendered.members[field.name]
        assert attribute.docstring is not None and attribute.docstring.value.strip(), field.name
        if field.default is MISSING:
            assert attribute.value is None, field.name
            continue
        shown = str(attribute.value)
        try:
            value = ast.literal_eval(shown)
        except ValueError:  # a name or a call: UTC, Headers()
            value = eval(shown, vars(settings_module))  # our own source
        assert value == field.default, field.name


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


TYPED_USE = """
from sitemap_middleware import Headers, Limits, SitemapApp

SitemapApp(sources=["/"], base_url="https://example.com/", limits=Limits(max_urls=10))
SitemapApp(sources=["/"], base_url="https://example.com/", limits=5)
SitemapApp(sources=["/"], base_url="https://example.com/", limits=Headers())
SitemapApp(sources=["/"], base_url="https://example.com/", max_urls=10)
Limits(max_urls="10")
"""


def test_a_wrong_group_is_a_type_checkers_error(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The adapters' options are typed: mypy finds a group of the wrong type, a flat
    setting of old and a field of the wrong type, and nothing in the right call."""
    script = tmp_path / "use.py"
    script.write_text(TYPED_USE, encoding="utf-8")
    with shared_mypy_cache(tmp_path_factory) as cache:
        checked = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(script)],
            capture_output=True,
            text=True,
            env={**os.environ, "MYPYPATH": str(ROOT / "src")},
            cwd=tmp_path,
            check=False,
        )
    errors = [line for line in checked.stdout.splitlines() if ": error: " in line]
    assert [int(line.split(":")[1]) for line in errors] == [5, 6, 7, 8], checked.stdout
