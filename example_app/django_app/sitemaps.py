"""The example's sitemap sources, built once the apps are ready (``SITEMAP_MIDDLEWARE``
names :func:`sources`): the same entries as the other variants."""

from __future__ import annotations

from sitemap_middleware.contrib.django import DjangoSource
from sitemap_middleware.sources.base import AnySource

from ..site import ARTICLE_SITEMAP, pages_source
from .models import Article


def sources() -> list[AnySource]:
    articles = DjangoSource(Article.objects.filter(published=True), **ARTICLE_SITEMAP)
    return [pages_source(), articles]
