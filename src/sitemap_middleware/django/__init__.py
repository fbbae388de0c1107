"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted,
a middleware for ``settings.MIDDLEWARE`` and the ``sitemap_render``/``sitemap_check``
commands (add ``"sitemap_middleware.django"`` to ``INSTALLED_APPS``)."""

from .adopted import DjangoSitemapSource, django_sitemap_sources
from .middleware import SitemapMiddleware
from .sources import AsyncDjangoSource, DjangoSource

__all__ = [
    "AsyncDjangoSource",
    "DjangoSitemapSource",
    "DjangoSource",
    "SitemapMiddleware",
    "django_sitemap_sources",
]
