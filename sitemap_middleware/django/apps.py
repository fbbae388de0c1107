"""The Django application of sitemap_middleware (``INSTALLED_APPS``)."""

from __future__ import annotations

from django.apps import AppConfig


class SitemapMiddlewareConfig(AppConfig):
    name = "sitemap_middleware.django"
    label = "sitemap_middleware"
    verbose_name = "Sitemap middleware"
