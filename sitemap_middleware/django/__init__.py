"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted."""

from .adopted import DjangoSitemapSource, django_sitemap_sources
from .sources import AsyncDjangoSource, DjangoSource

__all__ = ["AsyncDjangoSource", "DjangoSitemapSource", "DjangoSource", "django_sitemap_sources"]
