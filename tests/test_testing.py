"""``sitemap_middleware.testing``: the public in-process clients, against small hand-written
ASGI and WSGI apps (what a server's client sees: chunks, aborts, HEAD, header lines as sent),
then against the sitemap apps themselves."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from sitemap_middleware import Limits, SitemapAborted, SitemapApp, SitemapWSGIApp
from sitemap_middleware.testing import (
    ASGIClient,
    Response,
    ResponseFailed,
    StartupFailed,
    WSGIClient,
    with_lifespan,
)

BASE = "https://example.com/"
CHUNKS = [b"<first/>", b"<second/>", b"<third/>"]
HEADERS = [("Content-Type", "text/xml"), ("Vary", "Accept"), ("Vary", "Accept-Encoding")]


def asgi_app(abort_after: int | None = None) -> Any:
    """Streams CHUNKS with HEADERS (each in its own message); ``abort_after=n``: raises after
    n chunks. A HEAD gets the head only. Records each request's scope."""
    scopes: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scopes.append(scope)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(k.encode(), v.encode()) for k, v in HEADERS],
            }
        )
        if scope["method"] == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return
        for number, chunk in enumerate(CHUNKS):
            if number == abort_after:
                raise RuntimeError("the database went away")
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    app.scopes = scopes  # type: ignore[attr-defined]
    return app


class WSGIApp:
    """Streams CHUNKS with HEADERS; ``abort_after=n``: raises after n chunks. Counts close()."""

    def __init__(self, abort_after: int | None = None) -> None:
        self.abort_after = abort_after
        self.closed = 0
        self.environs: list[dict[str, Any]] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.environs.append(environ)
        start_response("200 OK", list(HEADERS))
        return Body(self, environ["REQUEST_METHOD"] == "HEAD")


class Body:
    def __init__(self, app: WSGIApp, head: bool) -> None:
        self.app, self.head = app, head

    def __iter__(self) -> Iterator[bytes]:
        if self.head:
            return
        for number, chunk in enumerate(CHUNKS):
            if number == self.app.abort_after:
                raise RuntimeError("the database went away")
            yield chunk

    def close(self) -> None:
        self.app.closed += 1


def asgi(app: Any, method: str, path: str = "/doc.xml", **options: Any) -> Response:
    async def run() -> Response:
        return await ASGIClient(app, "https://example.com/").request(method, path, **options)

    return anyio.run(run)


def wsgi(app: Any, method: str, path: str = "/doc.xml", **options: Any) -> Response:
    return WSGIClient(app, "https://example.com/").request(method, path, **options)


CLIENTS = {
    "asgi": (asgi_app, asgi),
    "wsgi": (WSGIApp, wsgi),
}


@pytest.fixture(params=sorted(CLIENTS))
def client(request: pytest.FixtureRequest) -> tuple[Callable[..., Any], Callable[..., Response]]:
    return CLIENTS[request.param]


def test_a_streamed_body_arrives_chunk_by_chunk(client: Any) -> None:
    make, send = client
    response = send(make(), "GET")
    assert (response.status, response.complete, response.error) == (200, True, None)
    assert response.chunks == CHUNKS
    assert response.body == b"".join(CHUNKS)


def test_header_lines_are_kept_as_sent(client: Any) -> None:
    make, send = client
    response = send(make(), "GET")
    assert response.headers == HEADERS  # order, case and the repeated line
    assert response.header("content-type") == "text/xml"
    assert response.header_values("VARY") == ["Accept", "Accept-Encoding"]
    assert response.header("etag") is None and response.header_values("etag") == []


def test_an_abort_mid_body_is_an_incomplete_response_with_its_error(client: Any) -> None:
    make, send = client
    app = make(abort_after=2)
    response = send(app, "GET")
    assert response.status == 200 and not response.complete
    assert response.chunks == CHUNKS[:2]
    assert isinstance(response.error, RuntimeError)
    assert str(response.error) == "the database went away"
    if isinstance(app, WSGIApp):
        assert app.closed == 1  # however the reading ended


def test_head_has_the_head_and_no_body(client: Any) -> None:
    make, send = client
    response = send(make(), "HEAD")
    assert (response.status, response.complete, response.chunks) == (200, True, [])
    assert response.headers == HEADERS


def test_a_client_that_goes_away_stops_the_reading(client: Any) -> None:
    make, send = client
    app = make()
    response = send(app, "GET", disconnect_after=1)
    assert response.chunks == CHUNKS[:1] and not response.complete
    if isinstance(app, WSGIApp):
        assert app.closed == 1


def test_the_request_is_the_one_a_server_makes() -> None:
    app = asgi_app()
    asgi(app, "GET", "/caf%C3%A9.xml?page=2", headers={"Accept-Encoding": "gzip"})
    scope = app.scopes[0]  # type: ignore[attr-defined]
    assert (scope["path"], scope["raw_path"], scope["query_string"]) == (
        "/café.xml",
        b"/caf%C3%A9.xml",
        b"page=2",
    )
    assert (scope["scheme"], scope["server"]) == ("https", ("example.com", 443))
    assert scope["headers"] == [(b"host", b"example.com"), (b"accept-encoding", b"gzip")]
    other = WSGIApp()
    wsgi(other, "GET", "/caf%C3%A9.xml?page=2", headers=[("Accept-Encoding", "gzip")])
    environ = other.environs[0]
    assert environ["PATH_INFO"] == "/café.xml".encode().decode("latin-1")
    assert (environ["QUERY_STRING"], environ["HTTP_ACCEPT_ENCODING"]) == ("page=2", "gzip")
    assert (environ["HTTP_HOST"], environ["wsgi.url_scheme"]) == ("example.com", "https")


def test_fetch_streams_to_a_sink_and_raises_on_an_abort() -> None:
    for make, client in ((asgi_app, ASGIClient), (WSGIApp, WSGIClient)):
        body = io.BytesIO()
        head = anyio.run(client(make(), "https://example.com/").fetch, "/doc.xml", {}, body.write)
        assert (head.status, body.getvalue()) == (200, b"".join(CHUNKS))
        assert head.header("vary") == "Accept"  # names in lowercase
        broken = client(make(abort_after=1), "https://example.com/")
        with pytest.raises(ResponseFailed, match="the database went away") as failed:
            anyio.run(broken.fetch, "/doc.xml", {}, io.BytesIO().write)
        assert failed.value.head is not None and failed.value.head.status == 200
        assert isinstance(failed.value.__cause__, RuntimeError)


def test_with_lifespan_runs_the_startup_around_the_requests() -> None:
    events: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                events.append(message["type"])
                if message["type"] == "lifespan.startup":
                    scope["state"]["ready"] = True
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        ready = str(scope["state"].get("ready")).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": ready})

    async def work(client: ASGIClient) -> Response:
        return await client.request("GET", "/")

    response = anyio.run(with_lifespan, app, "http://localhost/", work)
    assert response.body == b"True" and response.complete
    assert events == ["lifespan.startup", "lifespan.shutdown"]

    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database"})

    with pytest.raises(StartupFailed, match="no database"):
        anyio.run(with_lifespan, failing, "http://localhost/", work)


# --- the sitemap apps through them ------------------------------------------------------------


def test_the_sitemap_apps_through_the_clients() -> None:
    settings: dict[str, Any] = {"sources": ["/", "/about"], "base_url": "https://example.com/"}
    answers = [asgi(SitemapApp(**settings), "GET", "/sitemap.xml")]
    wsgi_app = SitemapWSGIApp(**settings)
    try:
        answers.append(wsgi(wsgi_app, "GET", "/sitemap.xml"))
    finally:
        wsgi_app.close()
    for response in answers:
        assert response.status == 200 and response.complete
        assert b"<loc>https://example.com/about</loc>" in response.body
        assert len(response.header_values("etag")) == 1
    assert answers[0].body == answers[1].body


def test_a_sitemap_whose_source_fails_mid_stream_is_aborted() -> None:
    reads: list[int] = []

    def rows() -> Iterator[str]:
        """Whole when the sitemap summarizes it, broken when the body is read."""
        reads.append(1)
        for n in range(300):
            if len(reads) > 1 and n == 200:
                raise RuntimeError("the database went away")
            yield f"/page-{n}"

    settings: dict[str, Any] = {"base_url": BASE, "limits": Limits(batch_size=20, chunk_bytes=1024)}
    asgi_answer = asgi(SitemapApp(sources={"pages": rows}, **settings), "GET", "/sitemap.xml")
    reads.clear()
    wsgi_app = SitemapWSGIApp(sources={"pages": rows}, **settings)
    try:
        wsgi_answer = wsgi(wsgi_app, "GET", "/sitemap.xml")
    finally:
        wsgi_app.close()
    for response in (asgi_answer, wsgi_answer):
        assert response.status == 200 and not response.complete
        assert len(response.chunks) > 1 and b"</urlset>" not in response.body
        assert isinstance(response.error, SitemapAborted)
