"""The library's log records on a command's stderr, once each, whatever the application
does with logging while it loads.

A command starts before the application it loads, and the application may configure
logging as it loads or starts (``logging.basicConfig``, ``dictConfig``, Django's
``LOGGING``): a handler of the command's own, chosen once at the start, would then
write each record a second time beside the application's, or be silenced with the
library's logger by ``dictConfig``'s ``disable_existing_loggers``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

LOGGER = "sitemap_middleware"


class FallbackHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes a record only when no other handler receives it: the application's, once it
    has configured logging, takes over."""

    def emit(self, record: logging.LogRecord) -> None:
        if not _handled_elsewhere(logging.getLogger(record.name), self):
            super().emit(record)


def _handled_elsewhere(logger: logging.Logger, mine: logging.Handler) -> bool:
    """Whether a handler other than ``mine`` is on the way a record of ``logger`` takes
    (``Logger.callHandlers``: up the hierarchy until a logger does not propagate)."""
    current: logging.Logger | None = logger
    while current is not None:
        if any(handler is not mine for handler in current.handlers):
            return True
        if not current.propagate:
            return False
        current = current.parent
    return False


@contextmanager
def library_logging(stream: TextIO) -> Iterator[None]:
    """The library's records on ``stream`` for the command's duration, unless the
    application's logging handles them."""
    logger = logging.getLogger(LOGGER)
    handler = FallbackHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def after_startup() -> None:
    """Once the application is loaded and started: ``dictConfig`` disables the loggers that
    exist when it runs unless told otherwise, and the library's exists early here (the
    command imported it), where in a server the application's configuration usually comes
    first. Its records are kept, as the application's server would keep them."""
    logging.getLogger(LOGGER).disabled = False
