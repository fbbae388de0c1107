"""Settings, validated once at construction; every error names the setting and the fix.

One declaration: :class:`Settings` holds the options that shape the site, and a typed group
(:class:`Headers`, :class:`Limits`, :class:`Lastmods`, :class:`Freshness`, :class:`Load`,
:class:`Gzip`, :class:`IndexNowSettings`) holds each family of the others. Every field has
its type, its default and its docstring (the reference is rendered from them), and each
class checks its own fields in ``__post_init__``: a message names the setting with its
group (``limits.max_urls: ...``). A group may be given as a plain mapping of its fields
(``{"limits": {"max_urls": 1000}}``, as Django's ``SITEMAP_MIDDLEWARE`` holds it): the
same class builds and checks it, and names a key it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from datetime import UTC, tzinfo
from functools import cached_property
from importlib.util import find_spec
from typing import Any, ClassVar, Literal, Required, TypedDict, TypeVar
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


def _fail(setting: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"{setting}: {problem}")


def _int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(name, f"must be an integer from {low} to {high}, got {value!r}")


def _seconds(name: str, value: object, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise _fail(name, f"must be a number of seconds from {low:g} to {high:g}, got {value!r}")


def _bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise _fail(name, f"must be True or False, got {value!r}")


def _one_of(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise _fail(name, f"must be one of {', '.join(choices)}, got {value!r}")


def _header(name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip() or not _HEADER_VALUE.fullmatch(value):
        raise _fail(name, f"must be a non-empty printable ASCII header value, got {value!r}")


NO_CACHE = "no-cache"
"""``Cache-Control`` by default: every cache may store a document but revalidates it each
time (a ``304`` makes that cheap)."""
SURROGATE_KEY_FIELDS = ("surrogate-key", "cache-tag")
"""The fields that may carry a document's surrogate keys (``headers.surrogate_keys``):
``Surrogate-Key`` (Fastly, Varnish xkey; space-separated) and ``Cache-Tag`` (Cloudflare;
comma-separated)."""
_YEAR = 31_536_000


def cdn_cache_control(
    s_maxage: int = 300, stale_while_revalidate: int = 60, stale_if_error: int = 86_400
) -> str:
    """A ``Cache-Control`` for a sitemap behind a CDN: browsers revalidate every time
    (``max-age=0``), shared caches keep a document ``s_maxage`` seconds (1 to a year), may
    serve it ``stale_while_revalidate`` seconds longer while they fetch it again, and
    ``stale_if_error`` seconds longer while the origin fails (0 to a year each; 0 leaves
    the directive out). The default: ``public, max-age=0, s-maxage=300,
    stale-while-revalidate=60, stale-if-error=86400``."""
    _int("headers.cdn(s_maxage)", s_maxage, 1, _YEAR)
    _int("headers.cdn(stale_while_revalidate)", stale_while_revalidate, 0, _YEAR)
    _int("headers.cdn(stale_if_error)", stale_if_error, 0, _YEAR)
    directives = ["public", "max-age=0", f"s-maxage={s_maxage}"]
    if stale_while_revalidate:
        directives.append(f"stale-while-revalidate={stale_while_revalidate}")
    if stale_if_error:
        directives.append(f"stale-if-error={stale_if_error}")
    return ", ".join(directives)


@dataclass(frozen=True, slots=True, kw_only=True)
class Headers:
    """The headers of the answers: ``Settings(headers=Headers(cache_control=None))``."""

    group: ClassVar[str] = "headers"

    content_type: str = "text/xml; charset=utf-8"
    """``Content-Type`` of the sitemap (``application/xml; charset=utf-8`` is the other
    common choice)."""
    cache_control: str | None = NO_CACHE
    """``Cache-Control`` on 200 and 304 (``None`` to omit). ``no-cache`` lets caches store
    the sitemap but revalidate every time, which a 304 makes cheap; behind a CDN,
    :meth:`Headers.cdn` (or :func:`cdn_cache_control`) lets shared caches keep it. Never on
    a 4xx or 5xx: those are ``no-store``."""
    x_robots_tag: str | None = "noindex"
    """``X-Robots-Tag`` (``None`` to omit): keeps the XML file itself out of search
    results."""
    retry_after: int = 120
    """Seconds (0 to 86,400) in the ``Retry-After`` of a 503 for a failure (a database that
    does not answer, say)."""
    surrogate_keys: tuple[str, ...] = ()
    """The fields that carry each document's surrogate keys, on its 200 and 304 (never on a
    4xx or 5xx): ``"surrogate-key"`` (Fastly, Varnish xkey) and/or ``"cache-tag"``
    (Cloudflare). Empty (the default): none. The keys name the site, the source and the
    document, so that a purge drops exactly what changed (see the deployment guide, "Behind
    a CDN")."""

    def __post_init__(self) -> None:
        _header("headers.content_type", self.content_type, optional=False)
        _header("headers.cache_control", self.cache_control)
        _header("headers.x_robots_tag", self.x_robots_tag)
        _int("headers.retry_after", self.retry_after, 0, 86_400)
        keys = self.surrogate_keys
        if (
            not isinstance(keys, list | tuple)
            or not all(isinstance(name, str) for name in keys)
            or not {name.lower() for name in keys} <= set(SURROGATE_KEY_FIELDS)
        ):
            raise _fail(
                "headers.surrogate_keys",
                f"must be a list of {' and/or '.join(map(repr, SURROGATE_KEY_FIELDS))}, "
                f"got {keys!r}",
            )
        # Lowercase, once each, in the order given.
        object.__setattr__(self, "surrogate_keys", tuple(dict.fromkeys(n.lower() for n in keys)))

    @classmethod
    def cdn(
        cls,
        s_maxage: int = 300,
        stale_while_revalidate: int = 60,
        stale_if_error: int = 86_400,
        *,
        surrogate_keys: Sequence[str] = ("surrogate-key",),
        **others: Any,
    ) -> Headers:
        """The headers for a CDN in front: :func:`cdn_cache_control` of the three numbers
        (checked as it checks them) and surrogate keys (``Surrogate-Key`` by default; add
        ``"cache-tag"`` for Cloudflare). ``others``: the other fields, as for
        :class:`Headers`."""
        cache_control = cdn_cache_control(s_maxage, stale_while_revalidate, stale_if_error)
        return cls(cache_control=cache_control, surrogate_keys=tuple(surrogate_keys), **others)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The size of a document and of the work behind it:
    ``Settings(limits=Limits(max_urls=10_000))``."""

    group: ClassVar[str] = "limits"

    max_urls: int = MAX_URLS
    """URLs per document, 1 to 50,000; by default the protocol's maximum, 50,000."""
    max_bytes: int = MAX_BYTES
    """Uncompressed bytes per document, 65,536 to 52,428,800; by default the protocol's
    maximum, 52,428,800 (``10485760`` is the older, stricter bound)."""
    max_loc_length: int = MAX_LOC_LENGTH
    """The longest loc (once percent-encoded) a row may have, 12 to 2,047 (the default);
    longer ones are bad rows. Pages are sized so that ``max_bytes`` holds even if every loc had this
    length: declaring a smaller bound for short URLs gives larger pages."""
    batch_size: int = 500
    """Rows rendered at a time, 1 to 50,000 (no batch need hold more rows than a document
    lists): a sync engine fetches that many per database round trip (``yield_per``); an
    async engine fetches at least 2,000 a trip (one hand-off to aiosqlite's thread, or one
    round trip) and serves them in batches of this size."""
    chunk_bytes: int = 262_144
    """Body bytes gathered before a chunk is sent, 1 to 16,777,216; a chunk is at most this
    plus one batch. A failure before the first chunk is ready still becomes a ``503``."""

    def __post_init__(self) -> None:
        _int("limits.max_urls", self.max_urls, 1, MAX_URLS)
        _int("limits.max_bytes", self.max_bytes, 65_536, MAX_BYTES)
        _int("limits.max_loc_length", self.max_loc_length, MIN_LOC_LENGTH, MAX_LOC_LENGTH)
        _int("limits.batch_size", self.batch_size, 1, MAX_URLS)
        _int("limits.chunk_bytes", self.chunk_bytes, 1, 16_777_216)


@dataclass(frozen=True, slots=True, kw_only=True)
class Lastmods:
    """How lastmods are read: ``Settings(lastmods=Lastmods(naive_timezone=ZoneInfo(...)))``."""

    group: ClassVar[str] = "lastmods"

    naive_timezone: tzinfo = UTC
    """Timezone in which naive ``datetime`` lastmods (and zone-less W3C strings) are
    read."""
    tolerance: int = 60
    """Seconds (0 to 86,400) a lastmod may lie ahead of the clock. A later one is a bad field:
    dropped, logged, counted, never in a page, the index or ``Last-Modified``."""
    news_tick: int = 900
    """Seconds (1 to 86,400) between moves of the two-day news window (documents of sources
    that declare news)."""

    def __post_init__(self) -> None:
        if not isinstance(self.naive_timezone, tzinfo):
            raise _fail(
                "lastmods.naive_timezone",
                "must be a tzinfo such as datetime.UTC or zoneinfo.ZoneInfo('Europe/Paris')",
            )
        _int("lastmods.tolerance", self.tolerance, 0, 86_400)
        _int("lastmods.news_tick", self.news_tick, 1, 86_400)


@dataclass(frozen=True, slots=True, kw_only=True)
class Freshness:
    """How current the validators and the index are, and what that costs:
    ``Settings(freshness=Freshness(mode="exact"))``."""

    group: ClassVar[str] = "freshness"

    mode: Literal["incremental", "exact"] = "incremental"
    """``"incremental"``: the validators and the index of a large table come from pages
    kept current between recounts, so that steady traffic never waits on whole-table work,
    and every change shows within a bound in seconds; ``"exact"``: every request reads its
    aggregates."""
    refresh_interval: float = 1.0
    """Seconds (0 to 3,600) between refreshes of the pages kept current (the rows whose
    lastmod moved); at least 50 times the last read of those rows."""
    recount_interval: float | None = None
    """Seconds (0 to 86,400) between recounts of the pages kept current (a whole-table pass:
    what refreshes cannot see, such as deletes). ``None``: 50 times the last recount's
    duration, at least ``refresh_interval``."""
    exact_rows: int = 2_000
    """A source of at most this many rows (0 to 10,000,000; as last counted) is read on every
    request even in incremental mode: each index recounts it, each page reads its own
    aggregates, with the tokens the pages kept current give. ``0``: every live source is
    kept current."""
    summary_ttl: float = 0.0
    """Seconds (0 to 3,600) a document's summary (the aggregates behind its validators) is
    reused in this process. ``0``: read for every request. A second or two turns a
    crawler's burst of conditional requests into one query per page and process, at the
    price of validators that may lag a change by that long (the body is always read
    fresh)."""

    def __post_init__(self) -> None:
        _one_of("freshness.mode", self.mode, FRESHNESS)
        _seconds("freshness.refresh_interval", self.refresh_interval, 0, 3_600)
        if self.recount_interval is not None:
            _seconds("freshness.recount_interval", self.recount_interval, 0, 86_400)
        _int("freshness.exact_rows", self.exact_rows, 0, 10_000_000)
        _seconds("freshness.summary_ttl", self.summary_ttl, 0, 3_600)


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    """How many documents this process generates at once, and what a request past that
    bound is told: ``Settings(load=Load(max_generations=8))``."""

    group: ClassVar[str] = "load"

    max_generations: int | None = 4
    """Documents this process generates at once, 1 to 10,000 (``None``: no bound). Past
    it, a request that needs rows (or the index's page aggregate) gets ``503`` with
    ``Retry-After: retry_after``; ``304``s and ``HEAD``s are never counted."""
    retry_after: int = 5
    """Seconds (0 to 86,400) in the ``Retry-After`` of that 503."""

    def __post_init__(self) -> None:
        if self.max_generations is not None:
            _int("load.max_generations", self.max_generations, 1, 10_000)
        _int("load.retry_after", self.retry_after, 0, 86_400)


@dataclass(frozen=True, slots=True, kw_only=True)
class Gzip:
    """Compression, on by default: ``Settings(gzip=Gzip(level=9))``; ``gzip=False`` turns
    it off (the ``.xml.gz`` files are served either way)."""

    group: ClassVar[str] = "gzip"

    level: int = 6
    """zlib level, 1 to 9, for both the coding and the ``.xml.gz`` files."""
    index_files: bool = False
    """List the children's ``.xml.gz`` files in the index instead of the ``.xml`` ones."""

    def __post_init__(self) -> None:
        _int("gzip.level", self.level, 1, 9)
        _bool("gzip.index_files", self.index_files)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexNowSettings:
    """IndexNow, off by default: ``Settings(indexnow=IndexNowSettings(key="..."))`` serves
    the key file and lets :class:`~sitemap_middleware.contrib.indexnow.IndexNow` push; the
    key is required, so no other IndexNow setting exists without it."""

    group: ClassVar[str] = "indexnow"

    key: str
    """The site's IndexNow key: 8 to 128 characters from ``a-z A-Z 0-9 -`` (the protocol's
    form)."""
    key_location: str | None = None
    """Path of the key file instead of ``/{key}.txt``, in the sitemap's folder or above (a
    key file vouches only for URLs below its folder)."""
    endpoint: str = INDEXNOW_ENDPOINT
    """Where pushes go, an http(s) URL; by default ``https://api.indexnow.org/indexnow``
    (one endpoint shares with Bing, Yandex, Naver, Seznam, Yep)."""
    every: float | None = None
    """Seconds (1 to 86,400): the ASGI middleware pushes every so many seconds from its
    lifespan's startup to its shutdown (this needs the ``indexnow`` extra). ``None``: no
    task."""

    def __post_init__(self) -> None:
        key = self.key
        if not isinstance(key, str) or not INDEXNOW_KEY.fullmatch(key):
            raise _fail(
                "indexnow.key",
                "must be 8 to 128 characters from a-z, A-Z, 0-9 and '-' (the IndexNow "
                f"protocol's form), got {key!r}",
            )
        location = self.key_location
        if location is not None and (
            not isinstance(location, str)
            or not _PATH.fullmatch(location)
            or location == "/robots.txt"
        ):
            raise _fail(
                "indexnow.key_location",
                f"must be a path of its own such as '/indexnow-key.txt', got {location!r}",
            )
        endpoint = self.endpoint
        parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise _fail(
                "indexnow.endpoint",
                f"must be an http(s) URL such as {INDEXNOW_ENDPOINT!r}, got {endpoint!r}",
            )
        if self.every is not None:
            _seconds("indexnow.every", self.every, 1, 86_400)
            missing = [name for name in ("httpx", "sqlalchemy") if find_spec(name) is None]
            if missing:
                raise _fail(
                    "indexnow.every",
                    f"pushing needs {' and '.join(missing)} (not installed): "
                    "pip install 'sitemap_middleware[indexnow]'",
                )

    @property
    def key_path(self) -> str:
        """The route path of the key file."""
        return self.key_location or f"/{self.key}.txt"


@dataclass(frozen=True, slots=True, kw_only=True)
class Tenants:
    """How a middleware given ``sites=`` keeps its sites:
    ``Settings(tenants=Tenants(max_sites=5_000))``; without ``sites=`` it changes nothing."""

    group: ClassVar[str] = "tenants"

    max_sites: int = 1_000
    """Sites (1 to 1,000,000) whose sitemap this process keeps, the least recently requested
    dropped first; a dropped site is built again on its next request, with state of its own
    as new (its validators are the same: they come from the data)."""
    ttl: float = 30.0
    """Seconds (0 to 86,400) a resolver's answer for a host (a site, or None) is used before
    the resolver is asked again; a site's sitemap is kept while the resolver answers an equal
    :class:`SiteConfig`."""
    timeout: float = 5.0
    """Seconds (0.001 to 300) the resolver may take; past it, like a resolver that raises,
    the request gets ``503`` (``Cache-Control: no-store``, ``Retry-After: retry_after``)."""
    retry_after: int = 5
    """Seconds (0 to 86,400) in the ``Retry-After`` of the 503 of a failed resolver."""

    def __post_init__(self) -> None:
        _int("tenants.max_sites", self.max_sites, 1, 1_000_000)
        _seconds("tenants.ttl", self.ttl, 0, 86_400)
        _seconds("tenants.timeout", self.timeout, 0.001, 300)
        _int("tenants.retry_after", self.retry_after, 0, 86_400)


@dataclass(frozen=True, slots=True, kw_only=True)
class RobotsFilter:
    """Locs the site's own ``robots.txt`` disallows, left out of the sitemap: off by default;
    ``robots_filter=True`` (or ``RobotsFilter(ttl=60)``) turns it on. It needs protego
    (``pip install 'sitemap_middleware[robots]'``): without it the middleware fails to start.

    The middleware asks the application in process for ``/robots.txt`` (a plain ``GET`` with
    the base URL's ``Host``), on the first request for a document and again once ``ttl`` has
    passed, and leaves out every loc the ``User-agent: *`` group disallows (RFC 9309
    matching). Each one left out is a bad row (counted, logged once: ``robots-disallowed``),
    never silent, and the ETag of every document carries a digest of the rules, so that a
    change of what is left out moves the validators.

    What an answer means follows RFC 9309: a ``4xx`` (no file) allows everything. A ``5xx``,
    a redirect it cannot follow in process, an application that raises, or no answer within
    ``timeout`` is an unreachable file: the last rules read are kept (as a crawler keeps its
    cached copy), and with none read yet every document is a ``503`` with ``Retry-After``
    (``headers.retry_after``) until the file can be read: neither a disallowed loc nor an
    emptied sitemap is ever published. Each is logged."""

    group: ClassVar[str] = "robots_filter"

    ttl: float = 300.0
    """Seconds (1 to 86,400) the rules read are used before ``/robots.txt`` is asked for
    again."""
    timeout: float = 5.0
    """Seconds (0.01 to 60) the application is given to answer for ``/robots.txt``; past
    them it is unreachable for now, and its late answer is taken when it comes. Inside a
    database transaction of Django's (a ``TestCase``'s), a sync view answers in the request's
    own thread, where the transaction's rows are seen, without the bound."""

    def __post_init__(self) -> None:
        _seconds("robots_filter.ttl", self.ttl, 1, 86_400)
        _seconds("robots_filter.timeout", self.timeout, 0.01, 60)
        if find_spec("protego") is None:
            raise _fail(
                "robots_filter",
                "matching robots.txt rules needs protego (not installed): "
                "pip install 'sitemap_middleware[robots]'",
            )


Group = (
    Headers
    | Limits
    | Lastmods
    | Freshness
    | Load
    | Gzip
    | IndexNowSettings
    | Tenants
    | RobotsFilter
)
G = TypeVar(
    "G", Headers, Limits, Lastmods, Freshness, Load, Gzip, IndexNowSettings, Tenants, RobotsFilter
)
GROUPS: tuple[type[Group], ...] = (
    Headers,
    Limits,
    Lastmods,
    Freshness,
    Load,
    Gzip,
    IndexNowSettings,
    Tenants,
    RobotsFilter,
)


def group_of(kind: type[G], value: object) -> G:
    """``value`` as the group ``kind``: an instance as it is, a mapping of its fields built
    (an unknown or a missing key named with the group)."""
    if isinstance(value, kind):
        return value
    name = kind.group
    if not isinstance(value, Mapping):
        raise ConfigurationTypeError(
            f"{name}: must be a {kind.__name__} or a mapping of its settings, got {value!r}"
        )
    known = {f.name: f for f in fields(kind)}
    for key in value:
        if key not in known:
            raise _fail(
                f"{name}.{key}",
                f"not a setting of {kind.__name__}; its settings are {', '.join(known)}",
            )
    for key, field in known.items():
        if key not in value and field.default is MISSING:
            raise _fail(f"{name}.{key}", f"required, e.g. {{{key!r}: ...}}")
    return kind(**value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything that shapes what the middleware answers.

    The adapters take these fields as keyword arguments, and Django's middleware reads
    them from ``SITEMAP_MIDDLEWARE``. A group may be given as an instance
    (``limits=Limits(max_urls=1000)``) or as a mapping of its fields
    (``limits={"max_urls": 1000}``).
    """

    base_url: str
    """Public URL of the application's root, e.g. ``https://example.com/`` or
    ``https://example.com/shop/``. Scheme and host of every loc come from here, never from
    the request. Required."""
    path: str = "/sitemap.xml"
    """Path of the sitemap below the application's mount point (``root_path`` is honoured).
    Locs must lie in its directory (the sitemaps.org scope rule)."""
    mode: Literal["intercept", "fallback"] = "intercept"
    """``"intercept"``: the path never reaches the app. ``"fallback"``: the app answers
    first; only its 404 is replaced (the 404 body is dropped, not buffered)."""
    index: Literal["auto", "always"] = "auto"
    """``"auto"``: the root is a ``urlset`` when there is one source and it fits on one
    page, else a ``sitemapindex``. ``"always"``: always an index."""
    html: bool = False
    """Serve the HTML siblings (``/sitemap.html``, ``/sitemap-{source}-{n}.html``): the
    human view."""
    robots_txt: bool = True
    """Add the ``Sitemap:`` line to the app's ``/robots.txt`` (or serve a minimal one)."""
    allowed_hosts: Sequence[str] | None = None
    """``None``: every URL comes from ``base_url`` and the ``Host`` header is never used. A
    list of hosts (``["example.org", "www.example.org:8443"]``, no wildcards): a request
    whose ``Host`` is on it (or is ``base_url``'s host) gets locs and child URLs on that
    host, with ``base_url``'s scheme and path; any other ``Host`` gets ``400``. Kept as a
    tuple in canonical form, ``base_url``'s host first."""
    strict: bool = False
    """Raise ``BadRowError`` on a bad row instead of skipping or dropping it."""
    headers: Headers = Headers()
    """The headers of the answers."""
    limits: Limits = Limits()
    """The size of a document and of the work behind it."""
    lastmods: Lastmods = Lastmods()
    """How lastmods are read."""
    freshness: Freshness = Freshness()
    """How current the validators and the index are."""
    load: Load = Load()
    """How many documents this process generates at once."""
    gzip: Gzip | Literal[False] = Gzip()
    """Compression when the request's ``Accept-Encoding`` allows it (``Vary:
    Accept-Encoding`` on 200 and 304); ``False``: never compressed."""
    indexnow: IndexNowSettings | None = None
    """IndexNow's key file and pushes; ``None``: no IndexNow."""
    tenants: Tenants = Tenants()
    """With ``sites=``: how many sites are kept, how long a resolver's answer holds."""
    robots_filter: RobotsFilter | Literal[False] = False
    """Leave out the locs the application's own ``robots.txt`` disallows for every crawler
    (``User-agent: *``); ``False`` (the default): every loc is listed. ``True`` is
    ``RobotsFilter()``."""

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not _PATH.fullmatch(self.path):
            raise _fail(
                "path", f"must be an absolute URL path such as '/sitemap.xml', got {self.path!r}"
            )
        if not self.path.endswith(".xml") or self.path.endswith("/.xml"):
            raise _fail("path", f"must name an .xml file such as '/sitemap.xml', got {self.path!r}")
        try:
            Site.build(self.base_url, self.path)
        except ValueError as exc:
            raise _fail("base_url", str(exc)) from None
        _one_of("mode", self.mode, MODES)
        _one_of("index", self.index, INDEX_MODES)
        for name in ("html", "robots_txt", "strict"):
            _bool(name, getattr(self, name))
        if self.allowed_hosts is not None:
            object.__setattr__(self, "allowed_hosts", self._hosts(self.allowed_hosts))
        # A group given as a mapping of its fields (plain data) is built and checked here.
        object.__setattr__(self, "headers", group_of(Headers, self.headers))
        object.__setattr__(self, "limits", group_of(Limits, self.limits))
        object.__setattr__(self, "lastmods", group_of(Lastmods, self.lastmods))
        object.__setattr__(self, "freshness", group_of(Freshness, self.freshness))
        object.__setattr__(self, "load", group_of(Load, self.load))
        object.__setattr__(self, "tenants", group_of(Tenants, self.tenants))
        gzip: object = self.gzip
        if gzip is True:  # plain data: {"gzip": True} is the default
            object.__setattr__(self, "gzip", Gzip())
        elif gzip is not False:
            object.__setattr__(self, "gzip", _maybe("gzip", Gzip, gzip, "False"))
        robots_filter: object = self.robots_filter
        if robots_filter is True:
            object.__setattr__(self, "robots_filter", RobotsFilter())
        elif robots_filter is not False:
            object.__setattr__(
                self, "robots_filter", _maybe("robots_filter", RobotsFilter, robots_filter, "False")
            )
        if self.indexnow is not None:
            indexnow = _maybe("indexnow", IndexNowSettings, self.indexnow, "None")
            object.__setattr__(self, "indexnow", indexnow)
            _check_key_location(indexnow.key_location, self.path)

    def _hosts(self, value: object) -> tuple[str, ...]:
        """``allowed_hosts`` as ``host[:port]`` in canonical form, the base URL's host first."""
        site = self.site
        scheme = site.origin.partition(":")[0]
        if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
            raise _fail(
                "allowed_hosts",
                "must be a list of host names such as ['example.com', 'www.example.com'], "
                f"got {value!r}",
            )
        hosts = [site.origin.partition("://")[2]]
        for item in value:
            host = normalize_host(item, scheme) if isinstance(item, str) else None
            if host is None or "*" in str(item):
                raise _fail(
                    "allowed_hosts",
                    f"{item!r} is not a host name such as 'example.com' or 'example.com:8443' "
                    "(no wildcards)",
                )
            if host not in hosts:
                hosts.append(host)
        return tuple(hosts)

    @property
    def key_path(self) -> str | None:
        """The route path of the IndexNow key file; None without IndexNow."""
        return None if self.indexnow is None else self.indexnow.key_path

    @property
    def gzip_files(self) -> Gzip:
        """The level and listing of the ``.xml.gz`` files, served even with ``gzip=False``
        (then at the default level, and not listed)."""
        return self.gzip or Gzip()

    @property
    def site(self) -> Site:
        return Site.build(self.base_url, self.path, self.limits.max_loc_length)

    def fingerprint(self) -> str:
        """The settings that change the bytes of a document (they go into the ETag)."""
        return "|".join(
            (
                self.site.base_url,
                self.path,
                repr(self.lastmods.naive_timezone),
                str(self.limits.max_loc_length),
            )
        )


def _maybe(name: str, kind: type[G], value: object, off: str) -> G:
    """An optional group: the error says how to turn it off as well."""
    try:
        return group_of(kind, value)
    except ConfigurationTypeError:
        raise ConfigurationTypeError(
            f"{name}: must be a {kind.__name__}, a mapping of its settings or {off}, got {value!r}"
        ) from None


def _check_key_location(location: str | None, path: str) -> None:
    """A key file vouches only for URLs below its folder: it must hold the sitemap's."""
    if location is None:
        return
    if location == path:
        raise _fail(
            "indexnow.key_location",
            f"must be a path of its own such as '/indexnow-key.txt', got {location!r}",
        )
    folder = location.rpartition("/")[0] + "/"
    scope = path.rpartition("/")[0] + "/"
    if not scope.startswith(folder):
        raise _fail(
            "indexnow.key_location",
            f"{location!r}: a key file in {folder} vouches only for URLs below it, not for "
            f"the sitemap's {scope}; put it in {scope} or above",
        )


SITE_OVERRIDES = (
    "index",
    "strict",
    "headers",
    "limits",
    "lastmods",
    "freshness",
    "gzip",
    "indexnow",
)
"""The settings a :class:`SiteConfig` may set for its own site (the others are shared)."""
SHARED_ONLY = ("base_url", "allowed_hosts", "indexnow")
"""Settings that cannot sit beside ``sites=``: each site has its own base URL and host."""
PLACEHOLDER_URL = "https://sites.invalid/"
"""The base URL of the shared settings beside ``sites=``, never used for a URL: every site
has its own."""


@dataclass(frozen=True, kw_only=True)
class SiteConfig:
    """One site of a middleware given ``sites=``: its base URL, its sources, and the
    settings it sets for itself (``None``: the shared setting).

    The site answers the host of its ``base_url`` only, and every URL it lists or links
    comes from that base URL. Two configs are equal when their fields are (sources compared
    as objects): a resolver that answers the config it answered before keeps its sitemap.
    """

    base_url: str
    """Public URL of the site's root, e.g. ``https://shop-1.example.com/``."""
    sources: object
    """What ``sources=`` takes: a source, a list of them, a name -> source mapping..."""
    index: Literal["auto", "always"] | None = None
    """The site's own ``index``."""
    strict: bool | None = None
    """The site's own ``strict``."""
    headers: Headers | None = None
    """The site's own ``headers``."""
    limits: Limits | None = None
    """The site's own ``limits``."""
    lastmods: Lastmods | None = None
    """The site's own ``lastmods``."""
    freshness: Freshness | None = None
    """The site's own ``freshness``."""
    gzip: Gzip | Literal[False] | None = None
    """The site's own ``gzip``."""
    indexnow: IndexNowSettings | None = None
    """The site's own IndexNow key (``None``: no IndexNow for the site): its key file is
    served at the site's host only, and its pushes carry only the site's URLs."""

    def __post_init__(self) -> None:
        try:
            Site.build(self.base_url, "/sitemap.xml")
        except ValueError as exc:
            raise _fail("base_url", str(exc)) from None
        # Groups given as plain data are built and checked here, as Settings does.
        if self.headers is not None:
            object.__setattr__(self, "headers", group_of(Headers, self.headers))
        if self.limits is not None:
            object.__setattr__(self, "limits", group_of(Limits, self.limits))
        if self.lastmods is not None:
            object.__setattr__(self, "lastmods", group_of(Lastmods, self.lastmods))
        if self.freshness is not None:
            object.__setattr__(self, "freshness", group_of(Freshness, self.freshness))
        if self.gzip is not None and self.gzip is not False:
            gzip: object = self.gzip
            object.__setattr__(
                self, "gzip", Gzip() if gzip is True else _maybe("gzip", Gzip, gzip, "False")
            )
        if self.indexnow is not None:
            object.__setattr__(
                self, "indexnow", _maybe("indexnow", IndexNowSettings, self.indexnow, "None")
            )
        if self.index is not None:
            _one_of("index", self.index, INDEX_MODES)
        if self.strict is not None:
            _bool("strict", self.strict)

    @cached_property
    def host(self) -> str:
        """``host[:port]`` of the base URL, as :func:`~.core.urls.normalize_host` writes it
        (worked out once: a middleware given ``sites=`` reads it on every request)."""
        return Site.build(self.base_url, "/sitemap.xml").origin.partition("://")[2]

    def settings(self, shared: Settings) -> Settings:
        """The site's settings: ``shared`` with the site's base URL and its own settings."""
        overrides = {
            name: getattr(self, name) for name in SITE_OVERRIDES if getattr(self, name) is not None
        }
        return replace(shared, base_url=self.base_url, **overrides)


def make_shared_settings(options: Mapping[str, Any]) -> Settings:
    """The settings beside ``sites=``, shared by every site: no base URL of their own."""
    for name in SHARED_ONLY:
        if name in options and not (name == "allowed_hosts" and options[name] is None):
            raise _fail(
                name,
                "not a setting beside sites=: each site answers the host of its own "
                "SiteConfig.base_url"
                + (" (each site's key: SiteConfig(indexnow=...))" if name == "indexnow" else ""),
            )
    return make_settings({**options, "base_url": PLACEHOLDER_URL})


class Options(TypedDict, total=False):
    """The fields of :class:`Settings` as keyword arguments of the middleware and apps:
    editors complete them and type checkers check them (a test keeps the two equal)."""

    base_url: Required[str]
    path: str
    mode: Literal["intercept", "fallback"]
    index: Literal["auto", "always"]
    html: bool
    robots_txt: bool
    allowed_hosts: Sequence[str] | None
    strict: bool
    headers: Headers
    limits: Limits
    lastmods: Lastmods
    freshness: Freshness
    load: Load
    gzip: Gzip | Literal[False]
    indexnow: IndexNowSettings | None
    tenants: Tenants
    robots_filter: RobotsFilter | Literal[False]


class SharedOptions(TypedDict, total=False):
    """The keyword settings beside ``sites=``: those of :class:`Options` but the ones each
    site has its own (``base_url``, ``allowed_hosts``) and IndexNow."""

    path: str
    mode: Literal["intercept", "fallback"]
    index: Literal["auto", "always"]
    html: bool
    robots_txt: bool
    strict: bool
    headers: Headers
    limits: Limits
    lastmods: Lastmods
    freshness: Freshness
    load: Load
    gzip: Gzip | Literal[False]
    tenants: Tenants
    robots_filter: RobotsFilter | Literal[False]


class AdapterOptions(SharedOptions, total=False):
    """The keyword settings of the adapters: :class:`Options`, for one sitemap
    (``sources=``, ``base_url`` required when it is built) or beside ``sites=`` (without
    ``base_url``, ``allowed_hosts`` and ``indexnow``: :class:`SharedOptions`)."""

    base_url: str
    allowed_hosts: Sequence[str] | None
    indexnow: IndexNowSettings | None


def make_settings(options: Mapping[str, Any]) -> Settings:
    """Settings from keyword options or plain data; an unknown option is named in the
    error."""
    known = [f.name for f in fields(Settings)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise _fail(unknown[0], f"not a setting; the settings are {', '.join(known)}")
    if "base_url" not in options:
        raise _fail("base_url", "required, e.g. base_url='https://example.com/'")
    return Settings(**options)
