"""One ``Date``, and ``Last-Modified`` not after it, in every answer, through every server the
README names, read from the raw bytes of the response head.

A client that merges repeated fields (httpx, requests, a browser) would read two ``Date``
lines as one comma-joined value, so these tests speak HTTP/1.1 over a socket themselves:
the request bytes out, the head read up to its blank line, each field line counted by its
name, case-insensitively.

What each server does with an application's ``Date`` (from their sources; the middleware
writes none, so each writes the only one): uvicorn (and gunicorn's uvicorn worker) and
hypercorn add their own to every response (two if the application sent one); werkzeug's
server too; gunicorn's sync worker drops the application's and writes its own; waitress
and wsgiref (Django's ``runserver``) write theirs when the application has none. Django's
handlers pass the response's fields on and add none.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import pytest
from sqlalchemy import create_engine

from sitemap_middleware.core.http import SINGLETON_FIELDS, format_http_date, parse_http_date

from ..date_servers_app import KEY, seed_dates
from ..support import free_port
from ..uvicorn_process import serving

pytestmark = pytest.mark.e2e

_APP, _DJANGO = "tests.date_servers_app", "tests.date_servers_django"


def _uvicorn(app: str) -> list[str]:
    return [
        "-m",
        "uvicorn",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--log-level",
        "warning",
    ]


def _gunicorn(app: str, worker: str) -> list[str]:
    return ["-m", "gunicorn", app, "-k", worker, "--bind", "127.0.0.1:{port}", "--workers", "1"]


def _waitress(app: str) -> list[str]:
    return ["-m", "waitress", "--host=127.0.0.1", "--port={port}", app]  # options first


SERVERS: dict[str, list[str]] = {
    "uvicorn": _uvicorn(f"{_APP}:asgi_app"),
    "hypercorn": ["-m", "hypercorn", f"{_APP}:asgi_app", "--bind", "127.0.0.1:{port}"],
    "gunicorn-uvicorn": _gunicorn(f"{_APP}:asgi_app", "uvicorn_worker.UvicornWorker"),
    "gunicorn-sync": _gunicorn(f"{_APP}:wsgi_app", "sync"),
    "waitress": _waitress(f"{_APP}:wsgi_app"),
    "werkzeug": ["-m", _APP, "werkzeug", "{port}", f"{_APP}:wsgi_app"],
    "django-asgi-uvicorn": _uvicorn(f"{_DJANGO}:asgi"),
    "django-wsgi-gunicorn": _gunicorn(f"{_DJANGO}:wsgi", "sync"),
    "django-wsgi-waitress": _waitress(f"{_DJANGO}:wsgi"),
    "django-wsgi-wsgiref": ["-m", _APP, "wsgiref", "{port}", f"{_DJANGO}:wsgi"],
}

SOON = timedelta(seconds=50)
"""How far ahead of the seeding ``/soon.xml``'s newest row is (``lastmods.tolerance``: 60 s)."""


@dataclass(frozen=True)
class Served:
    port: int
    soon: datetime


@pytest.fixture(scope="module", params=list(SERVERS))
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """One server process per server for the whole module, on a free port, its own file."""
    folder = tmp_path_factory.mktemp(request.param)
    db = folder / "dates.sqlite3"
    soon = datetime.now(UTC).replace(microsecond=0) + SOON
    engine = create_engine(f"sqlite:///{db}")
    seed_dates(engine, soon.replace(tzinfo=None))
    engine.dispose()
    port = free_port()
    command = [
        sys.executable,
        *(arg.replace("{port}", str(port)) for arg in SERVERS[request.param]),
    ]
    with serving(command, port, folder / "server.log", {"DATE_DB": str(db)}, "/sitemap.xml"):
        yield Served(port, soon)


@dataclass(frozen=True)
class Head:
    status: int
    fields: list[tuple[str, str]]
    """Each field line as sent: the name lowercased, the value without surrounding spaces."""
    body: bytes

    def values(self, name: str) -> list[str]:
        return [value for field, value in self.fields if field == name]

    def content(self) -> bytes:
        """The body without its chunked framing. Waitress frames a HEAD's answer without
        Content-Length as chunked and sends the last chunk (``0``, no content) after the
        head, then closes the connection."""
        if not self.body or self.values("transfer-encoding") != ["chunked"]:
            return self.body
        content, rest = bytearray(), self.body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return bytes(content)
            content += rest[:size]
            rest = rest[size + 2 :]

    def one(self, name: str) -> str:
        values = self.values(name)
        assert len(values) == 1, f"{name}: {values}"
        return values[0]


def exchange(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> Head:
    """One request on a connection of its own; the response head parsed from its bytes."""
    lines = [f"{method} {path} HTTP/1.1", "Host: example.com", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if method == "POST":
        lines.append("Content-Length: 0")
    received = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        while chunk := sock.recv(65536):  # Connection: close: the server ends it
            received += chunk
    head, separator, body = bytes(received).partition(b"\r\n\r\n")
    assert separator, f"no complete head: {bytes(received[:300])!r}"
    status_line, *field_lines = head.decode("latin-1").split("\r\n")
    version, status, *_ = status_line.split(" ", 2)
    assert version == "HTTP/1.1" or version == "HTTP/1.0", status_line
    fields = []
    for line in field_lines:
        name, colon, value = line.partition(":")
        assert colon and name == name.strip() and not line[0].isspace(), f"field line {line!r}"
        fields.append((name.lower(), value.strip(" \t")))
    return Head(int(status), fields, body)


@dataclass(frozen=True)
class Kind:
    method: str
    path: str
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    revalidate: str | None = None
    """``etag`` or ``last-modified``: ask with that validator of a first GET (a 304)."""


KINDS = {
    "index": Kind("GET", "/sitemap.xml", 200),
    "urlset": Kind("GET", "/sitemap-articles-1.xml", 200),
    "list-urlset": Kind("GET", "/sitemap-pages-1.xml", 200),
    "gzip-coded": Kind("GET", "/sitemap-articles-1.xml", 200, (("Accept-Encoding", "gzip"),)),
    "gz-file": Kind("GET", "/sitemap-articles-1.xml.gz", 200),
    "head": Kind("HEAD", "/sitemap-articles-1.xml", 200),
    "head-index": Kind("HEAD", "/sitemap.xml", 200),
    "html": Kind("GET", "/sitemap.html", 200),
    "html-page": Kind("GET", "/sitemap-articles-1.html", 200),
    "304-if-none-match": Kind("GET", "/sitemap-articles-1.xml", 304, revalidate="etag"),
    "304-if-modified-since": Kind("GET", "/sitemap.xml", 304, revalidate="last-modified"),
    "304-gzip": Kind("GET", "/sitemap.xml", 304, (("Accept-Encoding", "gzip"),), "etag"),
    "304-head": Kind("HEAD", "/sitemap-articles-1.xml", 304, revalidate="etag"),
    "404": Kind("GET", "/sitemap-articles-9.xml", 404),
    "404-head": Kind("HEAD", "/sitemap-nothing-1.xml", 404),
    "405": Kind("POST", "/sitemap.xml", 405),
    "503": Kind("GET", "/broken.xml", 503),
    "robots.txt": Kind("GET", "/robots.txt", 200),
    "robots.txt-304": Kind("GET", "/robots.txt", 304, revalidate="etag"),
    "key-file": Kind("GET", f"/{KEY}.txt", 200),
    "key-file-head": Kind("HEAD", f"/{KEY}.txt", 200),
    "key-file-304": Kind("GET", f"/{KEY}.txt", 304, revalidate="last-modified"),
}


def check_wire(head: Head, where: str) -> datetime:
    """Exactly one Date (an IMF-fixdate), no singleton field twice, Last-Modified not after
    the Date; the Date."""
    dates = head.values("date")
    assert len(dates) == 1, f"{where}: {len(dates)} Date fields: {dates}"
    for name in SINGLETON_FIELDS:
        assert len(head.values(name)) <= 1, f"{where}: {name} sent twice: {head.values(name)}"
    date = parse_http_date(dates[0])
    assert date is not None and format_http_date(date) == dates[0], f"{where}: Date {dates[0]}"
    modified = head.values("last-modified")
    if modified:
        moment = parsedate_to_datetime(modified[0])
        assert moment <= date, f"{where}: Last-Modified {modified[0]} after Date {dates[0]}"
    return date


@pytest.mark.parametrize("kind", list(KINDS))
def test_one_date_and_no_field_twice(server: Served, kind: str) -> None:
    ask = KINDS[kind]
    headers = dict(ask.headers)
    if ask.revalidate is not None:
        first = exchange(server.port, "GET", ask.path, headers)
        assert first.status == 200, f"GET {ask.path}: {first.status}"
        check_wire(first, f"GET {ask.path}")
        condition = "if-none-match" if ask.revalidate == "etag" else "if-modified-since"
        headers[condition] = first.one(ask.revalidate)
    head = exchange(server.port, ask.method, ask.path, headers)
    where = f"{ask.method} {ask.path} {headers}"
    assert head.status == ask.status, f"{where}: {head.status} {head.body[:200]!r}"
    check_wire(head, where)
    if ask.status == 304 or ask.method == "HEAD":
        assert head.content() == b"", f"{where}: content"
    if kind == "gzip-coded":
        assert head.one("content-encoding") == "gzip"
    if kind == "405":
        assert head.one("allow") == "GET, HEAD"
    if kind == "503":
        assert head.one("retry-after").isdigit()


def test_last_modified_is_the_newest_served_and_if_modified_since_gets_its_304(
    server: Served,
) -> None:
    first = exchange(server.port, "GET", "/sitemap.xml")
    assert first.status == 200 and b"9999" not in first.body
    modified = first.one("last-modified")
    assert modified == "Wed, 01 May 2024 19:00:00 GMT"  # the newest served, not 9999
    again = exchange(server.port, "GET", "/sitemap.xml", {"if-modified-since": modified})
    assert again.status == 304 and again.one("last-modified") == modified
    check_wire(again, "If-Modified-Since")


def test_a_capped_last_modified_is_never_after_the_servers_date(server: Served) -> None:
    """``/soon.xml``'s newest row is ahead of the clock (within ``lastmods.tolerance``): its
    Last-Modified is capped below the clock, and must stay below the server's Date, which
    uvicorn refreshes once a second. Requests over a couple of seconds cross its ticks."""
    for _ in range(14):
        asked = datetime.now(UTC)
        head = exchange(server.port, "GET", "/soon.xml")
        assert head.status == 200, head.status
        date = check_wire(head, "GET /soon.xml")
        modified = parsedate_to_datetime(head.one("last-modified"))
        if asked < server.soon - timedelta(seconds=5):  # still ahead: capped by the clock
            assert modified > date - timedelta(seconds=5), (modified, date)
        time.sleep(0.13)
