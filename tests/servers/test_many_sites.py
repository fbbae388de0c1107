"""Hundreds of sites in one process: a site nobody requests costs the database nothing, and
``tenants.max_sites`` bounds the sitemaps kept however many hosts are requested.

The small version of ``bench/bench_sites.py``: one table, a ``tenant_id`` bound into each
site's select, a resolver over the hosts; every statement is counted by the tenant bound
into it.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam, event, select

from sitemap_middleware import SiteConfig, SitemapApp, SitemapWSGIApp, SQLAlchemySource, Tenants
from sitemap_middleware.core.sites import Sites

from ..adapters import asgi_reply, wsgi_reply
from ..support import dispose
from .test_sites import database, get, host_of, pages

TENANTS = 300
ROWS = 3
MAX_SITES = 40


class Statements:
    """Every statement ``engine`` runs, by the tenant bound into it (:func:`site_of`)."""

    def __init__(self, engine: Engine) -> None:
        self.by_tenant: Counter[int] = Counter()
        self.without_tenant: list[str] = []
        event.listen(engine, "before_cursor_execute", self.seen)

    def seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        context = args[1]
        bound = context.compiled_parameters or ()
        tenants = {values["tenant"] for values in bound if "tenant" in values}
        if len(tenants) == 1:
            self.by_tenant[tenants.pop()] += 1
        else:
            self.without_tenant.append(statement)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    rows = [(tenant, tenant * 10 + n) for tenant in range(1, TENANTS + 1) for n in range(ROWS)]
    engine = database(tmp_path_factory.mktemp("many") / "tenants.sqlite3", rows)
    yield engine
    dispose(engine)


def site_of(engine: Engine, tenant: int) -> SiteConfig:
    """The tenant's site: the table with the tenant bound as the parameter ``tenant``."""
    stmt = select(pages.c.id, pages.c.slug, pages.c.updated_at).where(
        pages.c.tenant_id == bindparam("tenant", tenant)
    )
    source = SQLAlchemySource(
        stmt, engine, name="pages", loc="/p/{slug}", lastmod="updated_at", key="id"
    )
    return SiteConfig(base_url=f"https://{host_of(tenant)}/", sources=[source])


def resolver(engine: Engine) -> Any:
    """host -> the tenant's site, each config made once (an equal config keeps its sitemap)."""

    @lru_cache(maxsize=TENANTS)
    def site(tenant: int) -> SiteConfig:
        return site_of(engine, tenant)

    def answer(host: str) -> SiteConfig | None:
        number = host.removeprefix("t").removesuffix(".example")
        if not number.isdigit() or not 1 <= int(number) <= TENANTS:
            return None
        return site(int(number))

    return answer


@pytest.mark.parametrize("interface", ["wsgi", "asgi"])
def test_unrequested_sites_run_no_statement_and_max_sites_bounds_those_kept(
    engine: Engine, interface: str
) -> None:
    settings: dict[str, Any] = {
        "sites": resolver(engine),
        "index": "always",
        "tenants": Tenants(max_sites=MAX_SITES, ttl=3600),
        "load": {"max_generations": None},
    }
    app: Any = SitemapWSGIApp(**settings) if interface == "wsgi" else SitemapApp(**settings)

    def reply(host: str, path: bytes = b"/sitemap.xml", **headers: str) -> Any:
        request = get(host, path, **headers)
        if interface == "wsgi":
            return wsgi_reply(app, *request)
        return asyncio.run(asgi_reply(app, *request))

    sites = app.sites
    assert isinstance(sites, Sites)
    counted = Statements(engine)
    requested = random.Random(5).sample(range(1, TENANTS + 1), 3 * MAX_SITES)
    etags: dict[int, str] = {}
    try:
        assert counted.by_tenant == Counter() and sites.sitemaps == {}  # nothing at start
        for done, tenant in enumerate(requested, start=1):
            index = reply(host_of(tenant))
            assert index.status == 200, index
            page = reply(host_of(tenant), b"/sitemap-pages-1.xml")
            assert page.status == 200 and f"https://{host_of(tenant)}/p/".encode() in page.body
            etags[tenant] = index.header("etag") or ""
            assert reply(host_of(tenant), if_none_match=etags[tenant]).status == 304
            assert counted.by_tenant[tenant] > 0
            assert len(sites.sitemaps) == min(done, MAX_SITES)
        # The database was asked about the tenants requested, each by its own statements.
        assert set(counted.by_tenant) == set(requested)
        assert counted.without_tenant == []
        # The sitemaps kept are those of the MAX_SITES hosts requested last, in that order.
        assert list(sites.sitemaps) == [host_of(t) for t in requested[-MAX_SITES:]]

        # A host without a site: a 404, and no statement.
        assert reply(f"t{TENANTS + 1}.example").status == 404
        assert set(counted.by_tenant) == set(requested)

        # A site dropped long ago is built again on its next request: its statements run
        # again, its validators are the same, and the least recently requested goes.
        first = requested[0]
        before = counted.by_tenant[first]
        assert host_of(first) not in sites.sitemaps
        again = reply(host_of(first))
        assert again.status == 200 and again.header("etag") == etags[first]
        assert counted.by_tenant[first] > before
        assert list(sites.sitemaps)[-1] == host_of(first)
        assert host_of(requested[-MAX_SITES]) not in sites.sitemaps
        assert len(sites.sitemaps) == MAX_SITES
    finally:
        event.remove(engine, "before_cursor_execute", counted.seen)
        if interface == "wsgi":
            app.close()
        else:
            asyncio.run(app.aclose())
