"""The Django application of sitemap_middleware (``INSTALLED_APPS``): its system checks
(``manage.py check``) and its management commands (``sitemap_render``, ``sitemap_check``)."""

from __future__ import annotations

from django.apps import AppConfig


class SitemapMiddlewareConfig(AppConfig):  # type: ignore[misc]  # Django ships no types
    name = "sitemap_middleware.contrib.django"
    label = "sitemap_middleware"
    verbose_name = "Sitemap middleware"

    def ready(self) -> None:
        from .checks import register_checks

        register_checks()

        super().ready()
