"""Helpers the test modules share, each defined once: the official schemas and the checks
of served documents against them, the test table of articles and its source, a free port,
what an app serves for a plain GET (its body, or its locs). Fixtures are in
:mod:`tests.conftest`."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gzip
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from lxml import etree
from sqlalchemy import (
    Engine,
    event,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from sitemap_middleware import SQLAlchemySource
from sitemap_middleware.cli.loader import interface
from sitemap_middleware.servers.job_threads import JobThread
from sitemap_middleware.testing import ASGIClient, Response, WSGIClient

from .adapters import call
from .tables import BASE_TIME, articles, metadata

SCHEMAS = Path(
    os.environ.get("SITEMAP_SCHEMAS", Path(__file__).resolve().parents[2] / "shared" / "schemas")
)
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class _Offline(etree.Resolver):
    """The XHTML schema imports W3C's xml.xsd: read it from the shared folder, not the web."""

    def resolve(self, url: str | None, pubid: str | None, context: Any) -> Any:
        if url and url.endswith("/2001/xml.xsd"):
            return self.resolve_filename(str(SCHEMAS / "xml.xsd"), context)
        return None


@functools.cache
def _schema(name: str) -> etree.XMLSchema:
    path = SCHEMAS / name
    if not path.is_file():
        pytest.fail(
            f"official schema {path} is missing: the shared/ folder must sit beside the "
            "checkout (or set SITEMAP_SCHEMAS); schema tests never pass without it"
        )
    parser = etree.XMLParser()
    parser.resolvers.add(_Offline())
    return etree.XMLSchema(etree.parse(str(path), parser))


EXTENSION_NAMESPACES = (
    b"http://www.w3.org/1999/xhtml",
    b"http://www.google.com/schemas/sitemap-image/1.1",
    b"http://www.google.com/schemas/sitemap-video/1.1",
    b"http://www.google.com/schemas/sitemap-news/0.9",
)


def assert_valid_urlset(body: bytes, schema: etree.XMLSchema) -> list[etree._Element]:
    """Parse a served document, validate it against sitemap.xsd (or, when its urlset declares
    extension namespaces, urlset-with-extensions.xsd), return its <url> elements."""
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    document = etree.fromstring(body)
    opening = body[: body.find(b">", body.find(b"<urlset")) + 1]
    if any(namespace in opening for namespace in EXTENSION_NAMESPACES):
        schema = _schema("urlset-with-extensions.xsd")
    if not schema.validate(document):
        raise AssertionError(f"not valid against sitemap.xsd: {schema.error_log}")
    assert document.tag == f"{NS}urlset"
    return list(document.iter(f"{NS}url"))


def assert_valid_index(body: bytes) -> list[tuple[str, str | None]]:
    """Parse a served sitemapindex, validate it against siteindex.xsd, return (loc, lastmod)s."""
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    document = etree.fromstring(body)
    schema = _schema("siteindex.xsd")
    if not schema.validate(document):
        raise AssertionError(f"not valid against siteindex.xsd: {schema.error_log}")
    return [
        (child.findtext(f"{NS}loc") or "", child.findtext(f"{NS}lastmod"))
        for child in document.iter(f"{NS}sitemap")
    ]


def check_served(
    status: int, content_type: str, body: bytes, content_encoding: str | None = None
) -> None:
    """Every complete sitemap a test receives is validated against the official schema
    (gzip files and gzip-coded bodies are inflated first)."""
    if status != 200:
        return
    if content_type == "application/gzip" or content_encoding == "gzip":
        assert body[:2] == b"\x1f\x8b"
        body = gzip.decompress(body)
    elif "xml" not in content_type:
        return
    if b"<urlset" in body[:200]:
        assert_valid_urlset(body, _schema("sitemap.xsd"))
    elif b"<sitemapindex" in body[:200]:
        assert_valid_index(body)


def locs(urls: list[etree._Element]) -> list[str]:
    return [url.findtext(f"{NS}loc") or "" for url in urls]


@contextlib.contextmanager
def run_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """The folder ``name`` of the whole run (pytest-xdist's workers share it), held by one
    of them at a time: the first to hold it makes what the others then find there."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield shared / name


def shared_mypy_cache(
    tmp_path_factory: pytest.TempPathFactory,
) -> contextlib.AbstractContextManager[Path]:
    """The mypy cache of the run's type-checking tests, one mypy at a time: the first reads
    the types of the standard library, SQLAlchemy and the package (8 s of CPU), the later
    ones their cache, which mypy checks against each source."""
    return run_folder(tmp_path_factory, "mypy-cache")


def seed(engine: Engine, rows: int, start: int = 1) -> None:
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(articles),
            [
                {"id": i, "slug": f"article-{i}", "updated_at": BASE_TIME + timedelta(minutes=i)}
                for i in range(start, start + rows)
            ],
        )


def _held(pool: Any) -> int:
    """The connections of ``pool`` checked out now."""
    return int(pool.checkedout())


def join_job_threads(seconds: float = 30.0) -> None:
    """Until the threads the WSGI adapters started for one job each (pages kept current, a
    robots.txt read) have ended, ``seconds`` at most in all: what such a job logs or holds
    is there once it ends."""
    deadline = time.monotonic() + seconds
    for thread in threading.enumerate():
        if isinstance(thread, JobThread):
            thread.join(max(0.0, deadline - time.monotonic()))


def dispose(engine: Engine, seconds: float = 10.0) -> None:
    """Dispose of ``engine`` once the WSGI adapters' background jobs have ended and the
    connections still checked out are back in its pool.

    A job a request started in the background, or a worker thread a test left, may hold
    one when the test ends: disposed under it, the connection would go back to a pool
    nobody closes (CPython 3.13 warns of the database left open when it is collected,
    in whichever test is running then). A job's thread that has not connected yet would
    connect on the new pool, which nobody disposes either. One that never comes back
    fails the test."""
    deadline = time.monotonic() + seconds
    join_job_threads(seconds)
    while _held(engine.pool) and time.monotonic() < deadline:
        time.sleep(0.01)
    held = _held(engine.pool)
    engine.dispose()
    assert not held, f"{held} connection(s) never returned to the pool of {engine.url}"


async def adispose(engine: AsyncEngine, seconds: float = 10.0) -> None:
    """:func:`dispose` for an ``AsyncEngine``: its connections go back on the event loop."""
    pool = engine.sync_engine.pool
    deadline = time.monotonic() + seconds
    while _held(pool) and time.monotonic() < deadline:  # noqa: ASYNC110 (a pool has no event)
        await anyio.sleep(0.01)
    held = _held(pool)
    await engine.dispose()
    assert not held, f"{held} connection(s) never returned to the pool of {engine.url}"


def article_source(engine: Engine, **options: Any) -> SQLAlchemySource:
    """The articles of the test table as a source (options override the defaults)."""
    stmt = options.pop("stmt", select(articles.c.id, articles.c.slug, articles.c.updated_at))
    return SQLAlchemySource(
        stmt,
        engine,
        name="articles",
        loc=options.pop("loc", "/articles/{slug}"),
        lastmod="updated_at",
        changefreq=options.pop("changefreq", "weekly"),
        **options,
    )


def statements(engine: Engine) -> list[str]:
    """Every SQL statement ``engine`` sends from now on."""
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda c, cur, stmt, *a: seen.append(stmt))
    return seen


def now_naive() -> datetime:
    """Now in UTC, naive, in whole seconds (as the test tables store their moments)."""
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


# Ports below the kernel's ephemeral range (32768-60999 on Linux), so that no outgoing
# connection (to PostgreSQL, to a server under test) can take one between the moment a test
# picks it and the moment its server binds it; each xdist worker draws from its own block
# of eight. Runs side by side each take their own blocks: SITEMAP_TEST_PORT_BLOCK is the
# block of a run's first worker (.ci/run).
_PORT_BLOCK = 1500
_PORTS_FROM = 20000


def _worker_ports() -> Iterator[int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = int(os.environ.get("SITEMAP_TEST_PORT_BLOCK", "0"))
    first = _PORTS_FROM + (block + (int(worker) if worker.isdigit() else 0)) % 8 * _PORT_BLOCK
    start = random.Random(os.getpid()).randrange(_PORT_BLOCK)
    while True:
        for offset in range(_PORT_BLOCK):
            yield first + (start + offset) % _PORT_BLOCK


_next_ports = _worker_ports()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a server a test starts)."""
    for port in _next_ports:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("unreachable")


def served(app: Any, path: str, headers: Mapping[str, str] | None = None) -> bytes:
    """The body an app (ASGI or WSGI) answers to a plain GET of ``path`` (no
    Accept-Encoding) on https://example.com/, through :mod:`sitemap_middleware.testing`: a
    complete 200, not content-coded, checked against the schema when a sitemap."""
    base_url = "https://example.com/"
    response: Response
    if interface(app) == "wsgi":
        response = WSGIClient(app, base_url).request("GET", path, headers)
    else:
        response = anyio.run(ASGIClient(app, base_url).request, "GET", path, headers)
    assert response.status == 200 and response.complete, (path, response.status, response.error)
    assert response.header("content-encoding") is None, path
    check_served(200, response.header("content-type") or "", response.body)
    return response.body


def xsd_valid(body: bytes) -> bool:
    """Whether the official schemas accept a document: a sitemapindex by siteindex.xsd, a
    urlset by sitemap.xsd, or by urlset-with-extensions.xsd when it declares an extension."""
    root = etree.fromstring(body)
    if root.tag == f"{NS}sitemapindex":
        name = "siteindex.xsd"
    elif any(ns.encode() in EXTENSION_NAMESPACES for ns in root.nsmap.values()):
        name = "urlset-with-extensions.xsd"
    else:
        name = "sitemap.xsd"
    return bool(_schema(name).validate(root))


async def served_locs(
    app: Any, schema: etree.XMLSchema, path: str = "/sitemap.xml", none_listed_ok: bool = False
) -> list[str]:
    """The locs of the urlset ``app`` serves at ``path``, validated against ``schema``;
    ``none_listed_ok``: a 404 (every row was a bad row) is no loc."""
    reply = await call(app, path=path)
    if none_listed_ok and reply.status == 404:
        return []
    assert reply.status == 200, reply.body
    return locs(assert_valid_urlset(reply.body, schema))


# --- documents written by hand (for the checker, and for sites that serve them) -------------

DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
EXTENSIONS = {
    "xhtml": "http://www.w3.org/1999/xhtml",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}
"""The extensions' namespaces by their usual prefixes."""


def xmlns(namespaces: Mapping[str, str]) -> str:
    """The attributes declaring ``namespaces`` (prefix -> namespace), for :func:`urlset`."""
    return "".join(f' xmlns:{prefix}="{namespace}"' for prefix, namespace in namespaces.items())


def urlset(*entries: str, attributes: str = "") -> bytes:
    """A urlset: the XML declaration, the opening tag in the sitemap namespace with
    ``attributes`` (:func:`xmlns` for extensions), the entries as given."""
    opening = f'<urlset xmlns="{NS[1:-1]}"{attributes}>'
    return f"{DECLARATION}{opening}{''.join(entries)}</urlset>\n".encode()


def url(loc: str, *children: str) -> str:
    """A ``url`` entry: its ``loc``, then ``children`` as given (:func:`lastmod`, ...)."""
    return f"<url><loc>{loc}</loc>{''.join(children)}</url>"


def lastmod(value: str) -> str:
    return f"<lastmod>{value}</lastmod>"


def image(loc: str = "https://cdn.example.net/1.jpg", extra: str = "") -> str:
    return f"<image:image><image:loc>{loc}</image:loc>{extra}</image:image>"


def news(
    language: str = "en",
    published: str = "2024-05-02T08:00:00+00:00",
    title: str = "<news:title>Today</news:title>",
) -> str:
    return (
        "<news:news><news:publication><news:name>Paper</news:name>"
        f"<news:language>{language}</news:language></news:publication>"
        f"<news:publication_date>{published}</news:publication_date>{title}</news:news>"
    )


def eventually(probe: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Whether ``probe`` came true within ``seconds``: for what a thread of the library does
    after the answer's last byte (a connection back to its pool)."""
    deadline = time.monotonic() + seconds
    while not probe():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
