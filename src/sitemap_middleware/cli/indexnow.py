"""``sitemap-middleware indexnow``: push the application's changed rows to IndexNow, once
(for cron) or every N seconds (as a service).

The application is loaded as ``render`` loads it (an ASGI application is started with
its lifespan, so its middleware stack is built); every sitemap configured with
``indexnow.key`` is pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TextIO, cast

import anyio

from ..contrib.indexnow import IndexNow, Round
from ..contrib.indexnow.steps import Report
from ..core.sites import Sites
from ..core.spec import INDEXNOW_MAX_URLS
from ..servers.resolving import site_config
from ..testing import with_lifespan
from .loader import (
    Interface,
    LoadError,
    import_attribute,
    resolve_app,
    sitemap_holders,
    sites_middlewares,
    sites_of,
    wsgi_middlewares,
)
from .logs import after_startup

OK, FAILED, USAGE = 0, 1, 2


@dataclass(frozen=True)
class IndexNowOptions:
    app: str
    every: float | None = None
    dry_run: bool = False
    factory: bool | None = None
    app_dir: str = "."
    interface: Interface | None = None
    max_urls: int = INDEXNOW_MAX_URLS
    lag: float = 0.0
    rounds: int | None = None
    """With ``every``: stop after this many rounds (None: until interrupted)."""
    hosts: tuple[str, ...] = ()
    """With ``sites=``: the sites pushed, by host (none: every site of a mapping)."""


class NotConfigured(LoadError):
    """The application has no sitemap with IndexNow, or its tables are missing."""


async def run_indexnow(options: IndexNowOptions, stdout: TextIO, stderr: TextIO) -> int:
    """The exit status: 0 when every push succeeded (or had nothing to do), 1 when one
    failed; raises :class:`LoadError` for an application that cannot be used."""
    target = import_attribute(options.app, options.app_dir)
    loaded = await resolve_app(target, options.factory, options.interface)
    app = loaded.app

    async def work(_: Any = None) -> int:
        after_startup()  # the application's logging is configured by now
        pushers = await _pushers(app, options)
        return await _rounds(pushers, options, stdout)

    try:
        if loaded.interface == "wsgi":
            return await work()
        return await with_lifespan(app, "http://localhost/", work)
    finally:
        for middleware in wsgi_middlewares(app):
            middleware.close()


async def _pushers(app: object, options: IndexNowOptions) -> list[IndexNow]:
    pushers = await _site_pushers(app, options)
    if options.hosts and not sites_of(app):
        raise LoadError("--host: the application has no middleware given sites=")
    holders = [h for h in sitemap_holders(app) if h.sitemap.settings.indexnow]
    pushers += [IndexNow(h, max_urls=options.max_urls, lag=options.lag) for h in holders]
    if not pushers:
        raise NotConfigured(
            "no sitemap of the application is configured with indexnow.key; set it (and "
            "optionally indexnow.endpoint) in the middleware's settings, or a site's "
            "SiteConfig(indexnow=...) beside sites="
        )
    for pusher in pushers:
        missing = await pusher.missing_tables()
        if missing:
            raise NotConfigured(
                f"the IndexNow tables are missing in {', '.join(missing)}: create them once "
                "with sitemap_middleware.contrib.indexnow.install(engine)"
            )
    return pushers


async def _site_pushers(app: object, options: IndexNowOptions) -> list[IndexNow]:
    """The pushers of the sites of each middleware given ``sites=``: those named with
    ``--host`` (each must be some middleware's), else every site of a mapping."""
    pushers: list[IndexNow] = []
    named: set[str] = set()
    for middleware in sites_middlewares(app):
        sites = cast(Sites, getattr(middleware, "sites"))  # noqa: B009
        try:
            if not options.hosts:
                if sites.configs is None:
                    raise LoadError(
                        "the application's sites come from a resolver, which cannot list "
                        "them: name the hosts to push with --host (repeat it for several)"
                    )
                found = IndexNow.for_mapped_sites(middleware, **_options(options))
            else:
                found = []
                for host in options.hosts:
                    config = await site_config(sites, host)
                    if config is not None:
                        named.add(host)
                        found += await IndexNow.for_sites(middleware, [host], **_options(options))
        except ValueError as error:
            raise LoadError(f"--host: {error}") from None
        pushers += found
    unknown = [host for host in options.hosts if host not in named]
    if unknown and sites_of(app):
        raise LoadError(f"--host: no site for {', '.join(map(repr, unknown))}")
    return pushers


def _options(options: IndexNowOptions) -> dict[str, Any]:
    return {"max_urls": options.max_urls, "lag": options.lag}


async def _rounds(pushers: list[IndexNow], options: IndexNowOptions, stdout: TextIO) -> int:
    status, done = OK, 0
    while True:
        for pusher in pushers:
            result = await pusher.push(dry_run=options.dry_run)
            _print(result, pusher, options.dry_run, stdout)
            status = max(status, FAILED if result.failed else OK)
        done += 1
        if options.every is None or (options.rounds is not None and done >= options.rounds):
            return status
        await anyio.sleep(options.every)


def _print(result: Round, pusher: IndexNow, dry_run: bool, stdout: TextIO) -> None:
    site = pusher.sitemap.site.base_url
    for name in result.skipped:
        stdout.write(f"{site} {name}: not pushed (needs a lastmod column and one key column)\n")
    for report in result.reports:
        stdout.write(f"{site} {report.name}: {describe(report, dry_run)}\n")
        for body in report.sent:
            stdout.write(body.decode("utf-8") + "\n")
    stdout.flush()


def describe(report: Report, dry_run: bool = False) -> str:
    """One line about a feed's round."""
    if report.error is not None:
        return f"FAILED: {report.error}"
    if report.busy:
        return "another pusher holds it; left alone this round"
    if report.started:
        return "first run: starts from now (nothing older is pushed)" + (
            " [dry run: nothing written]" if dry_run else ""
        )
    if not report.posts and not report.rows:
        return "nothing changed"
    verb = "would push" if dry_run else "pushed"
    retries = f", after {report.retries} retries" if report.retries else ""
    posts = "1 post" if report.posts == 1 else f"{report.posts} posts"
    return f"{verb} {report.urls} URLs ({report.rows} rows) in {posts}{retries}"
