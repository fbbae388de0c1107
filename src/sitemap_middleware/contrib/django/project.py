"""The project's sitemap as the command line drives it: Django's own handlers, with the
middleware ``settings.MIDDLEWARE`` lists, or around them the one ``SITEMAP_MIDDLEWARE``
describes when the project wraps ``wsgi.py``/``asgi.py`` instead (same settings, same bytes).
"""

from __future__ import annotations

from typing import Any

from ...cli.loader import LoadError, host_root_url
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
    """The public URL of the root sitemap ``SITEMAP_MIDDLEWARE`` describes; a
    :class:`~...cli.loader.LoadError` with ``'sites'``, whose sitemaps are per host."""
    found = configured()
    if found.sites is not None:
        raise LoadError(
            "--host: SITEMAP_MIDDLEWARE gives a sitemap per host ('sites'); name the host "
            "whose sitemap to check, e.g. --host shop.example.com"
        )
    return found.settings.site.url_for(found.settings.path)


def host_url(application: Any, host: str) -> str:
    """The public URL of the root sitemap of ``host``'s site in ``application`` (the
    resolver asked as a request would ask it); a :class:`~...cli.loader.LoadError` when
    it has no site for that host."""
    import anyio

    return anyio.run(host_root_url, application, host)


def _arguments(sources: object, options: dict[str, Any], sites: object = None) -> dict[str, Any]:
    if sites is not None:
        return {"sites": sites, **options}
    return {"sources": sources, **options}
