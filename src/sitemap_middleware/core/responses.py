"""The short answers that carry no document: 400, 404, 405, 500 and 503.

Plain text, never cached (``no-store``): what they say is about this moment or
this request, not about the sitemap.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..settings import Settings
from ..sources.base import NotPageable
from .exchange import Request, Response

logger = logging.getLogger("sitemap_middleware")

ALLOWED_METHODS = ("GET", "HEAD")


def text(status: int, message: str, extra: Sequence[tuple[str, str]] = ()) -> Response:
    """A short plain-text answer."""
    body = (message + "\n").encode("ascii")
    headers = [
        ("content-type", "text/plain; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        *extra,
    ]
    return Response(status, headers, body)


def not_found() -> Response:
    return text(404, "Not Found")


def bad_host() -> Response:
    return text(400, "Bad Request: this host is not served")


def method_not_allowed(request: Request) -> Response | None:
    """A 405 listing the methods a sitemap answers, or None for one of them."""
    if request.method in ALLOWED_METHODS:
        return None
    return text(405, "Method Not Allowed", [("allow", ", ".join(ALLOWED_METHODS))])


class ServerErrors:
    """The 5xx answers (500, 503), with their ``Retry-After`` and their log lines."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        # Configuration errors already logged: each is said once.
        self._reported: set[str] = set()

    def unavailable(self) -> Response:
        """The data could not be read: try again later, and publish nothing."""
        return text(
            503,
            "Sitemap temporarily unavailable",
            [("retry-after", str(self._settings.headers.retry_after))],
        )

    def busy(self, path: str, running: int) -> Response:
        """Too many documents are being generated at once: try again shortly."""
        logger.warning(
            "sitemap %s: %d generations running, the most load.max_generations allows; "
            "answering 503",
            path,
            running,
        )
        return text(
            503,
            "Sitemap generation busy, retry later",
            [("retry-after", str(self._settings.load.retry_after))],
        )

    def too_large(self, error: Exception, path: str) -> Response:
        """A document the protocol's limits (or the source's keys) do not allow: a 500 whose
        log line says which (``path``: the document's)."""
        if isinstance(error, NotPageable):
            # The same every time until the configuration changes: said once.
            if str(error) not in self._reported:
                self._reported.add(str(error))
                logger.error("sitemap %s cannot be served: %s", path, error)
            return text(500, "Sitemap source cannot be split into pages")
        logger.error("sitemap %s cannot be served: %s", path, error)
        return text(500, "Sitemap exceeds the protocol limits")
