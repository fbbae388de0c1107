"""A project whose ``robots.txt`` is made from its rows: ``Disallow`` for each article titled
"private" (of the database ``settings.ROBOTS_ALIAS``), as an app keeping its rules in the
database does."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path

from .shop.models import Article


def robots_txt(request: HttpRequest) -> HttpResponse:
    alias = getattr(settings, "ROBOTS_ALIAS", "default")
    slugs = Article.objects.using(alias).filter(title="private").values_list("slug", flat=True)
    lines = ["User-agent: *", *(f"Disallow: /articles/{slug}" for slug in slugs)]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain")


urlpatterns = [path("robots.txt", robots_txt)]
