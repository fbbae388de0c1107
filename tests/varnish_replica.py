"""A replica of a two-site platform as ``tests/e2e/test_varnish.py`` runs it behind Varnish,
for ``uvicorn --factory tests.varnish_replica:create``: one SQLite table of pages, each row a
host's, served with ``sites=`` as ``a.example`` and ``b.example``, with ``Headers.cdn()`` and
purges sent through :class:`~sitemap_middleware.contrib.varnish.XkeyPurger`.

Environment: ``VARNISH_DB`` (the SQLite file, created by the test), ``VARNISH_PURGE_URL``
(Varnish's). ``a.example`` keeps the preset (``s-maxage=300``: what changes there shows
through purges alone); ``b.example`` lives 2 seconds in the cache and 3 more while revalidated,
so that the test sees a copy past both served within ``stale-if-error``.

Each read opens the file anew (``NullPool``, ``mode=rw``): with the file moved away, every
read fails as with a database down, and succeeds again once it is back.
"""

from __future__ import annotations

import os

from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    select,
)
from sqlalchemy.pool import NullPool

from sitemap_middleware import Headers, Limits, SiteConfig, SitemapApp, SQLAlchemySource
from sitemap_middleware.contrib.varnish import XkeyPurger

HOSTS = ("a.example", "b.example")
PAGE_ROWS = 100  # keys per page: the rows of each host are spread over several pages

metadata = MetaData()
pages = Table(
    "pages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String, nullable=False),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False, index=True),
)


def engine_of(path: str) -> Engine:
    return create_engine(
        f"sqlite:///file:{path}?mode=rw&uri=true",
        poolclass=NullPool,
        connect_args={"timeout": 30},
    )


def site(host: str, engine: Engine, headers: Headers | None) -> SiteConfig:
    return SiteConfig(
        base_url=f"http://{host}/",
        sources=[
            SQLAlchemySource(
                select(pages.c.id, pages.c.slug, pages.c.updated_at).where(pages.c.host == host),
                engine,
                name="pages",
                loc="/{slug}",
                lastmod="updated_at",
            )
        ],
        headers=headers,
    )


def create() -> SitemapApp:
    engine = engine_of(os.environ["VARNISH_DB"])
    short = Headers.cdn(s_maxage=2, stale_while_revalidate=3, stale_if_error=86_400)
    return SitemapApp(
        sites={
            "a.example": site("a.example", engine, None),
            "b.example": site("b.example", engine, short),
        },
        headers=Headers.cdn(),
        limits=Limits(max_urls=PAGE_ROWS),
        purger=XkeyPurger(os.environ["VARNISH_PURGE_URL"], timeout=5),
    )
