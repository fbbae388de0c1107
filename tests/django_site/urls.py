"""Django's own sitemap views over the test project's Sitemap classes, and a home page."""

from __future__ import annotations

from django.contrib.sitemaps import views
from django.http import HttpRequest, HttpResponse
from django.urls import path

from .shop.sitemaps import LATEST_SITEMAPS, SITEMAPS


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("home")


def value(request: HttpRequest, slug: str) -> HttpResponse:
    """A page named by a column's value (tests/sources/sqlalchemy/test_template_values.py
    routes locs here)."""
    return HttpResponse(slug)


urlpatterns = [
    path("", home),
    path("values/<str:slug>", value, name="value-str"),
    path("paths/<path:slug>", value, name="value-path"),
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
    path(
        "django/latest.xml",
        views.index,
        {"sitemaps": LATEST_SITEMAPS, "sitemap_url_name": "django-latest"},
    ),
    path(
        "django/latest-<section>.xml",
        views.sitemap,
        {"sitemaps": LATEST_SITEMAPS},
        name="django-latest",
    ),
]
