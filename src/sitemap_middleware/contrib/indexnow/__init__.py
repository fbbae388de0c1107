"""IndexNow: push the URLs of the rows that changed, as they change.

Configure the middleware with ``indexnow.key`` (and optionally
``indexnow.key_location``, ``indexnow.endpoint``): it serves the key file. Install the
watermark tables once per database (:func:`install`), then push with
``sitemap-middleware indexnow --app MODULE:ATTR``, with ``indexnow.every`` (a task in
the ASGI lifespan), or from code with :class:`IndexNow`. Deleted rows have no lastmod
to be found by: :func:`queue_urls` queues their URLs in the application's transaction.
"""

from ...errors import MissingExtra

try:  # HTTP through httpx; the watermarks in SQLAlchemy tables
    from .answers import Backoff
    from .pusher import IndexNow, Round
    from .steps import Report
    from .store import install, queue_urls
except ModuleNotFoundError as exc:
    raise MissingExtra.of(exc, "IndexNow", "indexnow") from exc

__all__ = ["Backoff", "IndexNow", "Report", "Round", "install", "queue_urls"]
