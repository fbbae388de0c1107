"""The Sitemap class a Django project writes for the table: served by Django's views and
adopted unchanged by ``DjangoSitemapSource``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.sitemaps import Sitemap

from .models import Article


class ArticleSitemap(Sitemap):  # type: ignore[type-arg]
    changefreq = "daily"
    priority = 0.5

    def items(self) -> Any:
        return Article.objects.order_by("id")

    def location(self, item: Article) -> str:
        return f"/articles/{item.slug}"

    def lastmod(self, item: Article) -> datetime | None:
        return item.updated_at


SITEMAPS = {"articles": ArticleSitemap}
