""":mod:`tests.routes_site` on Django: its URLconf (``path()``, ``re_path()`` and
``i18n_patterns()`` routes), its sources (those of the site, the i18n pages, and a
``DjangoSource`` whose template covers ``/articles/<slug>``) and, for a subprocess, its
settings (``ROUTES_CLEAN=1``: the clean site)."""

from __future__ import annotations

import os
from typing import Any

from django.conf.urls.i18n import i18n_patterns
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path
from django.views import View

from sitemap_middleware import IterableSource, not_in_sitemap
from tests.django_site.settings import *  # noqa: F403
from tests.routes_site import BASE, DRAFTS
from tests.routes_site import sources as site_sources

CLEAN = os.environ.get("ROUTES_CLEAN") == "1"
ROOT_URLCONF = "tests.routes_django"
MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
SITEMAP_MIDDLEWARE = {"sources": "tests.routes_django.sources", "base_url": BASE}
SITEMAP_ROUTES_EXCLUDED = [DRAFTS]


def sources(clean: bool = CLEAN) -> list[Any]:
    from sitemap_middleware.contrib.django import DjangoSource
    from tests.django_site.shop.models import Article

    return [
        *site_sources(clean),
        IterableSource(["/en/about-us", "/de/ueber-uns"], name="i18n"),
        DjangoSource(Article.objects.all(), loc="/articles/{slug}", name="articles"),
    ]


def page(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    return HttpResponse(request.path)


@not_in_sitemap
def search(request: HttpRequest) -> HttpResponse:
    return HttpResponse("results")


class Subscribe(View):
    def post(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("subscribed")


urlpatterns = [
    path("", page, name="home"),
    path("about", page, name="about"),
    path("contact", page, name="contact"),
    path("products/<slug:slug>", page, name="product"),
    path("search", search, name="search"),
    path("drafts/<slug:slug>", page, name="draft"),
    path("subscribe", Subscribe.as_view(), name="subscribe"),
    re_path(r"^articles/(?P<slug>[-\w]+)$", page, name="article"),
    *i18n_patterns(path("about-us", page, name="about-us")),
    path("admin/", include(([path("", page, name="index")], "admin"))),  # as admin.site.urls
]


def clean_sources() -> list[Any]:
    return sources(clean=True)
