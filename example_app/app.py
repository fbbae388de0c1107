"""A Starlette site (static pages and articles in SQLite) wrapped by the sitemap middleware."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    Headers,
    Settings,
    SiteConfig,
    SitemapMiddleware,
)
from sitemap_middleware.contrib.indexnow import install
from sitemap_middleware.contrib.varnish import XkeyPurger

from .db import seed
from .site import (
    ARTICLE_LIST,
    ARTICLE_SITEMAP,
    ARTICLES,
    PAGES,
    article_body,
    article_query,
    list_body,
    of_site,
    page_html,
    pages_source,
    static_body,
)


def page(title: str, body: str, root: str = "", status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(page_html(title, body, root), status_code=status_code)


def create_app(
    db_path: str,
    rows: int,
    base_url: str,
    *,
    site_urls: Sequence[str] = (),
    purge_url: str | None = None,
    **sitemap_options: Any,
) -> Starlette:
    """The site on ``db_path`` (seeded with ``rows`` articles), its sitemap under ``base_url``
    (``sitemap_options``: more settings of the middleware).

    ``site_urls``: two base URLs or more instead of ``base_url``: as many sites from the one
    table (``sites=``), the articles dealt out by key (:func:`~example_app.site.of_site`);
    each host lists and serves its own. ``purge_url``: a cache in front, purged through
    :class:`~sitemap_middleware.contrib.varnish.XkeyPurger`, the documents with
    ``Headers.cdn()``.

    Raises :class:`~sitemap_middleware.ConfigurationError` for a bad ``base_url`` here: Starlette
    builds ``add_middleware`` middleware only on the first ASGI call, too late to fail early.
    """
    Settings(base_url=base_url)
    # A replica starting beside another waits for its seeding (BEGIN IMMEDIATE) up to 60 s.
    sync_engine = create_engine(f"sqlite:///{db_path}", connect_args={"timeout": 60})
    try:
        seed(sync_engine, rows)
        if sitemap_options.get("indexnow"):
            install(sync_engine)  # IndexNow's watermark tables (idempotent)
    finally:
        sync_engine.dispose()
    engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")
    # With several sites, each host's number (1 to N); None for a host of none of them.
    hosts = {urlsplit(url).netloc.lower(): n for n, url in enumerate(site_urls, 1)}

    def mine(request: Request, statement: Any) -> Any:
        """``statement`` as the request's site sees it (all of it with one site)."""
        if not hosts:
            return statement
        site = hosts.get(request.headers.get("host", "").lower())
        return None if site is None else of_site(statement, site, len(hosts))

    async def static_page(request: Request) -> HTMLResponse:
        # The matched route, not request.url.path: that one includes a proxy's root_path.
        return page(*static_body(request.scope["route"].path), request.scope.get("root_path", ""))

    async def article_list(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        statement = mine(request, ARTICLE_LIST)
        if statement is None:
            return page("Not found", "<p>No such site.</p>", root, status_code=404)
        async with engine.connect() as conn:
            listing = list_body(await conn.execute(statement), root)
        return page("Articles", listing, root)

    async def article(request: Request) -> HTMLResponse:
        slug = request.path_params["slug"]  # already percent-decoded by the router
        statement = mine(request, article_query(slug))
        found = None
        if statement is not None:
            async with engine.connect() as conn:
                found = (await conn.execute(statement)).first()
        root = request.scope.get("root_path", "")
        if found is None:
            return page("Not found", "<p>No such article.</p>", root, status_code=404)
        return page(found.title, article_body(found.updated_at), root)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await engine.dispose()

    app = Starlette(
        routes=[
            *(Route(path, static_page) for path in PAGES),
            Route("/articles", article_list),
            Route("/articles/{slug:path}", article),
        ],
        lifespan=lifespan,
    )
    app.state.engine = engine
    if purge_url:
        sitemap_options = {
            "headers": Headers.cdn(),
            "purger": XkeyPurger(purge_url, timeout=10),
            **sitemap_options,
        }
    if hosts:
        # One table, N sites: each its own sources (its share of the articles), base URL and
        # validators. The query_id names each share apart.
        sites = {
            host: SiteConfig(
                base_url=url,
                sources=[
                    pages_source(),
                    AsyncSQLAlchemySource(
                        of_site(ARTICLES, n, len(hosts)),
                        engine,
                        **{
                            **ARTICLE_SITEMAP,
                            "query_id": f"published-articles-v1-{n}-of-{len(hosts)}",
                        },
                    ),
                ],
            )
            for (host, n), url in zip(hosts.items(), site_urls, strict=True)
        }
        app.add_middleware(SitemapMiddleware, html=True, **sitemap_options, sites=sites)
        return app
    app.add_middleware(
        SitemapMiddleware,
        base_url=base_url,
        html=True,  # the human view: /sitemap.html beside /sitemap.xml
        **sitemap_options,
        sources=[pages_source(), AsyncSQLAlchemySource(ARTICLES, engine, **ARTICLE_SITEMAP)],
    )
    return app
