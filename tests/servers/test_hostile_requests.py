"""Hostile requests: arbitrary paths, methods, query strings and header lines.

Whatever a client sends, the answer is one of 200/304/400/404/405/412/503,
never a 500 or a traceback; a 200 GET is a document valid against the official
XSD whose URLs come from the configuration (never from ``Host`` or
``X-Forwarded-*``); a 304 and every HEAD carry no body; and nothing the client
sent comes back in a body or a header. Requests go through an
:class:`~tests.adapters.AppDriver`, so every adapter gets the same properties.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, select

from sitemap_middleware import Entry, SQLAlchemySource

from .. import hostile
from ..adapters import DRIVERS, AppDriver, RawHeaders, Reply
from ..hostile import budget
from ..support import articles, seed

ALLOWED = {200, 304, 400, 404, 405, 412, 503}
BASE = "https://example.com/"


@dataclass
class Site:
    """One app under test and what a client could know about it."""

    name: str
    app: Any
    scope: str
    sitemap_paths: list[str]
    """Every document it serves."""
    validators: dict[str, tuple[str, str | None]]
    """ETag and Last-Modified of each document (GET, identity)."""


def _entries() -> list[Entry]:
    return [
        Entry("/", datetime(2024, 1, 2, 3, 4, 5), "daily", 1.0),
        Entry("/about?x=1&y='2'", date(2023, 5, 6), None, 0.3),
        Entry("/über/ß", None, "never", None),
    ]


@pytest.fixture(scope="module", params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest) -> Iterator[AppDriver]:
    made = DRIVERS[request.param]()
    yield made
    made.close()


@pytest.fixture(scope="module")
def sql_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path: Path = tmp_path_factory.mktemp("requests") / "site.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    seed(engine, 6)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def sites(driver: AppDriver, sql_engine: Engine) -> Iterator[list[Site]]:
    articles_source = SQLAlchemySource(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        sql_engine,
        name="articles",
        loc="/maps/articles/{slug}",
        lastmod="updated_at",
    )
    made = [
        Site(
            "urlset",
            driver.make(_entries(), base_url=BASE),
            BASE,
            ["/sitemap.xml", "/sitemap.xml.gz"],
            {},
        ),
        Site(
            "index",
            driver.make(
                {"pages": [f"/maps/{e.loc}" for e in _entries()], "articles": articles_source},
                base_url=BASE,
                path="/maps/sitemap.xml",
            ),
            BASE + "maps/",
            [
                f"/maps/{name}.xml{gz}"
                for name in ("sitemap", "sitemap-pages-1", "sitemap-articles-1")
                for gz in ("", ".gz")
            ],
            {},
        ),
    ]
    for site in made:
        for path in site.sitemap_paths:
            reply = driver.request(site.app, "GET", path.encode())
            assert reply.status == 200, (path, reply.status)
            etag = reply.header("etag")
            assert etag is not None
            site.validators[path] = (etag, reply.header("last-modified"))
    yield made
    for site in made:
        driver.discard(site.app)


# --- requests -----------------------------------------------------------------------------------

canaries = st.integers(0, 2**48).map(lambda n: f"zq{n:012x}zq")
"""Marked values: none may come back in the response."""

methods = st.one_of(
    st.sampled_from(["GET", "HEAD"]),
    st.sampled_from(
        ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW", "PRI", "M-SEARCH"]
    ),
    st.sampled_from(
        ["get", "head", "Get", "hEAD", " GET", "GET ", "GE T", "", "GET\x00", "HEAD\r\n"]
    ),
    st.text(max_size=12),
)

path_atoms = st.one_of(
    st.sampled_from(
        [
            "sitemap",
            "Sitemap",
            "maps/",
            "-",
            "pages",
            "articles",
            "urls",
            "x",
            ".xml",
            ".XML",
            ".gz",
            ".",
            "..",
            "/",
            "//",
            "%",
            "%2e",
            "%2F",
            "%2D",
            "%00",
            "%zz",
            "%C3%A9",
            "%ff",
            "\\",
            ";",
            "?",
            "#",
            "é",
            "\u202e",
            "\ud800",
        ]
    ),
    st.sampled_from(
        ["0", "1", "2", "01", "-1", "+1", "1e3", "\uff11", "9999999999", "10000000000"]
    ),
    st.integers(0, 10**40).map(str),
    st.text(max_size=8),
)


def _encode_path(text: str, escape_all: bool) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    if escape_all:
        return quote_from_bytes(raw, safe="/").encode("ascii")
    return raw


@st.composite
def targets(draw: st.DrawFn, site: Site) -> bytes:
    """A raw request-target: a document's path, a near miss, or anything at all."""
    kind = draw(st.sampled_from(["document", "near", "atoms", "bytes", "long"]))
    if kind == "document":
        path = draw(st.sampled_from(site.sitemap_paths))
    elif kind == "near":
        path = draw(st.sampled_from(site.sitemap_paths))
        at = draw(st.integers(0, len(path)))
        path = path[:at] + draw(path_atoms) + path[at + draw(st.integers(0, 3)) :]
    elif kind == "atoms":
        path = "/" + "".join(draw(st.lists(path_atoms, max_size=10)))
    elif kind == "long":
        path = draw(st.sampled_from(site.sitemap_paths)).replace(
            "sitemap", "sitemap" + draw(st.sampled_from(["-x", "/..", "-1", "a"])) * 5000
        )
    else:
        return b"/" + draw(st.binary(max_size=40))
    raw = _encode_path(path, draw(st.booleans()))
    if draw(st.booleans()):
        raw += b"?" + draw(st.binary(max_size=30))
    return raw


HEADER_NAMES = [
    "if-none-match",
    "if-modified-since",
    "if-match",
    "if-unmodified-since",
    "accept-encoding",
    "host",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-forwarded-for",
    "x-forwarded-prefix",
    "forwarded",
    "range",
    "if-range",
    "content-length",
    "transfer-encoding",
    "cookie",
    "accept",
]


@st.composite
def header_values(draw: st.DrawFn, site: Site, canary: str) -> bytes:
    etag, modified = draw(st.sampled_from(sorted(site.validators.values())))
    moment = datetime(2024, 5, 1, 12, tzinfo=UTC) + timedelta(
        seconds=draw(st.integers(-(10**9), 10**9))
    )
    pieces = st.one_of(
        st.sampled_from(
            [
                etag,
                etag.removeprefix("W/"),
                "W/" + etag,
                modified or "",
                "*",
                ",",
                ", ",
                "W/",
                '"',
                '""',
                "gzip",
                "x-gzip",
                "identity",
                "*;q=0",
                "gzip;q=0",
                ";q=",
                "q=1.0",
                ";q=nan",
                ";q=1e999",
                "br",
                "deflate",
                "bytes=0-10",
                "0",
                "-1",
                "chunked",
                "https",
                "for=1.2.3.4;host=evil.example;proto=http",
                "Sun, 06 Nov 1994 08:49:37 GMT",
                "Sunday, 06-Nov-94 08:49:37 GMT",
                "Sun Nov  6 08:49:37 1994",
                "\t",
                " ",
            ]
        ),
        st.just(moment.strftime(HTTP_DATE)),
        st.just(canary),
        st.text(st.characters(max_codepoint=255), max_size=6),
    )
    text = "".join(draw(st.lists(pieces, max_size=5)))
    encoding = draw(st.sampled_from(["latin-1", "utf-8"]))  # UTF-8: bytes past latin-1 text
    raw = text.encode(encoding, "replace")
    if draw(st.integers(0, 9)) == 0:
        raw += draw(st.binary(max_size=10))
    return raw


@st.composite
def header_lists(draw: st.DrawFn, site: Site, canary: str) -> RawHeaders:
    headers: RawHeaders = []
    host = canary + ".example"
    if draw(st.booleans()):
        headers.append((b"host", host.encode()))
    for _ in range(draw(st.integers(0, 6))):
        name = draw(st.one_of(st.sampled_from(HEADER_NAMES), st.text(max_size=8)))
        if draw(st.integers(0, 9)) == 0:
            name = name.upper()  # servers lowercase them; an adapter must not rely on it
        headers.append((name.encode("utf-8", "surrogatepass"), draw(header_values(site, canary))))
    if headers and draw(st.booleans()):  # the same field twice
        headers.append(draw(st.sampled_from(headers)))
    return headers


# --- what a response must be --------------------------------------------------------------------


def check_reply(site: Site, method: str, reply: Reply, canaries: list[str]) -> None:
    assert reply.error is None, repr(reply.error)
    assert not reply.problems, reply.problems
    assert reply.status in ALLOWED, (reply.status, reply.body[:300])
    assert reply.complete
    assert b"Traceback" not in reply.body and b'File "' not in reply.body
    for canary in canaries:
        assert canary.encode() not in reply.body
        assert all(canary.encode() not in value for _, value in reply.headers), reply.headers
    if reply.status == 304 or method == "HEAD":
        assert reply.body == b"", (reply.status, method)
    if reply.status == 304:
        assert reply.header("etag") is not None
    if reply.status == 405:
        assert reply.header("allow") == "GET, HEAD"
    if reply.status == 200 and method == "GET":
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in reply.headers}
        xml = hostile.document(200, headers, reply.body)
        locs = (
            hostile.index_children(xml)
            if hostile.is_sitemapindex(xml)
            else [entry["loc"] or "" for entry in hostile.urlset_entries(xml)]
        )
        assert locs
        assert all(loc.startswith(site.scope) for loc in locs), locs


def _names(headers: RawHeaders) -> set[str]:
    return {name.decode("latin-1").lower() for name, _ in headers}


@st.composite
def requests(draw: st.DrawFn, sites: list[Site]) -> tuple[Site, str, bytes, RawHeaders, str]:
    site = draw(st.sampled_from(sites))
    canary = draw(canaries)
    return site, draw(methods), draw(targets(site)), draw(header_lists(site, canary)), canary


@budget(0.75)
@given(data=st.data())
def test_any_request_gets_a_sound_answer(
    driver: AppDriver, sites: list[Site], data: st.DataObject
) -> None:
    site, method, target, headers, canary = data.draw(requests(sites))
    reply = driver.request(site.app, method, target, headers)
    check_reply(site, method, reply, [canary])
    names = _names(headers)
    if reply.status == 304:
        assert method in ("GET", "HEAD") and names & {"if-none-match", "if-modified-since"}
    if reply.status == 412:
        assert names & {"if-match", "if-unmodified-since", "if-none-match"}
    if method in ("GET", "HEAD"):
        # HEAD is GET without the body: the same status and the same header lines (but
        # the Date, read from the clock a moment later).
        other = "HEAD" if method == "GET" else "GET"
        twin = driver.request(site.app, other, target, headers)
        check_reply(site, other, twin, [canary])
        assert twin.status == reply.status
        assert _undated(twin.headers) == _undated(reply.headers)


def _undated(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(name, value) for name, value in headers if name.lower() != b"date"]


# --- conditional requests, spelled every way a client may spell them ----------------------------

HTTP_DATE = "%a, %d %b %Y %H:%M:%S GMT"
LIST_JUNK = st.sampled_from(['"nope"', 'W/"nope"', "garbage", '""', "W/", ",", " "])


@st.composite
def tag_lists(draw: st.DrawFn, etag: str, match: bool) -> str:
    """An entity-tag list that holds ``etag`` (weak or strong spelling) or does not."""
    members = draw(st.lists(LIST_JUNK, max_size=3))
    if match:
        spelled = draw(st.sampled_from([etag, etag.removeprefix("W/")]))
        members.insert(draw(st.integers(0, len(members))), spelled)
    separator = draw(st.sampled_from([",", ", ", " ,\t", ",,"]))
    return separator.join(members)


@budget(0.25)
@given(data=st.data())
def test_conditional_requests(driver: AppDriver, sites: list[Site], data: st.DataObject) -> None:
    site = data.draw(st.sampled_from(sites))
    path = data.draw(st.sampled_from(sorted(site.validators)))
    etag, modified = site.validators[path]
    method = data.draw(st.sampled_from(["GET", "HEAD"]))
    kind = data.draw(
        st.sampled_from(["inm-match", "inm-miss", "ims", "ims-stale", "if-match", "star"])
    )
    # A document without Last-Modified ignores If-Modified-Since (RFC 9110 §13.1.3).
    undated = modified is None
    last = datetime.strptime(modified or "Wed, 01 May 2024 12:00:00 GMT", HTTP_DATE)
    last = last.replace(tzinfo=UTC)
    later = (last + timedelta(seconds=data.draw(st.integers(0, 10**8)))).strftime(HTTP_DATE)
    earlier = (last - timedelta(seconds=data.draw(st.integers(1, 10**8)))).strftime(HTTP_DATE)
    if kind == "inm-match":
        headers = [(b"if-none-match", data.draw(tag_lists(etag, True)).encode())]
        expected = 304
    elif kind == "inm-miss":  # If-None-Match decides: If-Modified-Since is not consulted
        headers = [
            (b"if-none-match", data.draw(tag_lists(etag, False)).encode()),
            (b"if-modified-since", later.encode()),
        ]
        expected = 200
    elif kind == "ims":
        headers = [(b"if-modified-since", later.encode())]
        expected = 200 if undated else 304
    elif kind == "ims-stale":
        headers = [(b"if-modified-since", earlier.encode())]
        expected = 200
    elif kind == "if-match":  # weak tags never match strongly (RFC 9110 §13.1.1)
        headers = [(b"if-match", data.draw(tag_lists(etag, True)).encode())]
        expected = 412
    else:
        headers = [(b"if-none-match", data.draw(st.sampled_from([b"*", b" *", b"*\t"])))]
        expected = 304
    reply = driver.request(site.app, method, path.encode(), headers)
    check_reply(site, method, reply, [])
    assert reply.status == expected, (kind, headers, reply.status)
    assert reply.header("etag") == etag


def test_uppercase_and_latin1_header_values_do_not_break_the_answer(
    driver: AppDriver, sites: list[Site]
) -> None:
    site = sites[0]
    etag, _ = site.validators["/sitemap.xml"]
    reply = driver.request(
        site.app,
        "GET",
        b"/sitemap.xml",
        [(b"If-None-Match", etag.encode()), (b"host", "h\xe9\xff".encode("latin-1"))],
    )
    check_reply(site, "GET", reply, [])
    assert reply.status == 304
    assert re.fullmatch(r'W/"[A-Za-z0-9_-]+"', etag)
