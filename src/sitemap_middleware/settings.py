"""Settings, validated once at construction; every error names the setting and the fix."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, tzinfo
from importlib.util import find_spec
from typing import Any, Literal, Required, TypedDict
from urllib.parse import urlsplit

from .core.spec import (
    INDEXNOW_ENDPOINT,
    INDEXNOW_KEY,
    MAX_BYTES,
    MAX_LOC_LENGTH,
    MAX_URLS,
    MIN_LOC_LENGTH,
)
from .core.urls import Site, normalize_host

MODES = ("intercept", "fallback")
INDEX_MODES = ("auto", "always")
FRESHNESS = ("incremental", "exact")
_HEADER_VALUE = re.compile(r"[\x20-\x7e\t]*")
_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*")


class ConfigurationError(ValueError):
    """A setting is wrong; raised when the middleware or a source is built, never per
    request. The message starts with the setting's name and says the fix."""


class ConfigurationTypeError(ConfigurationError, TypeError):
    """A setting of the wrong kind (an ``Engine`` where an ``AsyncEngine`` belongs, ...)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that shapes what the middleware answers."""

    base_url: str
    path: str = "/sitemap.xml"
    mode: str = "intercept"
    content_type: str = "text/xml; charset=utf-8"
    cache_control: str | None = "no-cache"
    x_robots_tag: str | None = "noindex"
    naive_timezone: tzinfo = UTC
    strict: bool = False
    batch_size: int = 500
    chunk_bytes: int = 262_144
    retry_after: int = 120
    max_urls: int = MAX_URLS
    max_bytes: int = MAX_BYTES
    max_loc_length: int = MAX_LOC_LENGTH
    index: str = "auto"
    gzip: bool = True
    gzip_level: int = 6
    index_gz: bool = False
    max_generations: int | None = 4
    allowed_hosts: tuple[str, ...] | None = None
    robots_txt: bool = True
    html: bool = False
    news_tick: int = 900
    summary_ttl: float = 0.0
    busy_retry_after: int = 5
    lastmod_tolerance: int = 60
    freshness: str = "incremental"
    refresh_interval: float = 1.0
    recount_interval: float | None = None
    exact_rows: int = 2_000
    indexnow_key: str | None = None
    indexnow_key_location: str | None = None
    indexnow_endpoint: str = INDEXNOW_ENDPOINT
    indexnow_every: float | None = None

    def __post_init__(self) -> None:
        def fail(setting: str, problem: str) -> ConfigurationError:
            return ConfigurationError(f"{setting}: {problem}")

        if not isinstance(self.path, str) or not _PATH.fullmatch(self.path):
            raise fail(
                "path",
                f"must be an absolute URL path such as '/sitemap.xml', got {self.path!r}",
            )
        if not self.path.endswith(".xml") or self.path.endswith("/.xml"):
            raise fail("path", f"must name an .xml file such as '/sitemap.xml', got {self.path!r}")
        try:
            Site.build(self.base_url, self.path)
        except ValueError as exc:
            raise fail("base_url", str(exc)) from None
        if self.mode not in MODES:
            raise fail("mode", f"must be one of {', '.join(MODES)}, got {self.mode!r}")
        for name in ("content_type", "cache_control", "x_robots_tag"):
            value = getattr(self, name)
            if value is None and name != "content_type":
                continue
            if (
                not isinstance(value, str)
                or not value.strip()
                or not _HEADER_VALUE.fullmatch(value)
            ):
                raise fail(name, f"must be a non-empty printable ASCII header value, got {value!r}")
        if not isinstance(self.naive_timezone, tzinfo):
            raise fail(
                "naive_timezone",
                "must be a tzinfo such as datetime.UTC or zoneinfo.ZoneInfo('Europe/Paris')",
            )
        for name in ("strict", "gzip", "index_gz", "robots_txt", "html"):
            if not isinstance(getattr(self, name), bool):
                raise fail(name, f"must be True or False, got {getattr(self, name)!r}")
        if self.index not in INDEX_MODES:
            raise fail("index", f"must be one of {', '.join(INDEX_MODES)}, got {self.index!r}")
        # No fetch need hold more rows than a document lists URLs.
        _positive_int("batch_size", self.batch_size, 1, MAX_URLS)
        _positive_int("chunk_bytes", self.chunk_bytes, 1, 16_777_216)
        _positive_int("retry_after", self.retry_after, 0, 86_400)
        _positive_int("max_urls", self.max_urls, 1, MAX_URLS)
        _positive_int("max_bytes", self.max_bytes, 65_536, MAX_BYTES)
        _positive_int("max_loc_length", self.max_loc_length, MIN_LOC_LENGTH, MAX_LOC_LENGTH)
        _positive_int("gzip_level", self.gzip_level, 1, 9)
        if self.allowed_hosts is not None:
            object.__setattr__(self, "allowed_hosts", self._hosts(self.allowed_hosts))
        if self.max_generations is not None:
            _positive_int("max_generations", self.max_generations, 1, 10_000)
        _positive_int("busy_retry_after", self.busy_retry_after, 0, 86_400)
        _positive_int("news_tick", self.news_tick, 1, 86_400)
        _positive_int("lastmod_tolerance", self.lastmod_tolerance, 0, 86_400)
        ttl = self.summary_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 <= ttl <= 3_600:
            raise ConfigurationError(
                f"summary_ttl: must be a number of seconds from 0 to 3600, got {ttl!r}"
            )
        if self.freshness not in FRESHNESS:
            raise fail(
                "freshness", f"must be one of {', '.join(FRESHNESS)}, got {self.freshness!r}"
            )
        _seconds("refresh_interval", self.refresh_interval, 0, 3_600)
        if self.recount_interval is not None:
            _seconds("recount_interval", self.recount_interval, 0, 86_400)
        _positive_int("exact_rows", self.exact_rows, 0, 10_000_000)
        check_indexnow(self)

    def _hosts(self, value: object) -> tuple[str, ...]:
        """``allowed_hosts`` as ``host[:port]`` in canonical form, the base URL's host first."""
        site = self.site
        scheme = site.origin.partition(":")[0]
        if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
            raise ConfigurationError(
                f"allowed_hosts: must be a list of host names such as ['example.com', "
                f"'www.example.com'], got {value!r}"
            )
        hosts = [site.origin.partition("://")[2]]
        for item in value:
            host = normalize_host(item, scheme) if isinstance(item, str) else None
            if host is None or "*" in str(item):
                raise ConfigurationError(
                    f"allowed_hosts: {item!r} is not a host name such as 'example.com' or "
                    "'example.com:8443' (no wildcards)"
                )
            if host not in hosts:
                hosts.append(host)
        return tuple(hosts)

    @property
    def key_path(self) -> str | None:
        """The route path of the IndexNow key file; None without IndexNow."""
        if self.indexnow_key is None:
            return None
        return self.indexnow_key_location or f"/{self.indexnow_key}.txt"

    @property
    def site(self) -> Site:
        return Site.build(self.base_url, self.path, self.max_loc_length)

    def fingerprint(self) -> str:
        """The settings that change the bytes of a document (they go into the ETag)."""
        return "|".join(
            (self.site.base_url, self.path, repr(self.naive_timezone), str(self.max_loc_length))
        )


def _seconds(name: str, value: object, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigurationError(
            f"{name}: must be a number of seconds from {low:g} to {high:g}, got {value!r}"
        )


def _positive_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(f"{name}: must be an integer from {low} to {high}, got {value!r}")


class Options(TypedDict, total=False):
    """The settings as keyword arguments of the middleware and apps (see :class:`Settings`
    and the README's *Options*): editors complete them and type checkers check them."""

    base_url: Required[str]
    path: str
    mode: Literal["intercept", "fallback"]
    content_type: str
    cache_control: str | None
    x_robots_tag: str | None
    naive_timezone: tzinfo
    strict: bool
    batch_size: int
    chunk_bytes: int
    retry_after: int
    max_urls: int
    max_bytes: int
    max_loc_length: int
    index: Literal["auto", "always"]
    gzip: bool
    gzip_level: int
    index_gz: bool
    max_generations: int | None
    allowed_hosts: Sequence[str] | None
    robots_txt: bool
    html: bool
    news_tick: int
    summary_ttl: float
    busy_retry_after: int
    lastmod_tolerance: int
    freshness: Literal["incremental", "exact"]
    refresh_interval: float
    recount_interval: float | None
    exact_rows: int
    indexnow_key: str | None
    indexnow_key_location: str | None
    indexnow_endpoint: str
    indexnow_every: float | None


def check_indexnow(settings: Settings) -> None:
    """The IndexNow settings: a key of the protocol's form, a key file whose folder holds the
    sitemap's scope (a key file vouches only for URLs below its folder), an http(s) endpoint."""
    key = settings.indexnow_key
    if key is not None and (not isinstance(key, str) or not INDEXNOW_KEY.fullmatch(key)):
        raise ConfigurationError(
            "indexnow_key: must be 8 to 128 characters from a-z, A-Z, 0-9 and '-' (the "
            f"IndexNow protocol's form), got {key!r}"
        )
    location = settings.indexnow_key_location
    if location is not None:
        _check_key_location(location, settings.path)
        if key is None:
            raise ConfigurationError(
                f"indexnow_key_location: {location!r} needs indexnow_key, the key it serves"
            )
    endpoint = settings.indexnow_endpoint
    parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"indexnow_endpoint: must be an http(s) URL such as {INDEXNOW_ENDPOINT!r}, "
            f"got {endpoint!r}"
        )
    every = settings.indexnow_every
    if every is not None:
        _seconds("indexnow_every", every, 1, 86_400)
        if key is None:
            raise ConfigurationError(f"indexnow_every: {every!r} needs indexnow_key, to push")
        missing = [name for name in ("httpx", "sqlalchemy") if find_spec(name) is None]
        if missing:
            raise ConfigurationError(
                f"indexnow_every: pushing needs {' and '.join(missing)} (not installed): "
                "pip install 'sitemap_middleware[indexnow]'"
            )


def _check_key_location(location: object, path: str) -> None:
    if (
        not isinstance(location, str)
        or not _PATH.fullmatch(location)
        or location
        in (
            path,
            "/robots.txt",
        )
    ):
        raise ConfigurationError(
            "indexnow_key_location: must be a path of its own such as '/indexnow-key.txt', "
            f"got {location!r}"
        )
    folder = location.rpartition("/")[0] + "/"
    scope = path.rpartition("/")[0] + "/"
    if not scope.startswith(folder):
        raise ConfigurationError(
            f"indexnow_key_location: {location!r}: a key file in {folder} vouches only for "
            f"URLs below it, not for the sitemap's {scope}; put it in {scope} or above"
        )


def make_settings(options: Mapping[str, Any]) -> Settings:
    """Settings from keyword options; an unknown option is named in the error."""
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigurationError(
            f"{unknown[0]}: not a setting; the settings are {', '.join(sorted(known))}"
        )
    if "base_url" not in options:
        raise ConfigurationError("base_url: required, e.g. base_url='https://example.com/'")
    return Settings(**options)
