"""The sitemaps of :mod:`tests.date_servers_app` as a Django project: each one setting,
served by the Django middleware (a subclass per extra setting) in front of Django's 404.
``asgi`` and ``wsgi`` are Django's handlers for it."""

from __future__ import annotations

import os
from typing import Any

from sitemap_middleware.contrib.django import SitemapMiddleware
from tests import date_servers_app
from tests.django_site.settings import *  # noqa: F403

_by_path = {
    options["path"]: options for options in date_servers_app.sitemaps(date_servers_app.database())
}
SITEMAP_MIDDLEWARE = _by_path["/sitemap.xml"]
SOON_SITEMAP = _by_path["/soon.xml"]
BROKEN_SITEMAP = _by_path["/broken.xml"]
ROOT_URLCONF = __name__
INSTALLED_APPS = ["sitemap_middleware.contrib.django"]
DATABASES: dict[str, Any] = {}
urlpatterns: list[Any] = []


class Soon(SitemapMiddleware):
    setting = "SOON_SITEMAP"


class Broken(SitemapMiddleware):
    setting = "BROKEN_SITEMAP"


MIDDLEWARE = [
    "sitemap_middleware.contrib.django.SitemapMiddleware",
    f"{__name__}.Soon",
    f"{__name__}.Broken",
]


def __getattr__(name: str) -> Any:
    """``asgi`` and ``wsgi``: Django's handlers for this project (built on first use)."""
    if name not in ("asgi", "wsgi"):
        raise AttributeError(name)
    os.environ["DJANGO_SETTINGS_MODULE"] = __name__  # not an inherited one
    if name == "asgi":
        from django.core.asgi import get_asgi_application

        return get_asgi_application()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()
