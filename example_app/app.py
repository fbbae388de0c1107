"""A Starlette site (static pages and articles in SQLite) wrapped by the sitemap middleware."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sitemap_middleware import AsyncSQLAlchemySource, Settings, SitemapMiddleware
from sitemap_middleware.contrib.indexnow import install

from .db import seed
from .site import (
    ARTICLE_LIST,
    ARTICLE_SITEMAP,
    ARTICLES,
    PAGES,
    article_body,
    article_query,
    list_body,
    page_html,
    pages_source,
    static_body,
)


def page(title: str, body: str, root: str = "", status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(page_html(title, body, root), status_code=status_code)


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
        if sitemap_options.get("indexnow"):
            install(sync_engine)  # IndexNow's watermark tables (idempotent)
    finally:
        sync_engine.dispose()
    engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")

    async def static_page(request: Request) -> HTMLResponse:
        # The matched route, not request.url.path: that one includes a proxy's root_path.
        return page(*static_body(request.scope["route"].path), request.scope.get("root_path", ""))

    async def article_list(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        async with engine.connect() as conn:
            listing = list_body(await conn.execute(ARTICLE_LIST), root)
        return page("Articles", listing, root)

    async def article(request: Request) -> HTMLResponse:
        slug = request.path_params["slug"]  # already percent-decoded by the router
        async with engine.connect() as conn:
            found = (await conn.execute(article_query(slug))).first()
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
    app.add_middleware(
        SitemapMiddleware,
        base_url=base_url,
        html=True,  # the human view: /sitemap.html beside /sitemap.xml
        **sitemap_options,
        sources=[pages_source(), AsyncSQLAlchemySource(ARTICLES, engine, **ARTICLE_SITEMAP)],
    )
    return app
