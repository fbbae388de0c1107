"""A Django project serving :mod:`tests.indexable_site`: its pages through one Django view,
its sitemap through the middleware in ``MIDDLEWARE`` (``INDEXABLE_BASE``, ``INDEXABLE_CLEAN``
as that module reads them). For ``manage.py sitemap_check --audit-indexable`` in a
subprocess, and for uvicorn (``django.core.asgi:get_asgi_application``)."""

from __future__ import annotations

from django.urls import re_path

from tests.django_site.settings import *  # noqa: F403
from tests.indexable_site import BASE, django_view

ROOT_URLCONF = "tests.indexable_django"
INSTALLED_APPS = ["sitemap_middleware.contrib.django"]
MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
SITEMAP_MIDDLEWARE = {"sources": "tests.indexable_site.django_sources", "base_url": BASE}

urlpatterns = [re_path(r"^.*$", django_view)]
