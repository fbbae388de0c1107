"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted,
a middleware for ``settings.MIDDLEWARE`` and the ``sitemap_render``/``sitemap_check``
commands (add ``"sitemap_middleware.contrib.django"`` to ``INSTALLED_APPS``).

Needs the ``django`` extra; ``DjangoSource`` also needs SQLAlchemy, which compiles its
statements (the ``sqlalchemy`` extra), and is imported on first use: adopted ``Sitemap``
classes, the middleware and the commands work without it.
"""

from typing import TYPE_CHECKING

from ...errors import MissingExtra

try:
    from .adopted import DjangoSitemapSource, django_sitemap_sources
    from .middleware import SitemapMiddleware
    from .sites import sites_from_django
except ModuleNotFoundError as exc:
    raise MissingExtra.of(exc, "sitemap_middleware.contrib.django", "django") from exc

if TYPE_CHECKING:
    from .sources import AsyncDjangoSource, DjangoSource

__all__ = [
    "AsyncDjangoSource",
    "DjangoSitemapSource",
    "DjangoSource",
    "SitemapMiddleware",
    "django_sitemap_sources",
    "sites_from_django",
]


def __getattr__(name: str) -> object:
    # DjangoSource needs SQLAlchemy (an extra of its own): imported only when asked for.
    if name in ("DjangoSource", "AsyncDjangoSource"):
        from . import sources

        return getattr(sources, name)
    raise AttributeError(f"module 'sitemap_middleware.contrib.django' has no attribute {name!r}")
