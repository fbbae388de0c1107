"""A Starlette site (static pages and articles in SQLite) wrapped by the sitemap middleware."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, select
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    Entry,
    IterableSource,
    Settings,
    SitemapMiddleware,
)

from .db import Article, seed

PAGES = {
    "/": ("Home", "Welcome to the example site."),
    "/about": ("About", "A small site whose sitemap comes from its database."),
    "/contact": ("Contact", "Write to nobody@example.com."),
}


def page(title: str, body: str, root: str = "", status_code: int = 200) -> HTMLResponse:
    """A page of the site; ``root`` is the path prefix it is served under (a proxy's)."""
    root = html.escape(root)
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1>{body}"
        f"<p><a href='{root}/'>Home</a> · <a href='{root}/articles'>Articles</a> · "
        f"<a href='{root}/sitemap.html'>Sitemap</a> (<a href='{root}/sitemap.xml'>XML</a>)"
        "</p></body></html>",
        status_code=status_code,
    )


def create_app(db_path: str, rows: int, base_url: str, **sitemap_options: Any) -> Starlette:
    """The site on ``db_path`` (seeded with ``rows`` articles), its sitemap under ``base_url``
    (``sitemap_options``: more settings of the middleware).

    Raises :class:`~sitemap_middleware.ConfigurationError` for a bad ``base_url`` here: Starlette
    builds ``add_middleware`` middleware only on the first ASGI call, too late to fail early.
    """
    Settings(base_url=base_url)
    # A replica starting beside another waits for its seeding (BEGIN IMMEDIATE) up to 60 s.
    sync_engine = create_engine(f"sqlite:///{db_path}", connect_args={"timeout": 60})
    try:
        seed(sync_engine, rows)
    finally:
        sync_engine.dispose()
    engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")

    async def static_page(request: Request) -> HTMLResponse:
        # The matched route, not request.url.path: that one includes a proxy's root_path.
        title, text = PAGES[request.scope["route"].path]
        return page(title, f"<p>{html.escape(text)}</p>", request.scope.get("root_path", ""))

    async def article_list(request: Request) -> HTMLResponse:
        async with engine.connect() as conn:
            result = await conn.execute(
                select(Article.slug, Article.title)
                .where(Article.published)
                .order_by(Article.id)
                .limit(50)
            )
            root = html.escape(request.scope.get("root_path", ""))
            items = "".join(
                f"<li><a href='{root}/articles/{quote(slug, safe='')}'>{html.escape(title)}</a>"
                "</li>"
                for slug, title in result
            )
        return page("Articles", f"<ul>{items}</ul>", request.scope.get("root_path", ""))

    async def article(request: Request) -> HTMLResponse:
        slug = request.path_params["slug"]  # already percent-decoded by the router
        async with engine.connect() as conn:
            found = (
                await conn.execute(
                    select(Article.title, Article.updated_at).where(
                        Article.slug == slug, Article.published
                    )
                )
            ).first()
        root = request.scope.get("root_path", "")
        if found is None:
            return page("Not found", "<p>No such article.</p>", root, status_code=404)
        updated = f"<p>Last updated {found.updated_at:%Y-%m-%d %H:%M} UTC.</p>"
        return page(found.title, updated, root)

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
    app.add_middleware(
        SitemapMiddleware,
        base_url=base_url,
        html=True,  # the human view: /sitemap.html beside /sitemap.xml
        **sitemap_options,
        sources=[
            IterableSource(
                [
                    Entry("/", changefreq="daily", priority=1.0),
                    Entry("/about", lastmod=date(2024, 1, 1), changefreq="yearly"),
                    Entry("/contact", lastmod=date(2024, 1, 1), changefreq="yearly"),
                ],
                name="pages",
            ),
            AsyncSQLAlchemySource(
                select(Article.id, Article.slug, Article.updated_at).where(Article.published),
                engine,
                name="articles",
                loc="/articles/{slug}",
                lastmod="updated_at",
                changefreq="weekly",
            ),
        ],
    )
    return app
