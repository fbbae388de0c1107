"""The example's URLs (the sitemap's are the middleware's)."""

from __future__ import annotations

from django.urls import path

from ..site import PAGES
from . import views

urlpatterns = [
    *(path(page.lstrip("/"), views.page, {"path": page}) for page in PAGES),
    path("articles", views.article_list),
    path("articles/<path:slug>", views.article),
]
