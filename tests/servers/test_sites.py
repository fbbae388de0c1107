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
from sqlalchemy import Column, DateTime, Engine, Integer, MetaData, String, Table, create_engine
from sqlalchemy import insert, select

from sitemap_middleware import (
    ConfigurationError,
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
    return {loc.text or "" for loc in root.iter(f"{{{NS}}}loc")}


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
    app = sitemap_app(adapter, sites=sites, tenants=Tenants(ttl=60))
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
