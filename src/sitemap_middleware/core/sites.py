"""Many sites in one middleware: a :class:`~.sitemap.Sitemap` per host, made on first use.

A middleware given ``sites=`` (a ``host -> SiteConfig`` mapping, or a resolver: a sync or
async callable ``host -> SiteConfig | None``) answers each host with that host's own
sitemap: its base URL, its sources, its settings, and every piece of state a sitemap keeps
(pages, summaries, validators' inputs, bad-row counters). Nothing is shared between hosts
but the process's bound on generations (``load.max_generations``), so no answer for one
host can carry another's locs or validators.

It fails closed: a host with no site is a ``404``, a resolver that raises or times out a
``503`` with ``Retry-After`` and ``no-store``, a missing or invalid ``Host`` a ``400``;
never another (default) site's sitemap.

:class:`Sites` decides, without I/O. An adapter asks :meth:`Sites.find` for a request's
sitemap and gets it, a complete :class:`~.exchange.Response`, or :class:`Resolve`: then it
calls the resolver itself (under ``tenants.timeout``) and gives the answer to
:meth:`Sites.resolved`, or the failure to :meth:`Sites.failed`.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from ..settings import (
    ConfigurationError,
    ConfigurationTypeError,
    Settings,
    SiteConfig,
    make_settings,
    make_shared_settings,
)
from ..sources.arguments import build_sources
from ..state.bad_rows import BadRowStats
from ..state.purges import PurgeQueue, Purger
from . import responses
from .exchange import Request, Response
from .routing import Routes
from .sitemap import Sitemap, purge_queue
from .slots import Slots
from .surrogate_keys import purge_keys
from .urls import normalize_host

logger = logging.getLogger("sitemap_middleware")

Resolver = Callable[[str], "SiteConfig | Awaitable[SiteConfig | None] | None"]
"""``host -> SiteConfig | None``, sync or async: the host is ``host[:port]`` in canonical
form (lowercase, IDNA, no ``:443``)."""


class NoSingleSitemap(ConfigurationError, AttributeError):
    """An adapter given ``sites=`` was asked for its one ``sitemap``: it has one per host
    (an ``AttributeError`` too, so that ``getattr(adapter, "sitemap", None)`` is None)."""


@dataclass(frozen=True, slots=True)
class Resolve:
    """The adapter must ask the resolver about ``host``, then call :meth:`Sites.resolved`."""

    host: str


@dataclass(frozen=True, slots=True)
class _Built:
    config: SiteConfig
    sitemap: Sitemap


@dataclass(frozen=True, slots=True)
class _Answer:
    config: SiteConfig | None
    expires: float


def same_config(a: SiteConfig, b: SiteConfig) -> bool:
    """Whether two configs are equal (fields compared; a comparison that fails, as SQL
    expressions' do, is a difference)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


class Sites:
    """The sites of one middleware: a mapping checked at start, or a resolver asked per host;
    their sitemaps kept in a bounded LRU (``tenants.max_sites``)."""

    def __init__(
        self,
        sites: object,
        settings: Settings,
        clock: Callable[[], float] = time.monotonic,
        purger: Purger | None = None,
    ) -> None:
        self.settings = settings
        """The shared settings (their ``base_url`` is a placeholder, never used)."""
        self.clock = clock
        # Which paths are ours is decided before the host is known: the shape of the paths
        # (the root, the children's prefix, the key files); each site's own routes name its
        # pages and its key file (another site's key path is a 404 on its host).
        self.routes = Routes(settings.path, (), settings.html, None, frozenset())
        self.slots = Slots(settings.load.max_generations)
        """One bound on the generations of every site: the process's, not each site's."""
        self.purges = None if purger is None else purge_queue(purger, settings)
        """One queue, one thread, for the purges of every site."""
        self._configs: dict[str, SiteConfig] | None = None
        self.resolver: Resolver | None = None
        if isinstance(sites, Mapping):
            self._configs = _checked(sites, settings)
            self.routes.key_paths = frozenset(
                config.indexnow.key_path
                for config in self._configs.values()
                if config.indexnow is not None
            )
        elif callable(sites) and not isinstance(sites, type):
            self.resolver = sites
            self.routes.key_paths = None
        else:
            raise ConfigurationTypeError(
                "sites: must be a mapping of host -> SiteConfig or a function host -> "
                f"SiteConfig | None (sync or async), got {sites!r}"
            )
        self.is_async = self.resolver is not None and _is_async(self.resolver)
        self._lock = threading.Lock()
        self._sitemaps: OrderedDict[str, _Built] = OrderedDict()
        # The resolver's answers, a site and none apart: Hosts a flood invents must not push
        # the sites out.
        self._answers: OrderedDict[str, _Answer] = OrderedDict()
        self._none: OrderedDict[str, float] = OrderedDict()

    @property
    def configs(self) -> dict[str, SiteConfig] | None:
        """The sites of a mapping, by host; None for a resolver."""
        return None if self._configs is None else dict(self._configs)

    @property
    def sitemaps(self) -> dict[str, Sitemap]:
        """The sitemaps built and kept, by host (the least recently requested first)."""
        with self._lock:
            return {host: built.sitemap for host, built in self._sitemaps.items()}

    def host_of(self, request: Request) -> str | None:
        """The request's host in canonical form (``https``'s default port dropped), or None
        for a missing, repeated or invalid ``Host``."""
        value = request.host
        return None if value is None else normalize_host(value, "https")

    def find(self, request: Request) -> Sitemap | Response | Resolve:
        """The sitemap of the request's host; or the answer without one (405, 400, 404);
        or :class:`Resolve` when the resolver must be asked."""
        refused = responses.method_not_allowed(request)
        if refused is not None:
            return refused
        host = self.host_of(request)
        if host is None:
            return responses.bad_host()
        if self._configs is not None:
            config = self._configs.get(host)
            if config is None and request.host is not None:
                # A Host with http's default port names the http site of that host.
                config = self._configs.get(normalize_host(request.host, "http") or "")
            return responses.not_found() if config is None else self._sitemap(config)
        now = self.clock()
        with self._lock:
            answer = self._answers.get(host)
            if answer is not None and answer.expires > now:
                self._answers.move_to_end(host)
                config = answer.config
            elif self._none.get(host, now) > now:
                return responses.not_found()
            else:
                return Resolve(host)
        assert config is not None
        return self._sitemap(config)

    def resolved(self, host: str, config: object) -> Sitemap | Response:
        """The resolver's answer for ``host``: kept ``tenants.ttl`` seconds, then its sitemap
        (None: a 404; an answer that is not a site of that host: a 503, logged)."""
        expires = self.clock() + self.settings.tenants.ttl
        if config is None:
            with self._lock:
                self._answers.pop(host, None)
                self._none[host] = expires
                self._none.move_to_end(host)
                while len(self._none) > self.settings.tenants.max_sites:
                    self._none.popitem(last=False)
            return responses.not_found()
        if not isinstance(config, SiteConfig):
            return self.failed(
                host,
                ConfigurationTypeError(f"sites: the resolver gave {config!r}, not a SiteConfig"),
            )
        if config.host not in (host, _http_form(host)):
            return self.failed(
                host,
                ConfigurationError(
                    f"sites: the resolver gave the site of {config.host!r} for the host "
                    f"{host!r}; a site answers the host of its base_url only"
                ),
            )
        with self._lock:
            self._none.pop(host, None)
            self._answers[host] = _Answer(config, expires)
            self._answers.move_to_end(host)
            while len(self._answers) > self.settings.tenants.max_sites:
                self._answers.popitem(last=False)
        return self._sitemap(config)

    def failed(self, host: str, error: BaseException) -> Response:
        """The resolver raised or took too long: a 503, logged, and nothing kept (the next
        request asks again)."""
        logger.error(
            "sitemap: the sites resolver failed for host %r (%s: %s); answering 503",
            host,
            type(error).__name__,
            error,
        )
        return responses.text(
            503,
            "Sitemap temporarily unavailable",
            [("retry-after", str(self.settings.tenants.retry_after))],
        )

    def _sitemap(self, config: SiteConfig) -> Sitemap | Response:
        """The site's sitemap: the one kept while its config is the same, else a new one
        (the least recently requested dropped past ``tenants.max_sites``)."""
        host = config.host
        with self._lock:
            built = self._sitemaps.get(host)
            if built is not None and same_config(built.config, config):
                self._sitemaps.move_to_end(host)
                return built.sitemap
            try:
                sitemap = build_sitemap(config, self.settings, self.purges)
            except Exception as error:  # a resolver's site that cannot be built: no answer
                return self.failed(host, error)
            sitemap.slots = self.slots
            self._sitemaps[host] = _Built(config, sitemap)
            self._sitemaps.move_to_end(host)
            while len(self._sitemaps) > self.settings.tenants.max_sites:
                self._sitemaps.popitem(last=False)
            return sitemap

    def purge(self, host: str | None = None, source: str | None = None) -> list[str]:
        """Queue the purge of one site's documents (of one of its sources, with ``source``),
        or, with no ``host``, of every site known: a mapping's, or those the resolver named
        lately. A site not built yet is purged by its host's key (every document of it)."""
        if self.purges is None:
            raise ConfigurationError("purger: none is configured; pass purger=... to purge")
        if host is None:
            if source is not None:
                raise ValueError("purge: a source is one site's; name its host too")
            with self._lock:
                hosts = list(self._configs or {}) or [*self._answers, *self._sitemaps]
            return [key for known in dict.fromkeys(hosts) for key in self.purge(known)]
        named = normalize_host(host, "https")
        if named is None:
            raise ValueError(f"purge: {host!r} is not a host")
        with self._lock:
            built = self._sitemaps.get(named) or self._sitemaps.get(_http_form(named))
        if built is not None:
            return built.sitemap.purge(source)
        keys = purge_keys(f"https://{_http_form(named)}/", source)
        self.purges.submit(keys)
        return keys

    def wants_robots(self, path: str, method: str) -> bool:
        """Whether this request is for the robots.txt the sites' lines are added to."""
        return (
            self.settings.robots_txt
            and path == "/robots.txt"
            and method in responses.ALLOWED_METHODS
        )


def build_sitemap(
    config: SiteConfig, shared: Settings, purges: PurgeQueue | None = None
) -> Sitemap:
    """A site's sitemap; a wrong setting or source named with the site's host."""
    try:
        return Sitemap(config.sources, config.settings(shared), purges=purges)
    except ConfigurationError as exc:
        raise type(exc)(f"sites[{config.host!r}].{exc}") from exc


def _checked(sites: Mapping[object, object], settings: Settings) -> dict[str, SiteConfig]:
    """A mapping of sites, checked at start: each key a host, each value a SiteConfig of
    that host whose settings and sources are valid."""
    if not sites:
        raise ConfigurationError(
            "sites: give at least one site, e.g. {'example.com': SiteConfig(...)}"
        )
    configs: dict[str, SiteConfig] = {}
    for key, config in sites.items():
        if not isinstance(config, SiteConfig):
            raise ConfigurationTypeError(
                f"sites[{key!r}]: must be a SiteConfig(base_url=..., sources=...), got {config!r}"
            )
        if not isinstance(key, str) or normalize_host(key, _scheme(config)) != config.host:
            raise ConfigurationError(
                f"sites[{key!r}]: the key must be the host of the site's base_url "
                f"({config.host!r}), got {key!r}"
            )
        if config.host in configs:
            raise ConfigurationError(f"sites[{key!r}]: {config.host!r} is given twice")
        try:
            config.settings(settings)
            build_sources(config.sources)
        except ConfigurationError as exc:
            raise type(exc)(f"sites[{key!r}].{exc}") from exc
        configs[config.host] = config
    return configs


def _scheme(config: SiteConfig) -> str:
    return config.base_url.strip().partition(":")[0].lower()


def _http_form(host: str) -> str:
    """``host`` as an http site's key: a Host that named port 80 kept it."""
    return host.removesuffix(":80")


def _is_async(resolver: object) -> bool:
    call = getattr(resolver, "__call__", None)  # noqa: B004 (an instance's async __call__)
    return inspect.iscoroutinefunction(resolver) or inspect.iscoroutinefunction(call)


def configure(
    sources: object,
    sites: object,
    options: Mapping[str, object],
    purger: Purger | None = None,
) -> Sitemap | Sites:
    """What an adapter serves: one sitemap (``sources=``) or one per host (``sites=``)."""
    if sites is None:
        if sources is None:
            raise ConfigurationError(
                "sources: required, e.g. sources=[...] (or sites={host: SiteConfig(...)} for a "
                "sitemap per host)"
            )
        return Sitemap(sources, make_settings(options), purger)
    if sources is not None:
        raise ConfigurationError(
            "sites: give sources= or sites=, not both; with sites= each SiteConfig holds its "
            "site's sources"
        )
    return Sites(sites, make_shared_settings(options), purger=purger)


def sitemaps_of(served: Sitemap | Sites) -> list[Sitemap]:
    """Every sitemap an adapter holds now (for recounts and closing)."""
    return list(served.sitemaps.values()) if isinstance(served, Sites) else [served]


def purge_served(served: Sitemap | Sites, source: str | None, host: str | None) -> list[str]:
    """An adapter's ``purge``: the sitemap's documents, or a site's (``host``) with sites=."""
    if isinstance(served, Sites):
        return served.purge(host, source)
    if host is not None:
        raise ValueError("purge: host= names one of the sites of sites=; this serves one sitemap")
    return served.purge(source)


class ServesSites:
    """What every adapter says of what it serves: one sitemap (``sources=``) or a sitemap per
    host (``sites=``), in ``served``."""

    served: Sitemap | Sites

    @property
    def sites(self) -> Sites | None:
        """The sites of ``sites=``; None for one sitemap."""
        return self.served if isinstance(self.served, Sites) else None

    @property
    def sitemap(self) -> Sitemap:
        """The sitemap of ``sources=`` (with ``sites=``: ``sites.sitemaps``, by host)."""
        if isinstance(self.served, Sites):
            raise NoSingleSitemap("sites: this middleware has a sitemap per host (.sites)")
        return self.served

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source, counted since start (with ``sites=``: per host and source,
        ``"host/source"``, of the sites kept)."""
        if isinstance(self.served, Sites):
            return {
                f"{host}/{name}": stats
                for host, sitemap in self.served.sitemaps.items()
                for name, stats in sitemap.rules.stats.items()
            }
        return self.served.rules.stats
