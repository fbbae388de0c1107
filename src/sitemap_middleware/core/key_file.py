"""The IndexNow key file: the proof that the site owns the key it submits URLs with.

Engines fetch it (at ``/{key}.txt``, or at ``indexnow.key_location``, named in every
submission as ``keyLocation``) and compare its content with the key. It is answered
like the documents: ``text/plain; charset=utf-8``, an entity tag made from the key,
conditional requests (``304``), HEAD without body. At ``/{key}.txt`` the content is
fixed by the URL itself, so its ``Last-Modified`` is a fixed date; at a location of the
application's choosing the key may change under the same URL and only the entity tag,
which follows the key, is sent.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..settings import Settings
from .exchange import Request, Response
from .http import evaluate_preconditions, format_http_date
from .validators import make_etag

CONTENT_TYPE = "text/plain; charset=utf-8"
FIXED_SINCE = datetime(2000, 1, 1, tzinfo=UTC)
"""The ``Last-Modified`` of a key file whose URL names its key: it never changes."""


def key_file_response(settings: Settings, request: Request) -> Response:
    """The key file's answer to a GET or HEAD (the handler refused other methods)."""
    assert settings.indexnow is not None, "routed only with a key"
    key = settings.indexnow.key
    body = key.encode("ascii")
    # A strong tag: one representation, the same bytes on every replica.
    etag = make_etag(["indexnow-key", key]).removeprefix("W/")
    modified = FIXED_SINCE if settings.indexnow.key_location is None else None
    headers = [("etag", etag)]  # the Date is the server's (see validators.DATE_LAG)
    if modified is not None:
        headers.append(("last-modified", format_http_date(modified)))
    if settings.headers.cache_control is not None:
        headers.append(("cache-control", settings.headers.cache_control))
    if settings.headers.x_robots_tag is not None:
        headers.append(("x-robots-tag", settings.headers.x_robots_tag))
    status = evaluate_preconditions(request.method, dict(request.headers), etag, modified)
    if status != 200:
        return Response(status, headers)
    content = [("content-type", CONTENT_TYPE), ("content-length", str(len(body)))]
    return Response(200, [*content, *headers], body)
