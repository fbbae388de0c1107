"""The ``sitemap-middleware`` command line: ``check`` a live sitemap, ``render`` static files.

``check`` needs the ``cli`` extra (httpx, lxml, protego): ``pip install 'sitemap_middleware[cli]'``.
"""

from .main import main

__all__ = ["main"]
