"""``sites=``: a sitemap per host, through every adapter, failing closed.

The tenants share one SQLite table (a ``tenant_id`` column); each site's source is the
table narrowed to its tenant. Every answer is checked against its own host's rows: the
locs, and the validators the tenant's own single-site sitemap gives (the same data and
settings make the same ETag and ``Last-Modified``), never another host's.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    insert,
    select,
)

from sitemap_middleware import (
    ConfigurationError,
    Headers,
    SiteConfig,
    SitemapApp,
    SitemapMiddleware,
    SitemapWSGIApp,
    SitemapWSGIMiddleware,
    SQLAlchemySource,
    Tenants,
)
from sitemap_middleware.core.http import format_http_date
from sitemap_middleware.core.sites import Sites

from ..adapters import ADAPTERS, RawHeaders, Reply, asgi_reply, call, sitemap_app, wsgi_reply
from ..hostile import budget
from ..support import NS, dispose, statements

metadata = MetaData()
pages = Table(
    "pages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("tenant_id", Integer, nullable=False, index=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)
BASE = datetime(2024, 5, 1, 12, 0, 0)


def host_of(tenant: int) -> str:
    return f"t{tenant}.example"


def tenant_source(engine: Engine, tenant: int) -> SQLAlchemySource:
    """The table narrowed to one tenant's rows."""
    stmt = select(pages.c.id, pages.c.slug, pages.c.updated_at).where(pages.c.tenant_id == tenant)
    return SQLAlchemySource(
        stmt, engine, name="pages", loc="/p/{slug}", lastmod="updated_at", key="id"
    )


def config_of(engine: Engine, tenant: int) -> SiteConfig:
    return SiteConfig(
        base_url=f"https://{host_of(tenant)}/", sources=[tenant_source(engine, tenant)]
    )


def database(path: Path, rows: list[tuple[int, int]]) -> Engine:
    """A SQLite file holding ``rows`` of (tenant, minute), keys from 1."""
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    if rows:
        with engine.begin() as connection:
            connection.execute(
                insert(pages),
                [
                    {
                        "id": key,
                        "tenant_id": tenant,
                        "slug": f"{tenant}-{key}",
                        "updated_at": BASE + timedelta(minutes=minute),
                    }
                    for key, (tenant, minute) in enumerate(rows, start=1)
                ],
            )
    return engine


def locs_of(body: bytes) -> set[str]:
    root = etree.fromstring(body)
    return {loc.text or "" for loc in root.iter(f"{NS}loc")}


def get(host: str, path: bytes = b"/sitemap.xml", **extra: str) -> tuple[str, bytes, RawHeaders]:
    headers = [(b"host", host.encode())] + [
        (name.replace("_", "-").encode(), value.encode()) for name, value in extra.items()
    ]
    return ("GET", path, headers)


def concurrently(
    interface: str, app: Any, requests: list[tuple[str, bytes, RawHeaders]]
) -> list[Reply]:
    """The requests at once: tasks on one loop (ASGI), threads of a threaded server (WSGI)."""
    if interface == "asgi":

        async def each() -> list[Reply]:
            return list(await asyncio.gather(*(asgi_reply(app, m, t, h) for m, t, h in requests)))

        return asyncio.run(each())
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda r: wsgi_reply(app, *r), requests))


def close(app: Any) -> None:
    closing = getattr(app, "close", None)
    if closing is not None:
        closing()


# --- the property: every adapter, several tenants, resolvers that fail ----------------------

BEHAVIOURS = ("site", "none", "raise")


@dataclass
class Tenant:
    number: int
    behaviour: str
    rows: list[int]
    """The minutes of its rows' lastmods."""


tenants_strategy = st.lists(
    st.tuples(
        st.sampled_from(BEHAVIOURS),
        st.lists(st.integers(0, 10_000), max_size=6),
    ),
    min_size=2,
    max_size=4,
)


def expected_reference(engine: Engine, tenant: int) -> Reply:
    """The tenant's own single-site sitemap: the validators its data gives."""
    app = SitemapWSGIApp(
        sources=[tenant_source(engine, tenant)], base_url=f"https://{host_of(tenant)}/"
    )
    try:
        return wsgi_reply(app, *get(host_of(tenant)))
    finally:
        app.close()


@pytest.mark.parametrize("adapter", list(ADAPTERS))
@given(drawn=tenants_strategy, resolver_kind=st.sampled_from(["sync", "async", "mapping"]))
@budget(0.05)
def test_each_host_gets_its_own_sitemap_or_fails_closed(
    adapter: str,
    drawn: list[tuple[str, list[int]]],
    resolver_kind: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tenants = [Tenant(n, behaviour, minutes) for n, (behaviour, minutes) in enumerate(drawn, 1)]
    rows = [(t.number, minute) for t in tenants for minute in t.rows]
    engine = database(tmp_path_factory.mktemp("sites") / "tenants.sqlite3", rows)
    configs = {host_of(t.number): config_of(engine, t.number) for t in tenants}
    behaviour = {host_of(t.number): t.behaviour for t in tenants}
    if resolver_kind == "mapping":  # a mapping has no failures: what it lacks is a 404
        behaviour = {host: ("none" if b == "raise" else b) for host, b in behaviour.items()}
        sites: object = {h: c for h, c in configs.items() if behaviour[h] == "site"} or {
            "unused.example": SiteConfig(base_url="https://unused.example/", sources=["/x"])
        }
    else:

        def answer(host: str) -> SiteConfig | None:
            match behaviour.get(host):
                case "site":
                    return configs[host]
                case "raise":
                    raise RuntimeError(f"tenant lookup failed for {host}")
            return None

        if resolver_kind == "sync":
            sites = answer
        else:

            async def sites(host: str) -> SiteConfig | None:
                await asyncio.sleep(0)
                return answer(host)

    references = {
        host_of(t.number): expected_reference(engine, t.number)
        for t in tenants
        if behaviour[host_of(t.number)] == "site"
    }
    # No bound on generations: a busy 503 is not what this property is about.
    app = sitemap_app(adapter, sites=sites, tenants=Tenants(ttl=60), load={"max_generations": None})
    interface = ADAPTERS[adapter].interface
    hosts = [host_of(t.number) for t in tenants] + ["nobody.example"]
    try:
        requests = [get(host) for host in hosts for _ in range(2)]
        # A conditional request with another host's tag never matches.
        tags = [r.header("etag") for r in references.values() if r.header("etag")]
        requests += [get(host, if_none_match=tag or "") for host in hosts for tag in tags[:2]]
        logging.disable(logging.ERROR)  # the failing resolver's lines
        try:
            replies = concurrently(interface, app, requests)
        finally:
            logging.disable(logging.NOTSET)
        for (_, _, headers), reply in zip(requests, replies, strict=True):
            host = headers[0][1].decode()
            asked = dict((k.decode(), v.decode()) for k, v in headers[1:])
            check(
                reply,
                host,
                behaviour.get(host, "none"),
                references.get(host),
                asked,
                engine,
                tenants,
            )
    finally:
        close(app)
        dispose(engine)


def check(
    reply: Reply,
    host: str,
    behaviour: str,
    reference: Reply | None,
    asked: dict[str, str],
    engine: Engine,
    tenants: list[Tenant],
) -> None:
    assert reply.error is None and not reply.problems, (reply.error, reply.problems)
    if behaviour == "raise":
        assert reply.status == 503, reply
        assert reply.header("retry-after") == "5"
        assert reply.header("cache-control") == "no-store"
        assert reply.header("etag") is None and reply.header("last-modified") is None
        return
    if behaviour == "none":
        assert reply.status == 404, reply
        assert reply.header("cache-control") == "no-store"
        assert reply.header("etag") is None and b"<urlset" not in reply.body
        return
    assert reference is not None
    tenant = next(t for t in tenants if host_of(t.number) == host)
    if not tenant.rows:  # nothing listed: the tenant's own 404, as its single sitemap's
        assert reply.status == reference.status == 404
        return
    mine = reference.header("etag")
    if asked.get("if-none-match") == mine:
        assert reply.status == 304, reply
    else:
        assert reply.status == 200, reply
        expected = {f"https://{host}/p/{tenant.number}-{key}" for key in keys_of(tenants, tenant)}
        assert locs_of(reply.body) == expected
    assert reply.header("etag") == mine
    newest = BASE + timedelta(minutes=max(tenant.rows))
    assert reply.header("last-modified") == reference.header("last-modified")
    assert reply.header("last-modified") == format_http_date(newest.replace(tzinfo=UTC))


def keys_of(tenants: list[Tenant], tenant: Tenant) -> list[int]:
    """The keys of a tenant's rows, as :func:`database` numbered them."""
    keys, key = [], 0
    for t in tenants:
        for _ in t.rows:
            key += 1
            if t is tenant:
                keys.append(key)
    return keys


# --- examples ----------------------------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = database(tmp_path / "tenants.sqlite3", [(1, 1), (1, 2), (2, 3), (3, 4)])
    yield engine
    dispose(engine)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sites_of(app: Any) -> Sites:
    sites = app.sites
    assert isinstance(sites, Sites)
    return sites


def test_sites_are_kept_least_recently_requested_first_and_rebuilt_after_eviction(
    engine: Engine,
) -> None:
    configs = {host_of(n): config_of(engine, n) for n in (1, 2, 3)}
    app = SitemapWSGIApp(sites=configs, tenants={"max_sites": 2})
    try:
        first = wsgi_reply(app, *get(host_of(1)))
        assert first.status == 200
        wsgi_reply(app, *get(host_of(2)))
        kept = sites_of(app).sitemaps[host_of(1)]
        wsgi_reply(app, *get(host_of(1)))  # now the most recent
        wsgi_reply(app, *get(host_of(3)))  # host 2 goes
        assert list(sites_of(app).sitemaps) == [host_of(1), host_of(3)]
        assert sites_of(app).sitemaps[host_of(1)] is kept
        wsgi_reply(app, *get(host_of(2)))  # rebuilt; host 1 goes
        assert list(sites_of(app).sitemaps) == [host_of(3), host_of(2)]
        again = wsgi_reply(app, *get(host_of(1)))
        assert sites_of(app).sitemaps[host_of(1)] is not kept
        assert (again.status, again.body, again.header("etag")) == (
            first.status,
            first.body,
            first.header("etag"),
        )
    finally:
        app.close()


def test_a_site_nobody_requests_runs_no_statement(tmp_path: Path) -> None:
    asked = database(tmp_path / "asked.sqlite3", [(1, 1)])
    idle = database(tmp_path / "idle.sqlite3", [(2, 1)])
    sent = statements(idle)
    configs = {host_of(1): config_of(asked, 1), host_of(2): config_of(idle, 2)}
    for make in (SitemapApp, SitemapWSGIApp):
        app = make(sites=configs)
        replies = concurrently(
            "asgi" if make is SitemapApp else "wsgi",
            app,
            [get(host_of(1)), get(host_of(1), b"/robots.txt"), get("nobody.example")],
        )
        assert [reply.status for reply in replies] == [200, 200, 404]
        assert list(sites_of(app).sitemaps) == [host_of(1)]
        close(app)
    assert sent == []
    dispose(asked)
    dispose(idle)


def test_a_resolvers_answer_holds_for_its_ttl_and_the_sitemap_while_it_is_equal(
    engine: Engine,
) -> None:
    asked: list[str] = []
    configs = {host_of(n): config_of(engine, n) for n in (1, 2)}

    def resolver(host: str) -> SiteConfig | None:
        asked.append(host)
        return configs.get(host)

    app = SitemapWSGIApp(sites=resolver, tenants=Tenants(ttl=30))
    clock = sites_of(app).clock = Clock()
    try:
        for _ in range(3):
            assert wsgi_reply(app, *get(host_of(1))).status == 200
            assert wsgi_reply(app, *get("nobody.example")).status == 404
        assert asked == [host_of(1), "nobody.example"]  # the None is kept too
        kept = sites_of(app).sitemaps[host_of(1)]
        clock.now += 31
        assert wsgi_reply(app, *get(host_of(1))).status == 200
        assert asked[-1] == host_of(1) and len(asked) == 3
        assert sites_of(app).sitemaps[host_of(1)] is kept  # an equal config: the same sitemap
        configs[host_of(1)] = config_of(engine, 1)  # another source object: another config
        clock.now += 31
        assert wsgi_reply(app, *get(host_of(1))).status == 200
        assert sites_of(app).sitemaps[host_of(1)] is not kept
        # Paths that are not the sitemap's never ask the resolver.
        before = len(asked)
        assert wsgi_reply(app, *get("other.example", b"/about")).status == 404
        assert len(asked) == before
    finally:
        app.close()


def test_each_host_announces_its_own_sitemap_in_robots_txt(engine: Engine) -> None:
    configs = {host_of(n): config_of(engine, n) for n in (1, 2)}

    def robots(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response("200 OK", [("content-type", "text/plain")])
        return [b"User-agent: *\nDisallow: /admin\n"]

    app = SitemapWSGIMiddleware(robots, sites=configs)
    try:
        for n in (1, 2):
            reply = wsgi_reply(app, *get(host_of(n), b"/robots.txt"))
            assert reply.status == 200
            assert reply.body.endswith(f"Sitemap: https://{host_of(n)}/sitemap.xml\n".encode())
            assert reply.body.count(b"Sitemap:") == 1
        unknown = wsgi_reply(app, *get("nobody.example", b"/robots.txt"))
        assert unknown.body == b"User-agent: *\nDisallow: /admin\n"  # the app's, untouched
    finally:
        app.close()


@pytest.mark.anyio
async def test_robots_txt_per_host_under_asgi(engine: Engine) -> None:
    configs = {host_of(n): config_of(engine, n) for n in (1, 2)}
    app = SitemapApp(sites=configs)
    for n in (1, 2):
        exchange = await call(app, path="/robots.txt", headers={"host": host_of(n)})
        assert exchange.status == 200
        assert f"Sitemap: https://{host_of(n)}/sitemap.xml" in exchange.body.decode()
    assert (await call(app, path="/robots.txt", headers={"host": "x.example"})).status == 404


def test_a_resolver_that_is_too_slow_or_answers_for_another_host_is_a_503(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    slow = threading.Event()

    async def aresolver(host: str) -> SiteConfig | None:
        if host == host_of(1):
            await asyncio.sleep(5)
        return config_of(engine, 1)  # the site of host 1, whatever the host

    def resolver(host: str) -> SiteConfig | None:
        if host == host_of(1):
            slow.wait(0.3)
        return config_of(engine, 1)

    for sites in (aresolver, resolver):
        for make in (SitemapApp, SitemapWSGIApp):
            app = make(sites=sites, tenants=Tenants(timeout=0.1, retry_after=7))
            interface = "asgi" if make is SitemapApp else "wsgi"
            with caplog.at_level(logging.ERROR, "sitemap_middleware"):
                late, wrong = concurrently(interface, app, [get(host_of(1)), get(host_of(2))])
            for reply in (late, wrong):
                assert reply.status == 503
                assert reply.header("retry-after") == "7"
                assert reply.header("cache-control") == "no-store"
                assert b"t1.example" not in reply.body
            assert sites_of(app).sitemaps == {}
            close(app)
    assert "ResolverTimeout" in caplog.text
    assert "a site answers the host of its base_url only" in caplog.text


def test_fallback_mode_asks_the_host_only_after_the_apps_404(engine: Engine) -> None:
    asked: list[str] = []

    def resolver(host: str) -> SiteConfig | None:
        asked.append(host)
        return config_of(engine, 2) if host == host_of(2) else None

    def inner(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ["HTTP_HOST"] == host_of(1):
            start_response("200 OK", [("content-type", "text/xml")])
            return [b"<static/>"]
        start_response("404 Not Found", [("content-type", "text/plain")])
        return [b"nothing"]

    app = SitemapWSGIMiddleware(inner, sites=resolver, mode="fallback")
    try:
        assert wsgi_reply(app, *get(host_of(1))).body == b"<static/>"
        assert asked == []
        served = wsgi_reply(app, *get(host_of(2)))
        assert served.status == 200 and locs_of(served.body) == {"https://t2.example/p/2-3"}
        assert wsgi_reply(app, *get("nobody.example")).status == 404
    finally:
        app.close()


def test_a_missing_or_invalid_host_is_a_400_and_other_methods_a_405(engine: Engine) -> None:
    app = SitemapWSGIApp(sites={host_of(1): config_of(engine, 1)})
    try:
        assert wsgi_reply(app, "GET", b"/sitemap.xml", []).status == 400
        assert wsgi_reply(app, *get("bad host!")).status == 400
        assert wsgi_reply(app, "POST", b"/sitemap.xml", [(b"host", b"t1.example")]).status == 405
        assert wsgi_reply(app, *get("T1.Example:443")).status == 200
    finally:
        app.close()


def test_a_site_overrides_the_shared_settings(engine: Engine) -> None:
    configs = {
        host_of(1): SiteConfig(
            base_url="https://t1.example/",
            sources=[tenant_source(engine, 1)],
            headers={"cache_control": "max-age=60"},
        ),
        host_of(2): config_of(engine, 2),
    }
    app = SitemapWSGIApp(sites=configs, headers={"cache_control": "no-cache, private"})
    try:
        assert wsgi_reply(app, *get(host_of(1))).header("cache-control") == "max-age=60"
        assert wsgi_reply(app, *get(host_of(2))).header("cache-control") == "no-cache, private"
    finally:
        app.close()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sources": ["/a"], "sites": {}}, "sites: give sources= or sites=, not both"),
        ({}, "sources: required"),
        (
            {"sites": {"a.example": SiteConfig(base_url="https://b.example/", sources=["/a"])}},
            "sites['a.example']: the key must be the host of the site's base_url ('b.example')",
        ),
        (
            {
                "sites": {"a.example": SiteConfig(base_url="https://a.example/", sources=["/a"])},
                "base_url": "https://a.example/",
            },
            "base_url: not a setting beside sites=",
        ),
        (
            {
                "sites": {"a.example": SiteConfig(base_url="https://a.example/", sources=["/a"])},
                "allowed_hosts": ["a.example"],
            },
            "allowed_hosts: not a setting beside sites=",
        ),
        (
            {"sites": {"a.example": SiteConfig(base_url="https://a.example/", sources=42)}},
            "sites['a.example'].items: source 'urls': expected a list",
        ),
        (
            {"sites": {"a.example": "https://a.example/"}},
            "sites['a.example']: must be a SiteConfig",
        ),
        ({"sites": {}}, "sites: give at least one site"),
        ({"sites": 42}, "sites: must be a mapping of host -> SiteConfig or a function"),
        ({"sites": lambda host: None, "tenants": {"max_sites": 0}}, "tenants.max_sites: must be"),
        ({"sites": lambda host: None, "tenants": {"ttl": -1}}, "tenants.ttl: must be"),
    ],
)
@pytest.mark.parametrize("make", [SitemapApp, SitemapWSGIApp])
def test_a_wrong_sites_configuration_fails_at_start_naming_the_setting(
    make: Callable[..., Any], arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        make(**arguments)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_site_config_checks_its_own_fields() -> None:
    with pytest.raises(ConfigurationError, match=r"^base_url: "):
        SiteConfig(base_url="/relative", sources=["/a"])
    with pytest.raises(ConfigurationError, match=r"^limits\.max_urls: "):
        SiteConfig(base_url="https://a.example/", sources=["/a"], limits={"max_urls": 0})
    with pytest.raises(ConfigurationError, match=r"^index: "):
        SiteConfig(base_url="https://a.example/", sources=["/a"], index="never")  # type: ignore[arg-type]


def test_the_middleware_serves_sites_around_an_asgi_app(engine: Engine) -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})

    app = SitemapMiddleware(inner, sites={host_of(3): config_of(engine, 3)})
    replies = concurrently("asgi", app, [get(host_of(3)), get(host_of(3), b"/"), get(host_of(1))])
    assert [reply.status for reply in replies] == [200, 200, 404]
    assert locs_of(replies[0].body) == {"https://t3.example/p/3-4"}
    assert replies[1].body == b"app"


def test_an_adapter_with_sites_has_no_single_sitemap_and_counts_bad_rows_per_host(
    engine: Engine,
) -> None:
    from sitemap_middleware.cli.loader import find_sitemaps

    configs = {
        host_of(1): SiteConfig(
            base_url="https://t1.example/", sources=["/a", "https://x.example/b"]
        ),
        host_of(2): config_of(engine, 2),
    }
    app = SitemapWSGIApp(sites=configs)
    try:
        assert getattr(app, "sitemap", None) is None
        assert find_sitemaps(app) == []
        with pytest.raises(
            ConfigurationError, match=r"^sites: this middleware has a sitemap per host"
        ):
            _ = app.sitemap
        logging.disable(logging.WARNING)
        try:
            assert wsgi_reply(app, *get(host_of(1))).status == 200
        finally:
            logging.disable(logging.NOTSET)
        wsgi_reply(app, *get(host_of(2)))
        stats = app.stats
        assert sorted(stats) == ["t1.example/urls", "t2.example/pages"]
        assert stats["t1.example/urls"].rows_skipped == 1
        assert stats["t2.example/pages"].rows_skipped == 0
    finally:
        app.close()


def test_a_resolvers_site_that_cannot_be_built_is_a_503(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    def resolver(host: str) -> SiteConfig | None:
        return SiteConfig(base_url=f"https://{host}/", sources=42)

    app = SitemapWSGIApp(sites=resolver)
    try:
        with caplog.at_level(logging.ERROR, "sitemap_middleware"):
            reply = wsgi_reply(app, *get(host_of(1)))
        assert reply.status == 503 and reply.header("cache-control") == "no-store"
        assert "sites['t1.example'].items" in caplog.text
    finally:
        app.close()


def test_fallback_mode_under_asgi(engine: Engine) -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        host = dict(scope["headers"]).get(b"host")
        status = 200 if host == host_of(1).encode() else 404
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"<static/>" if status == 200 else b""})

    app = SitemapMiddleware(inner, sites={host_of(2): config_of(engine, 2)}, mode="fallback")
    own, served, unknown = concurrently(
        "asgi", app, [get(host_of(1)), get(host_of(2)), get("nobody.example")]
    )
    assert own.status == 200 and own.body == b"<static/>"
    assert served.status == 200 and locs_of(served.body) == {"https://t2.example/p/2-3"}
    assert unknown.status == 404 and unknown.header("cache-control") == "no-store"


def interface_of(app: Any) -> str:
    return "wsgi" if isinstance(app, SitemapWSGIApp) else "asgi"


class RecordingPurger:
    """A purger that keeps the keys it is told, in order."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def purge(self, keys: Any) -> None:
        with self.lock:
            self.calls.append(list(keys))


@pytest.mark.parametrize("kind", [SitemapApp, SitemapWSGIApp])
def test_the_sites_purge_through_one_queue_each_by_its_own_keys(engine: Engine, kind: Any) -> None:
    purger = RecordingPurger()
    sites = {host_of(t): config_of(engine, t) for t in (1, 2)}
    app = kind(sites=sites, headers=Headers.cdn(), purger=purger)
    try:
        for tenant in (1, 2):
            (reply,) = concurrently(interface_of(app), app, [get(host_of(tenant))])
            assert reply.status == 200
            assert f"sm-site_t{tenant}.example" in (reply.header("surrogate-key") or "").split()
        served = sites_of(app)
        assert served.purges is not None
        assert all(sitemap.purges is served.purges for sitemap in served.sitemaps.values())
        assert app.purge("pages", host="t2.example") == ["sm-src_t2.example_pages"]
        assert app.purge() == ["sm-site_t1.example", "sm-site_t2.example"]
        with pytest.raises(ValueError, match="name its host"):
            app.purge("pages")
        assert served.purges.wait(5)
        assert purger.calls[0][0] == "sm-src_t2.example_pages"  # keys queued meanwhile join it
        assert {key for call in purger.calls for key in call} == {
            "sm-src_t2.example_pages",
            "sm-site_t1.example",
            "sm-site_t2.example",
        }
    finally:
        close(app)


def test_a_resolvers_site_not_built_is_purged_by_its_hosts_key(engine: Engine) -> None:
    purger = RecordingPurger()

    def resolve(host: str) -> SiteConfig | None:
        return config_of(engine, int(host[1])) if host in ("t1.example", "t2.example") else None

    app = SitemapWSGIApp(sites=resolve, headers=Headers.cdn(), purger=purger)
    try:
        assert wsgi_reply(app, *get("t1.example")).status == 200
        assert app.purge("pages", host="t1.example") == ["sm-src_t1.example_pages"]
        assert app.purge("pages", host="T2.example") == ["sm-src_t2.example_pages"]
        assert app.purge() == ["sm-site_t1.example"]  # the sites the resolver named lately
    finally:
        close(app)


def test_a_purger_needs_surrogate_keys_on_the_sites_documents(engine: Engine) -> None:
    with pytest.raises(ConfigurationError, match="purger: the documents carry no surrogate"):
        SitemapApp(sites={host_of(1): config_of(engine, 1)}, purger=RecordingPurger())
