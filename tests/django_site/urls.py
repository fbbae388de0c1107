"""Django's own sitemap views over the test project's Sitemap classes, and a home page."""

from __future__ import annotations

from django.contrib.sitemaps import views
from django.http import HttpRequest, HttpResponse
from django.urls import path

from .shop.sitemaps import SITEMAPS


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("home")


urlpatterns = [
    path("", home),
    path(
        "django/sitemap.xml",
        views.index,
        {"sitemaps": SITEMAPS, "sitemap_url_name": "django-sitemap"},
    ),
    path(
        "django/sitemap-<section>.xml",
        views.sitemap,
        {"sitemaps": SITEMAPS},
        name="django-sitemap",
    ),
]
