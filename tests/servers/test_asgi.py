"""The ASGI middleware with real SQLite sources, through httpx and by hand."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from lxml import etree
from sqlalchemy import Engine, create_engine, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from sitemap_middleware import (
    AsyncSQLAlchemySource,
    ConfigurationError,
    SitemapApp,
    SitemapMiddleware,
)

from ..adapters import call
from ..support import (
    BASE_TIME,
    article_source,
    articles,
    assert_valid_urlset,
    check_served,
    dispose,
    locs,
    seed,
)

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"


async def validate(response: httpx.Response) -> None:
    await response.aread()
    check_served(response.status_code, response.headers.get("content-type", ""), response.content)


def client(app: Any) -> httpx.AsyncClient:
    """An httpx client over ASGI that schema-checks every sitemap it receives."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://testserver",
        event_hooks={"response": [validate]},
    )


def site_app(lifespan: Any = None) -> Starlette:
    async def home(request: Request) -> Response:
        return PlainTextResponse("home")

    async def static_sitemap(request: Request) -> Response:
        return Response("<static/>", media_type="application/xml")

    async def big_404(request: Request) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(100):
                yield b"x" * 10_000

        return StreamingResponse(chunks(), status_code=404)

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text(await websocket.receive_text())
        await websocket.close()

    return Starlette(
        routes=[
            Route("/", home),
            Route("/static/sitemap.xml", static_sitemap),
            Route("/sitemap.xml", big_404),
            WebSocketRoute("/ws", echo),
        ],
        lifespan=lifespan,
    )


async def test_intercept_mode_never_reaches_the_app_and_passes_the_rest() -> None:
    app = site_app()
    app.add_middleware(SitemapMiddleware, sources=["/"], base_url=BASE)
    async with client(app) as http:
        assert (await http.get("/sitemap.xml")).status_code == 200
        assert (await http.get("/")).text == "home"
        assert (await http.get("/nope")).status_code == 404


async def test_fallback_mode_serves_only_where_the_app_says_404(
    sitemap_schema: etree.XMLSchema,
) -> None:
    app = site_app()
    app.add_middleware(SitemapMiddleware, sources=["/"], base_url=BASE, mode="fallback")
    app.add_middleware(
        SitemapMiddleware,
        sources=["/x"],
        base_url=BASE,
        mode="fallback",
        path="/static/sitemap.xml",
    )
    exchange = await call(app)
    assert exchange.status == 200
    assert b"xxxx" not in exchange.body  # the app's 404 body was dropped
    assert_valid_urlset(exchange.body, sitemap_schema)
    static = await call(app, path="/static/sitemap.xml")
    assert static.status == 200 and static.body == b"<static/>"  # a real file wins
    assert (await call(app, "POST")).status == 405


async def test_mounted_under_a_root_path(sitemap_schema: etree.XMLSchema) -> None:
    inner = SitemapApp(sources=["/post/1"], base_url="https://example.com/blog/")
    app = Starlette(routes=[Mount("/blog", app=inner)])
    async with client(app) as http:
        response = await http.get("/blog/sitemap.xml")
        assert (await http.get("/sitemap.xml")).status_code == 404
    assert locs(assert_valid_urlset(response.content, sitemap_schema)) == [
        "https://example.com/blog/post/1"
    ]
    direct = await call(inner, path="/sitemap.xml", root_path="/blog")
    assert direct.status == 200


def test_lifespan_and_websocket_pass_through() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("startup")
        yield
        events.append("shutdown")

    app = site_app(lifespan)
    app.add_middleware(SitemapMiddleware, sources=["/"], base_url=BASE)
    with TestClient(app) as test_client, test_client.websocket_connect("/ws") as ws:
        ws.send_text("ping")
        assert ws.receive_text() == "ping"
    assert events == ["startup", "shutdown"]


def test_fastapi_add_middleware_and_misconfiguration_at_start() -> None:
    api = FastAPI()

    @api.get("/items/{item}")
    def item(item: str) -> dict[str, str]:
        return {"item": item}

    api.add_middleware(SitemapMiddleware, sources=["/items/1"], base_url=BASE)
    with TestClient(api) as test_client:
        assert test_client.get("/sitemap.xml").status_code == 200
        assert test_client.get("/items/1").json() == {"item": "1"}

    broken = FastAPI()
    broken.add_middleware(SitemapMiddleware, sources=["/"], base_url="example.com")
    with pytest.raises(ConfigurationError, match="base_url"), TestClient(broken):
        pass


def test_misconfiguration_fails_at_construction(engine: Engine) -> None:
    with pytest.raises(ConfigurationError, match=r"^path: "):
        SitemapApp(sources=["/"], base_url=BASE, path="sitemap.xml")
    with pytest.raises(ValueError, match="changefreq"):
        article_source(engine, changefreq="sometimes")
    with pytest.raises(ValueError, match="'nope'"):
        article_source(engine, loc="/a/{nope}")
    with pytest.raises(TypeError, match="AsyncEngine"):
        AsyncSQLAlchemySource(select(articles.c.id), engine, name="a", loc="/{id}")  # type: ignore[arg-type]


def test_seed_helper_is_deterministic(tmp_path: Path) -> None:
    a = create_engine(f"sqlite:///{tmp_path}/a.sqlite3")
    seed(a, 3)
    with a.connect() as conn:
        assert conn.execute(select(articles.c.updated_at)).scalars().all()[
            -1
        ] == BASE_TIME + timedelta(minutes=3)
    dispose(a)
