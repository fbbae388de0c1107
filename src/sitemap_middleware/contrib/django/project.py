"""The project's sitemap as the command line drives it: Django's own handlers, with the
middleware ``settings.MIDDLEWARE`` lists, or around them the one ``SITEMAP_MIDDLEWARE``
describes when the project wraps ``wsgi.py``/``asgi.py`` instead (same settings, same bytes).
"""

from __future__ import annotations

from typing import Any

from ...servers.asgi import SitemapMiddleware as ASGIMiddleware
from ...servers.wsgi import SitemapWSGIMiddleware
from .checks import installed_at
from .conf import configured


def wsgi_application() -> Any:
    """The project as a WSGI application serving its sitemap."""
    from django.core.handlers.wsgi import WSGIHandler

    if installed_at() is not None:
        return WSGIHandler()
    found = configured()
    return SitemapWSGIMiddleware(
        WSGIHandler(), **_arguments(found.sources, found.options, found.sites)
    )


def asgi_application() -> Any:
    """The project as an ASGI application serving its sitemap."""
    from django.core.handlers.asgi import ASGIHandler

    if installed_at() is not None:
        return ASGIHandler()
    found = configured()
    return ASGIMiddleware(ASGIHandler(), **_arguments(found.sources, found.options, found.sites))


def root_url() -> str:
    """The public URL of the root sitemap ``SITEMAP_MIDDLEWARE`` describes."""
    settings = configured().settings
    return settings.site.url_for(settings.path)


def _arguments(sources: object, options: dict[str, Any], sites: object = None) -> dict[str, Any]:
    if sites is not None:
        return {"sites": sites, **options}
    return {"sources": sources, **options}
