"""Serve XML sitemaps from live data, streamed, with RFC 9110 conditional requests."""

from typing import TYPE_CHECKING

from .core.dates import AsOf
from .core.handler import SitemapAborted
from .core.surrogate_keys import purge_keys
from .core.validators import Summary
from .errors import MissingExtra
from .output.entry import BadRowError, Entry
from .output.extensions import Alternate, Extensions, Image, News, Video
from .servers.asgi import SitemapApp, SitemapMiddleware
from .servers.wsgi import SitemapWSGIApp, SitemapWSGIMiddleware
from .settings import (
    ConfigurationError,
    Freshness,
    Gzip,
    Headers,
    IndexNowSettings,
    Lastmods,
    Limits,
    Load,
    RobotsFilter,
    Settings,
    SiteConfig,
    Tenants,
    cdn_cache_control,
)
from .sources.base import ALL, AsyncSource, KeyRange, SyncSource
from .sources.coverage import not_in_sitemap
from .sources.extras import ExtensionOptions
from .sources.iterable import AsyncIterableSource, IterableSource
from .state.bad_rows import BadRow, BadRowStats, bad_row_stats
from .state.purges import Purger

if TYPE_CHECKING:  # SQLAlchemy is an optional extra, imported on first use below
    from .sources.sqlalchemy.async_source import AsyncSQLAlchemySource
    from .sources.sqlalchemy.purge_claims import ClaimedPurger
    from .sources.sqlalchemy.source import SQLAlchemySource

__all__ = [
    "ALL",
    "Alternate",
    "AsOf",
    "AsyncIterableSource",
    "AsyncSQLAlchemySource",
    "AsyncSource",
    "BadRow",
    "BadRowError",
    "BadRowStats",
    "ClaimedPurger",
    "ConfigurationError",
    "Entry",
    "ExtensionOptions",
    "Extensions",
    "Freshness",
    "Gzip",
    "Headers",
    "Image",
    "IndexNowSettings",
    "IterableSource",
    "KeyRange",
    "Lastmods",
    "Limits",
    "Load",
    "MissingExtra",
    "News",
    "Purger",
    "RobotsFilter",
    "SQLAlchemySource",
    "Settings",
    "SiteConfig",
    "SitemapAborted",
    "SitemapApp",
    "SitemapMiddleware",
    "SitemapWSGIApp",
    "SitemapWSGIMiddleware",
    "Summary",
    "SyncSource",
    "Tenants",
    "Video",
    "bad_row_stats",
    "cdn_cache_control",
    "not_in_sitemap",
    "purge_keys",
]


def __getattr__(name: str) -> object:
    # SQLAlchemy is an optional extra: import its sources only when asked for.
    if name == "SQLAlchemySource":
        from .sources.sqlalchemy.source import SQLAlchemySource

        return SQLAlchemySource
    if name == "ClaimedPurger":
        from .sources.sqlalchemy.purge_claims import ClaimedPurger

        return ClaimedPurger
    if name == "AsyncSQLAlchemySource":
        from .sources.sqlalchemy.async_source import AsyncSQLAlchemySource

        return AsyncSQLAlchemySource
    raise AttributeError(f"module 'sitemap_middleware' has no attribute {name!r}")
