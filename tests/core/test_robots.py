"""robots.txt announces the sitemap: the app's file gets the line once, a missing file a
minimal one; the same through both adapters."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from sitemap_middleware import SitemapMiddleware, SitemapWSGIMiddleware
from sitemap_middleware.core.robots import lists, minimal, with_sitemap

from ..adapters import ADAPTERS, call

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
URL = "https://example.com/sitemap.xml"
LINE = b"Sitemap: https://example.com/sitemap.xml"


def test_the_line_is_added_once_in_the_file_s_own_style() -> None:
    assert with_sitemap(b"User-agent: *\nDisallow: /admin", URL) == (
        b"User-agent: *\nDisallow: /admin\n\n" + LINE + b"\n"
    )
    assert with_sitemap(b"User-agent: *\r\nDisallow:\r\n", URL) == (
        b"User-agent: *\r\nDisallow:\r\n\r\n" + LINE + b"\r\n"
    )
    listed = b"User-agent: *\n  SITEMAP :  " + URL.encode() + b"  # ours\n"
    assert lists(listed, URL) and with_sitemap(listed, URL) == listed
    other = b"Sitemap: https://example.com/other.xml\n"
    assert with_sitemap(other, URL) == other + b"\n" + LINE + b"\n"
    assert with_sitemap(b"", URL) == LINE + b"\n"
    assert minimal(URL) == b"User-agent: *\nDisallow:\n\n" + LINE + b"\n"


def raw_app(adapter: str, status: int, chunks: list[bytes], extra: list[tuple[str, str]]) -> Any:
    """An app whose every path answers ``status`` with ``chunks`` (and records the requests)."""
    seen: list[dict[str, Any]] = []
    headers = [("content-type", "text/plain; charset=utf-8"), *extra]
    if adapter == "asgi":

        async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
            seen.append({"method": scope["method"], "headers": dict(scope["headers"])})
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in headers],
                }
            )
            for i, chunk in enumerate(chunks):
                more = i < len(chunks) - 1
                await send({"type": "http.response.body", "body": chunk, "more_body": more})

        asgi.seen = seen  # type: ignore[attr-defined]
        return asgi

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        seen.append(
            {
                "method": environ["REQUEST_METHOD"],
                "headers": {k: v for k, v in environ.items() if k.startswith("HTTP_")},
            }
        )
        start_response(f"{status} X", headers)
        return iter(chunks)

    wsgi.seen = seen  # type: ignore[attr-defined]
    return wsgi


@pytest.fixture(params=[name for name, adapter in ADAPTERS.items() if adapter.wrap is not None])
def wrap(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """The adapter's middleware around an app of its interface (``raw_app``)."""
    adapter = ADAPTERS[request.param]
    assert adapter.wrap is not None

    def make(status: int, chunks: list[bytes], extra: Any = (), **settings: Any) -> Any:
        inner = raw_app(adapter.interface, status, chunks, list(extra))
        app = adapter.wrap(inner, sources=["/"], base_url=BASE, **settings)
        app.seen = inner.seen
        return app

    return make


async def test_the_app_s_robots_txt_gets_the_sitemap_line(wrap: Callable[..., Any]) -> None:
    app = wrap(
        200,
        [b"User-agent: *\n", b"Disallow: /admin"],
        [("content-length", "31"), ("etag", '"app"'), ("x-extra", "kept")],
    )
    response = await call(app, path="/robots.txt", headers={"if-none-match": '"app"'})
    assert response.status == 200
    assert response.body == b"User-agent: *\nDisallow: /admin\n\n" + LINE + b"\n"
    assert response.headers["content-length"] == str(len(response.body))
    assert response.headers["x-extra"] == "kept" and response.headers["etag"] != '"app"'
    # The app is asked for a plain GET without the client's validators or codings.
    assert all(request["method"] == "GET" for request in app.seen)
    cached = await call(
        app,
        path="/robots.txt",
        headers={"if-none-match": response.headers["etag"], "accept-encoding": "gzip"},
    )
    assert cached.status == 304 and cached.body == b""
    assert not any("if-none-match" in str(r["headers"]).lower() for r in app.seen)
    assert not any("accept-encoding" in str(r["headers"]).lower() for r in app.seen)
    head = await call(app, "HEAD", path="/robots.txt")
    assert head.status == 200 and head.body == b""
    assert head.headers["content-length"] == response.headers["content-length"]


async def test_a_listed_sitemap_is_not_listed_twice(wrap: Callable[..., Any]) -> None:
    body = b"User-agent: *\nDisallow:\nSitemap: " + URL.encode() + b"\n"
    response = await call(wrap(200, [body]), path="/robots.txt")
    assert response.body == body and response.body.count(b"Sitemap:") == 1


async def test_no_robots_txt_gets_a_minimal_one(wrap: Callable[..., Any]) -> None:
    for status in (404, 410):
        response = await call(wrap(status, [b"<html>not found</html>"]), path="/robots.txt")
        assert response.status == 200 and response.body == minimal(URL)
        assert response.headers["content-type"] == "text/plain; charset=utf-8"


async def test_other_answers_pass_through(wrap: Callable[..., Any]) -> None:
    error = await call(wrap(503, [b"down"], [("retry-after", "60")]), path="/robots.txt")
    assert error.status == 503 and error.body == b"down"  # crawlers must hold off: kept
    big = [b"# " + b"x" * 1000 + b"\n"] * 600  # past the 512 KiB a crawler reads
    passed = await call(wrap(200, big), path="/robots.txt")
    assert passed.body == b"".join(big)
    posted = await call(wrap(200, [b"User-agent: *\n"]), "POST", path="/robots.txt")
    assert posted.body == b"User-agent: *\n"
    off = await call(wrap(200, [b"User-agent: *\n"], robots_txt=False), path="/robots.txt")
    assert off.body == b"User-agent: *\n"


async def test_the_line_names_the_request_s_allowed_host(wrap: Callable[..., Any]) -> None:
    app = wrap(404, [b""], allowed_hosts=["example.org"])
    response = await call(app, path="/robots.txt", headers={"host": "example.org"})
    assert response.body.endswith(b"Sitemap: https://example.org/sitemap.xml\n")
    other = await call(app, path="/robots.txt", headers={"host": "evil.example"})
    assert other.status == 404 and b"evil" not in other.body  # the app's own answer


async def test_starlette_and_flask_sites() -> None:
    async def robots(request: Any) -> PlainTextResponse:
        return PlainTextResponse("User-agent: *\nDisallow: /private\n" * 20)

    starlette = Starlette(routes=[Route("/robots.txt", robots)])
    starlette.add_middleware(SitemapMiddleware, sources=["/"], base_url=BASE)
    starlette.add_middleware(GZipMiddleware, minimum_size=10)
    coded = await call(starlette, path="/robots.txt", headers={"accept-encoding": "gzip"})
    assert coded.headers["content-encoding"] == "gzip"  # the outer GZipMiddleware's work
    body = gzip.decompress(coded.body)
    assert body.endswith(LINE + b"\n") and body.count(b"Sitemap:") == 1

    flask = Flask("robots")
    flask.add_url_rule("/robots.txt", "robots", lambda: ("User-agent: *\nDisallow:\n", 200))
    flask.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        flask.wsgi_app, sources=["/"], base_url=BASE
    )
    served = await call(flask, path="/robots.txt", wsgi=True)
    assert served.body == b"User-agent: *\nDisallow:\n\n" + LINE + b"\n"
    missing = Flask("bare")
    missing.wsgi_app = SitemapWSGIMiddleware(  # type: ignore[method-assign]
        missing.wsgi_app, sources=["/"], base_url=BASE
    )
    assert (await call(missing, path="/robots.txt", wsgi=True)).body == minimal(URL)
