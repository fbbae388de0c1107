"""The test project on PostgreSQL with ``CONN_MAX_AGE = 0`` (or ``CONNECTIONS_MAX_AGE``),
for the connection tests (:mod:`tests.contrib.django.test_django_connections`): settings,
URLs and applications in one module.

Its connections carry ``application_name`` ``CONNECTIONS_APP`` (so the tests count them in
``pg_stat_activity``) and read the schema ``CONNECTIONS_SCHEMA`` of the test process. The
middleware (``settings.MIDDLEWARE``) serves the adopted ``Sitemap`` classes of the test
project, a ``DjangoSource`` and an ``AsyncDjangoSource``, pages kept current by background
reads every ``refresh_interval``. ``/_state`` tells how many refreshes and recounts the
middleware ran. Served by ``uvicorn tests.django_connections_site:asgi`` (Django's ASGI
handler), ``gunicorn tests.django_connections_site:wsgi`` (its WSGI handler), and ``uvicorn
tests.django_connections_site:wrapped`` (Django's ASGI application inside the library's
ASGI ``SitemapMiddleware``, as the README's ``asgi.py`` wraps it).
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import unquote, urlsplit

from sitemap_middleware import Freshness
from sitemap_middleware.contrib.django import SitemapMiddleware
from tests.django_site.settings import *  # noqa: F403

BASE = "https://example.com/"
_url = urlsplit(os.environ["SITEMAP_TEST_POSTGRES"])
DATABASES: dict[str, Any] = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/"),
        "USER": unquote(_url.username or ""),
        "PASSWORD": unquote(_url.password or ""),
        "HOST": _url.hostname or "127.0.0.1",
        "PORT": str(_url.port or 5432),
        "CONN_MAX_AGE": int(os.environ.get("CONNECTIONS_MAX_AGE", "0")),
        "OPTIONS": {
            "application_name": os.environ["CONNECTIONS_APP"],
            "options": f"-c search_path={os.environ['CONNECTIONS_SCHEMA']}",
        },
    },
}
ROOT_URLCONF = __name__
SITEMAP_MIDDLEWARE = {
    "sources": f"{__name__}.sources",
    "base_url": BASE,
    # exact_rows=0: the sources are small, and would be read exactly by every request
    # instead of kept current by background reads.
    "freshness": Freshness(refresh_interval=0.2, exact_rows=0),
}
MIDDLEWARE = [f"{__name__}.Tracked"]
_sitemaps: list[Any] = []  # each serving middleware's Sitemap


class Tracked(SitemapMiddleware):
    """The middleware, remembered so that ``/_state`` can tell what it read."""

    def __init__(self, get_response: Any) -> None:
        super().__init__(get_response)
        _sitemaps.append(self.sitemap)


def sources() -> list[Any]:
    from sitemap_middleware.contrib.django import (
        AsyncDjangoSource,
        DjangoSource,
        django_sitemap_sources,
    )
    from tests.django_site.shop.models import Article
    from tests.django_site.shop.sitemaps import SITEMAPS

    articles = Article.objects.filter(published=True)
    options = {"loc": "/rows/{slug}", "lastmod": "updated_at"}
    return [
        *django_sitemap_sources(SITEMAPS, base_url=BASE),
        DjangoSource(articles, name="rows", **options),
        AsyncDjangoSource(articles, name="arows", **options),
    ]


def _state(request: Any) -> Any:
    from django.http import HttpResponse

    live = [pages for sitemap in _sitemaps for pages in sitemap.current_pages.values()]
    state = {
        "refreshes": sum(page.refreshes for page in live),
        "recounts": sum(page.recounts for page in live),
    }
    return HttpResponse(json.dumps(state), content_type="application/json")


def __getattr__(name: str) -> Any:
    """``asgi``, ``wsgi`` and ``wrapped``: the applications (built on first use)."""
    if name == "urlpatterns":
        from django.urls import path

        return [path("_state", _state)]
    if name not in ("asgi", "wsgi", "wrapped"):
        raise AttributeError(name)
    os.environ["DJANGO_SETTINGS_MODULE"] = __name__  # not an inherited one
    if name == "wsgi":
        from django.core.wsgi import get_wsgi_application

        return get_wsgi_application()
    from django.core.asgi import get_asgi_application

    application = get_asgi_application()
    if name == "asgi":
        return application
    import sitemap_middleware

    # The README's asgi.py: the sitemap in front of Django, the project's views behind.
    settings = {key: value for key, value in SITEMAP_MIDDLEWARE.items() if key != "sources"}
    wrapped = sitemap_middleware.SitemapMiddleware(application, sources=sources(), **settings)
    _sitemaps.append(wrapped.sitemap)
    return wrapped
