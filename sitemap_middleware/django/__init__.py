"""Django integration: QuerySets as sources, ``django.contrib.sitemaps`` classes adopted."""

from .sources import DjangoSource

__all__ = ["DjangoSource"]
