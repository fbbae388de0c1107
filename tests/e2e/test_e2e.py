"""End to end: real servers on 127.0.0.1 (uvicorn; Flask and Django on werkzeug) and real
HTTP clients. Every test runs against each server."""

from __future__ import annotations

import gzip
import http.client
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree
from sqlalchemy import create_engine

from ..support import (
    _schema,
    assert_valid_index,
    assert_valid_urlset,
    check_served,
    free_port,
    locs,
    seed,
)
from ..uvicorn_process import serving

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


SERVERS = {
    # uvicorn serving the Starlette app; werkzeug's threaded server serving Flask and Django.
    "uvicorn": [
        "-m",
        "uvicorn",
        "tests.e2e_server:app",
        "--host",
        "127.0.0.1",
        "--log-level",
        "warning",
        "--port",
    ],
    "flask": ["-m", "tests.e2e_server", "flask"],
    "django": ["-m", "tests.e2e_server", "django"],
    # Django's middleware (settings.MIDDLEWARE): its ASGI handler under uvicorn, its WSGI
    # handler under gunicorn's threads.
    "django-asgi": [
        "-m",
        "uvicorn",
        "tests.django_e2e:asgi",
        "--host",
        "127.0.0.1",
        "--log-level",
        "warning",
        "--lifespan",
        "off",
        "--port",
    ],
    "django-wsgi": [
        "-m",
        "gunicorn",
        "tests.django_e2e:wsgi",
        "--threads",
        "4",
        "--log-level",
        "warning",
        "--bind",
        "127.0.0.1:{port}",
    ],
}


@pytest.fixture(scope="module", params=list(SERVERS))
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    db = tmp_path_factory.mktemp("e2e") / "site.sqlite3"
    engine = create_engine(f"sqlite:///{db}")
    seed(engine, 1200)
    engine.dispose()
    port = free_port()
    arguments = SERVERS[request.param]
    if any("{port}" in argument for argument in arguments):
        command = [sys.executable, *(a.format(port=port) for a in arguments)]
    else:
        command = [sys.executable, *arguments, str(port)]
    env = {"E2E_DB": str(db), "E2E_FAIL_AT": "900"}
    with serving(command, port, db.parent / "server.log", env, "/_state") as url:
        yield url


def fetch(method: str, url: str, **options: Any) -> httpx.Response:
    """A real HTTP request; every sitemap received is checked against the official schema."""
    response = httpx.request(method, url, **options)
    check_served(response.status_code, response.headers.get("content-type", ""), response.content)
    return response


def state(server: str) -> dict[str, int]:
    return httpx.get(server + "/_state").json()  # type: ignore[no-any-return]


def raw_get(
    server: str, path: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[bytes, list[bytes]]:
    """Send a request over a plain socket; return the head and the body's chunks as framed."""
    host, port = server.removeprefix("http://").split(":")
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n"
            f"{extra}\r\n".encode()
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    chunks = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
    return head, chunks


def test_streams_a_valid_document_in_several_chunks(
    server: str, sitemap_schema: etree.XMLSchema
) -> None:
    head, chunks = raw_get(server, "/sitemap.xml")
    assert head.startswith(b"HTTP/1.1 200")
    assert b"transfer-encoding: chunked" in head.lower()
    assert len(chunks) >= 12
    urls = assert_valid_urlset(b"".join(chunks), sitemap_schema)
    assert len(urls) == 1200 and locs(urls)[0] == "https://example.com/articles/article-1"
    assert state(server)["checkedout"] == 0


def test_head_and_conditional_get(server: str) -> None:
    get = fetch("GET", server + "/sitemap.xml")
    head = httpx.head(server + "/sitemap.xml")
    assert head.status_code == 200 and head.content == b""
    for name in ("etag", "last-modified", "content-type", "cache-control", "x-robots-tag"):
        assert head.headers[name] == get.headers[name]
    assert "content-length" not in get.headers
    for headers in (
        {"If-None-Match": get.headers["etag"]},
        {"If-Modified-Since": get.headers["last-modified"]},
    ):
        cached = fetch("GET", server + "/sitemap.xml", headers=headers)
        assert cached.status_code == 304 and cached.content == b""
        assert cached.headers["etag"] == get.headers["etag"]
        assert cached.headers["last-modified"] == get.headers["last-modified"]
    # RFC 9110: Last-Modified is never later than Date.
    assert httpx.Headers(get.headers)["date"]
    assert get.headers["content-type"] == "text/xml; charset=utf-8"


def test_method_not_allowed(server: str) -> None:
    response = httpx.post(server + "/sitemap.xml")
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_failure_mid_stream_is_a_broken_transfer_for_real_clients(server: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(server + "/broken.xml")
    host, port = server.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/broken.xml")
    response = connection.getresponse()
    assert response.status == 200
    with pytest.raises(http.client.IncompleteRead) as caught:
        response.read()
    assert b"</urlset>" not in caught.value.partial
    connection.close()
    _, chunks = raw_get(server, "/broken.xml")
    assert b"</urlset>" not in b"".join(chunks)
    assert state(server)["checkedout"] == 0


def test_client_disconnect_stops_the_query(server: str) -> None:
    before = state(server)["slow_rows"]
    with httpx.stream("GET", server + "/slow.xml") as response:
        first = next(response.iter_bytes())
        assert first.startswith(b"<?xml")
    deadline = time.monotonic() + 10
    while state(server)["checkedout"] != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    settled = state(server)
    assert settled["checkedout"] == 0
    time.sleep(0.3)
    read = state(server)["slow_rows"] - before
    assert read == settled["slow_rows"] - before  # nothing read after the client left
    assert read < 1200


def test_index_pages_and_gzip_through_a_real_server(server: str) -> None:
    index = fetch("GET", server + "/paged/sitemap.xml")
    children = assert_valid_index(index.content)
    assert [loc for loc, _ in children] == [
        "https://example.com/paged/sitemap-pages-1.xml",
        *[f"https://example.com/paged/sitemap-articles-{n}.xml" for n in (1, 2, 3)],
    ]
    seen: list[str] = []
    for loc, _ in children[1:]:
        path = loc.removeprefix("https://example.com")
        plain = fetch("GET", server + path, headers={"Accept-Encoding": "identity"})
        coded = httpx.get(server + path, headers={"Accept-Encoding": "gzip"})
        assert coded.headers["content-encoding"] == "gzip"
        assert coded.content == plain.content  # httpx inflated it
        file = httpx.get(server + path + ".gz")
        assert file.headers["content-type"] == "application/gzip"
        assert gzip.decompress(file.content) == plain.content
        again = httpx.get(
            server + path,
            headers={"Accept-Encoding": "gzip", "If-None-Match": coded.headers["etag"]},
        )
        assert again.status_code == 304 and again.headers["vary"] == "Accept-Encoding"
        seen += locs(assert_valid_urlset(plain.content, _schema("sitemap.xsd")))
    assert len(seen) == len(set(seen)) == 1200
    assert httpx.get(server + "/paged/sitemap-articles-4.xml").status_code == 404
    assert httpx.get(server + "/paged/sitemap-articles-0.xml").status_code == 404
    assert state(server)["checkedout"] == 0


def test_failure_mid_stream_with_gzip_is_a_broken_stream(server: str) -> None:
    head, chunks = raw_get(server, "/broken.xml", headers={"Accept-Encoding": "gzip"})
    assert head.startswith(b"HTTP/1.1 200") and b"content-encoding: gzip" in head.lower()
    with pytest.raises((EOFError, OSError)):  # no gzip trailer: never a whole file
        gzip.decompress(b"".join(chunks))
    assert state(server)["checkedout"] == 0


def test_a_slow_stream_does_not_hold_up_other_requests(server: str) -> None:
    with httpx.stream("GET", server + "/slow.xml") as slow:
        assert next(slow.iter_bytes()).startswith(b"<?xml")  # a transfer under way
        index = fetch("GET", server + "/paged/sitemap.xml")
        assert index.status_code == 200
        page = fetch("GET", server + "/paged/sitemap-articles-2.xml")
        assert len(assert_valid_urlset(page.content, _schema("sitemap.xsd"))) == 500
        cached = httpx.get(server + "/sitemap.xml", headers={"If-None-Match": "*"})
        assert cached.status_code == 304
    deadline = time.monotonic() + 10
    while state(server)["checkedout"] != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state(server)["checkedout"] == 0


def http10(server: str, path: str) -> tuple[bytes, bytes]:
    """An HTTP/1.0 request: no chunked framing, the body ends where the connection does."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: example.com\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


def test_http_1_0_clients_get_whole_documents_or_503(server: str) -> None:
    head, body = http10(server, "/sitemap.xml")
    assert head.split(b"\r\n")[0].endswith(b"200 OK")
    assert f"content-length: {len(body)}".encode() in head.lower()
    assert body.rstrip().endswith(b"</urlset>")
    head, body = http10(server, "/broken.xml")
    assert b" 503 " in head.split(b"\r\n")[0] and b"<" not in body
    assert state(server)["checkedout"] == 0
