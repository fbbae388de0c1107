"""A site for the IndexNow tests' command lines: ``--app tests.indexnow_site:app``.

Environment: ``INDEXNOW_TEST_DB`` (a database URL), ``INDEXNOW_TEST_SCHEMA`` (PostgreSQL:
the test's schema), ``INDEXNOW_TEST_BASE`` (the site's base URL),
``INDEXNOW_TEST_ENDPOINT`` (the test's endpoint), ``INDEXNOW_TEST_KEY`` (unset: no IndexNow).
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, select

from sitemap_middleware import IndexNowSettings, SitemapApp, SQLAlchemySource

metadata = MetaData()
pages = Table(
    "pushed_pages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String(100)),
    Column("updated_at", DateTime(timezone=True), index=True),
)


def connect_args(url: str, schema: str | None) -> dict[str, Any]:
    """A PostgreSQL schema of the test's own as the search path (its tables land there)."""
    if schema is None:
        return {}
    if "asyncpg" in url:
        return {"server_settings": {"search_path": schema}}
    return {"options": f"-c search_path={schema}"}


def source(engine: Any) -> Any:
    from sitemap_middleware import AsyncSQLAlchemySource

    kind = AsyncSQLAlchemySource if hasattr(engine, "sync_engine") else SQLAlchemySource
    return kind(select(pages), engine, name="pages", loc="/pages/{slug}", lastmod="updated_at")


def build() -> SitemapApp:
    url = os.environ["INDEXNOW_TEST_DB"]
    engine = create_engine(
        url, connect_args=connect_args(url, os.environ.get("INDEXNOW_TEST_SCHEMA"))
    )
    options: dict[str, Any] = {}
    if os.environ.get("INDEXNOW_TEST_KEY"):
        options["indexnow"] = IndexNowSettings(
            key=os.environ["INDEXNOW_TEST_KEY"], endpoint=os.environ["INDEXNOW_TEST_ENDPOINT"]
        )
    return SitemapApp(
        sources=[source(engine)], base_url=os.environ["INDEXNOW_TEST_BASE"], **options
    )


app = build() if "INDEXNOW_TEST_DB" in os.environ else None
