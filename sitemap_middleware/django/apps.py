"""The Django application of sitemap_middleware (``INSTALLED_APPS``)."""

from __future__ import annotations

from django.apps import AppConfig


class SitemapMiddlewareConfig(AppConfig):  # type: ignore[misc]
    name = "sitemap_middleware.django"
    label = "sitemap_middleware"
    verbose_name = "Sitemap middleware"
