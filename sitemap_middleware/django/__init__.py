"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted,
a middleware for ``settings.MIDDLEWARE`` and the ``sitemap_render``/``sitemap_check``
commands (add ``"sitemap_middleware.django"`` to ``INSTALLED_APPS``)."""

from .middleware import SitemapMiddleware

__all__ = ["SitemapMiddleware"]
