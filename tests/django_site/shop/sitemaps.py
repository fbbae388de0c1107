"""Sitemap classes as a Django project writes them, served by Django's views and adopted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.sitemaps import Sitemap
from django.db.models import Max
from django.utils import translation

from .models import Article, Page


class ArticleSitemap(Sitemap):  # type: ignore[type-arg]
    changefreq = "daily"
    priority = 0.6
    limit = 5

    def items(self) -> Any:
        return Article.objects.filter(published=True).order_by("id")

    def lastmod(self, item: Article) -> datetime | None:
        return item.updated_at


class LatestArticleSitemap(ArticleSitemap):
    """Its index lastmod is every article's newest, published or not (not its items')."""

    def get_latest_lastmod(self) -> datetime | None:
        latest: datetime | None = Article.objects.aggregate(latest=Max("updated_at"))["latest"]
        return latest


class PageSitemap(Sitemap):  # type: ignore[type-arg]
    i18n = True
    languages = ("en", "de")
    alternates = True
    x_default = True
    limit = 3

    def items(self) -> Any:
        return Page.objects.order_by("path")

    def location(self, item: Page) -> str:
        return f"/{translation.get_language()}/{item.path}"

    def lastmod(self, item: Page) -> datetime | None:
        return item.updated_at

    def priority(self, item: Page) -> float:
        return 0.9 if item.path == "about" else 0.4


class StaticSitemap(Sitemap):  # type: ignore[type-arg]
    protocol = "https"
    changefreq = "monthly"

    def items(self) -> list[str]:
        return ["/", "/contact", "/terms"]

    def location(self, item: str) -> str:
        return item


SITEMAPS: dict[str, Any] = {
    "articles": ArticleSitemap,
    "pages": PageSitemap,
    "static": StaticSitemap,
}
LATEST_SITEMAPS: dict[str, Any] = {"latest": LatestArticleSitemap}
