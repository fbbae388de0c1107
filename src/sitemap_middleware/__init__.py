"""Serve XML sitemaps from live data, streamed, with RFC 9110 conditional requests."""

from typing import TYPE_CHECKING

from .asgi import SitemapApp, SitemapMiddleware
from .entry import BadRowError, Entry
from .extensions import Alternate, Extensions, Image, News, Video
from .flow import SitemapAborted
from .optional import MissingExtra
from .settings import ConfigurationError, Settings
from .sources.base import ALL, AsyncSource, KeyRange, SyncSource
from .sources.iterable import AsyncIterableSource, IterableSource
from .stats import BadRow, BadRowStats, bad_row_stats
from .validators import Summary
from .wsgi import SitemapWSGIApp, SitemapWSGIMiddleware

if TYPE_CHECKING:  # SQLAlchemy is an optional extra, imported on first use below
    from .sources.sqlalchemy import SQLAlchemySource
    from .sources.sqlalchemy_async import AsyncSQLAlchemySource

__all__ = [
    "ALL",
    "Alternate",
    "AsyncIterableSource",
    "AsyncSQLAlchemySource",
    "AsyncSource",
    "BadRow",
    "BadRowError",
    "BadRowStats",
    "ConfigurationError",
    "Entry",
    "Extensions",
    "Image",
    "IterableSource",
    "KeyRange",
    "MissingExtra",
    "News",
    "SQLAlchemySource",
    "Settings",
    "SitemapAborted",
    "SitemapApp",
    "SitemapMiddleware",
    "SitemapWSGIApp",
    "SitemapWSGIMiddleware",
    "Summary",
    "SyncSource",
    "Video",
    "bad_row_stats",
]


def __getattr__(name: str) -> object:
    # SQLAlchemy is an optional extra: import its sources only when asked for.
    if name == "SQLAlchemySource":
        from .sources.sqlalchemy import SQLAlchemySource

        return SQLAlchemySource
    if name == "AsyncSQLAlchemySource":
        from .sources.sqlalchemy_async import AsyncSQLAlchemySource

        return AsyncSQLAlchemySource
    raise AttributeError(f"module 'sitemap_middleware' has no attribute {name!r}")
