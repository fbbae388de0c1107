"""The end-to-end tests' sitemaps (:mod:`tests.e2e_server`) as a Django project: settings,
URLs and applications in one module. Each sitemap is one setting, served by the Django
middleware (a subclass per extra setting); ``/_state`` is a view. Served by
``python -m uvicorn tests.django_e2e:asgi`` (ASGI) and ``python -m gunicorn
tests.django_e2e:wsgi`` (WSGI); ``E2E_DB`` as for the others."""

from __future__ import annotations

import json
import os
from typing import Any

from sitemap_middleware.contrib.django import SitemapMiddleware
from tests import e2e_server
from tests.django_site.settings import *  # noqa: F403

_by_path = {options["path"]: options for options in e2e_server.sitemaps()}
SITEMAP_MIDDLEWARE = _by_path["/sitemap.xml"]
PAGED_SITEMAP = _by_path["/paged/sitemap.xml"]
BROKEN_SITEMAP = _by_path["/broken.xml"]
SLOW_SITEMAP = _by_path["/slow.xml"]
ROOT_URLCONF = __name__
INSTALLED_APPS = ["sitemap_middleware.contrib.django"]
DATABASES: dict[str, Any] = {}


class Paged(SitemapMiddleware):
    setting = "PAGED_SITEMAP"


class Broken(SitemapMiddleware):
    setting = "BROKEN_SITEMAP"


class Slow(SitemapMiddleware):
    setting = "SLOW_SITEMAP"


MIDDLEWARE = [
    "sitemap_middleware.contrib.django.SitemapMiddleware",
    f"{__name__}.Paged",
    f"{__name__}.Broken",
    f"{__name__}.Slow",
]


def _state(request: Any) -> Any:
    from django.http import HttpResponse

    return HttpResponse(json.dumps(e2e_server.state()), content_type="application/json")


def __getattr__(name: str) -> Any:
    """``asgi`` and ``wsgi``: Django's handlers for this project (built on first use)."""
    if name not in ("asgi", "wsgi", "urlpatterns"):
        raise AttributeError(name)
    if name == "urlpatterns":
        from django.urls import path

        return [path("_state", _state)]
    os.environ["DJANGO_SETTINGS_MODULE"] = __name__  # not an inherited one
    if name == "asgi":
        from django.core.asgi import get_asgi_application

        return get_asgi_application()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()
