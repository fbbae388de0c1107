"""Django's own sitemap views over the benchmark's Sitemap class."""

from __future__ import annotations

from django.contrib.sitemaps import views
from django.urls import path

from .sitemaps import SITEMAPS

urlpatterns = [
    path("sitemap.xml", views.index, {"sitemaps": SITEMAPS, "sitemap_url_name": "section"}),
    path("sitemap-<section>.xml", views.sitemap, {"sitemaps": SITEMAPS}, name="section"),
]
