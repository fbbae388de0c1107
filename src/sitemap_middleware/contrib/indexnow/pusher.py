"""Push what changed to IndexNow: every source of a sitemap, then the queued URLs.

:class:`IndexNow` takes a configured middleware (ASGI or WSGI) or its ``Sitemap``; its
``indexnow_*`` settings say the key and the endpoint. :meth:`IndexNow.push` runs one
round, each feed through one :class:`~.drivers.Driver` (sources read as the ASGI adapter
reads them; a sync engine's feed connection in one thread of its own);
:meth:`IndexNow.run_every` runs rounds forever (the ASGI lifespan task and
``sitemap-middleware indexnow --every``).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.to_thread
import httpx
from sqlalchemy import inspect
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from ...core.sitemap import Sitemap
from ...core.sites import Sites, build_sitemap
from ...core.spec import INDEXNOW_MAX_URLS
from ...servers.async_effects import AsyncEffectRunner
from ...servers.resolving import site_config
from ...settings import ConfigurationError, SiteConfig
from ...sources.base import AnySource
from . import store
from .answers import Backoff
from .drivers import Driver, run_steps
from .steps import Job, Report, push_queue, push_source
from .submission import Submission

logger = logging.getLogger("sitemap_middleware")


@dataclass
class Round:
    """The reports of one round, one per source and one per database's queue."""

    reports: list[Report] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Sources that cannot be pushed (no lastmod column, several key columns, no engine)."""

    @property
    def failed(self) -> bool:
        return any(report.error is not None for report in self.reports)


class IndexNow:
    """Pushes the changed rows of one sitemap's sources to its IndexNow endpoint."""

    def __init__(
        self,
        app: object,
        *,
        max_urls: int = INDEXNOW_MAX_URLS,
        timeout: float = 10.0,
        first_delay: float = 1.0,
        max_delay: float = 300.0,
        max_retries: int = 5,
        lag: float = 0.0,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        sitemap = app if isinstance(app, Sitemap) else getattr(app, "sitemap", None)
        if isinstance(getattr(app, "sites", None), Sites):
            raise ConfigurationError(
                "app: this middleware serves a sitemap per host (sites=); make one pusher "
                "per site with IndexNow.for_sites(app)"
            )
        if not isinstance(sitemap, Sitemap):
            raise ConfigurationError(
                "app: give a SitemapMiddleware, SitemapWSGIMiddleware or their Sitemap, got "
                f"{type(app).__name__}"
            )
        settings = sitemap.settings
        indexnow = settings.indexnow
        if indexnow is None:
            raise ConfigurationError(
                "indexnow: not set; IndexNow needs the site's key, e.g. "
                "indexnow=IndexNowSettings(key=...)"
            )
        self.sitemap = sitemap
        runner = getattr(app, "reads", None)  # an ASGI adapter's: its sources' reads
        self.runner = runner if isinstance(runner, AsyncEffectRunner) else AsyncEffectRunner()
        """Reads the sources as the ASGI adapter does (a sync one in its worker thread)."""
        self.endpoint = indexnow.endpoint
        location = sitemap.site.url_for(indexnow.key_path)
        self.submission = Submission(sitemap.rules, indexnow.key, location, max_urls)
        self.timeout, self.max_retries, self.lag = timeout, max_retries, lag
        self.first_delay, self.max_delay = first_delay, max_delay
        self.clock = clock or (lambda: datetime.now(UTC))
        self.sources = [s for s in sitemap.sources if s.pushable and _engine(s) is not None]
        self.queue_prefix: str | None = None
        """One of several sites' pusher: the queued URLs under its base URL are its own."""
        self._tls: ssl.SSLContext | None = None
        self.skipped = [s.name for s in sitemap.sources if s not in self.sources]

    @classmethod
    async def for_sites(
        cls, app: object, hosts: Iterable[str] | None = None, **options: Any
    ) -> list[IndexNow]:
        """A pusher per site of a middleware given ``sites=`` whose site sets ``indexnow``:
        every site of a mapping (or the ``hosts`` named), the ``hosts`` named of a resolver
        (which cannot list its sites). ``options`` are the constructor's. Each pushes its
        own sources under its own key, and the queued URLs under its base URL."""
        sites = _sites(app)
        if hosts is None:
            return cls.for_mapped_sites(app, **options)
        configs = []
        for host in hosts:
            try:
                config = await site_config(sites, host)
            except ValueError as error:
                raise ConfigurationError(f"hosts: {error}") from None
            if config is None:
                raise ConfigurationError(f"hosts: no site for {host!r}")
            configs.append(config)
        return [cls._of_site(app, sites, config, options) for config in configs if config.indexnow]

    @classmethod
    def for_mapped_sites(cls, app: object, **options: Any) -> list[IndexNow]:
        """:meth:`for_sites` of every site of a ``sites=`` mapping, without a loop."""
        sites = _sites(app)
        if sites.configs is None:
            raise ConfigurationError(
                "hosts: a sites resolver cannot list its sites; name the hosts to push, "
                "e.g. IndexNow.for_sites(app, hosts=['shop.example.com'])"
            )
        configs = sites.configs.values()
        return [cls._of_site(app, sites, config, options) for config in configs if config.indexnow]

    @classmethod
    def _of_site(
        cls, app: object, sites: Sites, config: SiteConfig, options: dict[str, Any]
    ) -> IndexNow:
        pusher = cls(build_sitemap(config, sites.settings), **options)
        runner = getattr(app, "reads", None)  # the ASGI adapter's, as for one sitemap
        if isinstance(runner, AsyncEffectRunner):
            pusher.runner = runner
        pusher.queue_prefix = pusher.sitemap.site.base_url
        return pusher

    @property
    def tls(self) -> ssl.SSLContext:
        """The TLS context of the clients, made once (loading the CA store takes tens of ms)."""
        if self._tls is None:
            try:
                import certifi  # httpx's own default store

                self._tls = ssl.create_default_context(cafile=certifi.where())
            except ImportError:
                self._tls = ssl.create_default_context()
        return self._tls

    def feed(self, source: AnySource) -> str:
        """The watermark row's name: the site and the source."""
        return f"{self.sitemap.site.base_url} {source.name}"

    def _job(self, name: str, feed: str, per_read: int, dry_run: bool) -> Job:
        return Job(
            name=name,
            feed=feed,
            submission=self.submission,
            clock=self.clock,
            rows_per_read=per_read,
            backoff=Backoff(self.first_delay, self.max_delay),
            max_retries=self.max_retries,
            dry_run=dry_run,
            lag=self.lag,
        )

    def _source_job(self, source: AnySource, dry_run: bool) -> Job:
        per_read = max(1, self.submission.max_urls // source.shape.urls_per_row)
        return self._job(source.name, self.feed(source), per_read, dry_run)

    def _queue_job(self, dry_run: bool) -> Job:
        if self.queue_prefix is None:
            return self._job("queue", store.QUEUE_FEED, self.submission.max_urls, dry_run)
        feed = store.queue_feed(self.queue_prefix)
        job = self._job("queue", feed, self.submission.max_urls, dry_run)
        return replace(job, queue_prefix=self.queue_prefix)

    async def push(self, dry_run: bool = False) -> Round:
        """One round: every source's changes since its mark, then the queued URLs.

        ``dry_run``: read and build the posts (``Report.sent``) but post nothing and move
        no mark."""
        result = Round(skipped=list(self.skipped))
        engines: dict[int, Engine | AsyncEngine] = {}
        async with httpx.AsyncClient(timeout=self.timeout, verify=self.tls) as client:
            for source in self.sources:
                engine = _engine(source)
                assert engine is not None
                engines.setdefault(id(engine), engine)
                result.reports.append(await self._push(source, engine, client, dry_run))
            for engine in engines.values():
                result.reports.append(await self._push(None, engine, client, dry_run))
        return result

    def push_sync(self, dry_run: bool = False) -> Round:
        """:meth:`push` from code that runs no event loop (a cron script, a WSGI worker)."""
        return anyio.run(self.push, dry_run)

    async def run_every(self, seconds: float, rounds: int | None = None) -> None:
        """Push every ``seconds`` (``rounds`` times; None: until cancelled)."""
        done = 0
        while rounds is None or done < rounds:
            try:
                await self.push()
            except Exception:  # a round that fails is logged; the next one tries again
                logger.exception("IndexNow: the push failed")
            done += 1
            if rounds is None or done < rounds:
                await anyio.sleep(seconds)

    async def _push(
        self,
        source: AnySource | None,
        engine: Engine | AsyncEngine,
        client: httpx.AsyncClient,
        dry_run: bool,
    ) -> Report:
        job = self._queue_job(dry_run) if source is None else self._source_job(source, dry_run)
        tz = self.sitemap.settings.lastmods.naive_timezone
        steps = push_queue(job) if source is None else push_source(job)
        try:
            driver = Driver(engine, source, client, self.endpoint, tz, self.runner)
            return await run_steps(steps, driver)
        except Exception as exc:
            logger.exception("IndexNow %s: the push failed", job.name)
            return Report(job.name, error=f"{job.name}: {type(exc).__name__}: {exc}")

    async def missing_tables(self) -> list[str]:
        """The databases (by URL, password hidden) the tables were not installed in."""
        missing = []
        for engine in {id(e): e for e in map(_engine, self.sources) if e is not None}.values():
            if isinstance(engine, AsyncEngine):
                async with engine.connect() as conn:
                    found = await conn.run_sync(_has_tables)
            else:
                found = await anyio.to_thread.run_sync(_has_tables_sync, engine)
            if not found:
                missing.append(engine.url.render_as_string(hide_password=True))
        return missing


def _sites(app: object) -> Sites:
    sites = getattr(app, "sites", None)
    if not isinstance(sites, Sites):
        raise ConfigurationError(
            "app: give a middleware given sites=; for one sitemap, use IndexNow(app)"
        )
    return sites


def _has_tables(conn: Any) -> bool:
    inspector = inspect(conn)
    return all(inspector.has_table(t.name) for t in (store.WATERMARKS, store.QUEUE))


def _has_tables_sync(engine: Engine) -> bool:
    with engine.connect() as conn:
        return _has_tables(conn)


def _engine(source: AnySource) -> Engine | AsyncEngine | None:
    engine = getattr(source, "engine", None)
    if isinstance(engine, Engine | AsyncEngine) and engine.dialect.name in store.SUPPORTED:
        return engine
    return None
