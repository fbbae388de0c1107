"""WSGI adapter (PEP 3333): the same sitemap, options and answers for Flask, Django and friends.

It decides nothing itself: it routes, runs the handler with its reads
(:mod:`.sync_effects`), and turns the events of the answer (:mod:`..core.sending`) into
``start_response`` and the bytes of a lazy iterable. Rows are read as the server
iterates it, an aborted transfer raises out of the iterable so the server cuts
it short, and ``close()`` releases the rows and the database connection however
the iteration ends (client gone included). Async sources run on one event loop
in a background thread (:class:`.sync_effects.SyncEffectRunner`), stopped by :meth:`close`.
``/robots.txt`` is :mod:`.wsgi_robots`'s.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TypeVar, Unpack

from ..core.handler import Transfer, handle, run_effects
from ..core.routing import Target
from ..core.sending import Chunk, End, Event, Start, drive, response_events, transfer_events
from ..core.sitemap import Request, Response, Sitemap
from ..settings import Options, make_settings
from ..state.bad_rows import BadRowStats
from ..state.purges import Purger
from .sync_effects import SyncEffectRunner, SyncTransferChunks
from .types import Environ, ExcInfo, StartResponse, WSGIApp, close_iterable
from .wsgi_robots import robots_txt

T = TypeVar("T")


def request_from(environ: Environ) -> Request:
    """The core's request: the method and the header lines (a server joins repeated lines)."""
    headers = {
        key[5:].replace("_", "-").lower(): [value]
        for key, value in environ.items()
        if key[:5] == "HTTP_" and isinstance(value, str)
    }
    protocol = str(environ.get("SERVER_PROTOCOL", "HTTP/1.1"))
    version = "1.0" if protocol.upper() == "HTTP/1.0" else "1.1"
    return Request(str(environ.get("REQUEST_METHOD", "GET")), headers, version)


@functools.cache
def status_line(status: int) -> str:
    return f"{status} {HTTPStatus(status).phrase}"


def _respond(start_response: StartResponse, response: Response, method: str) -> list[bytes]:
    return [
        data for event in response_events(response, method) for data in _emit(start_response, event)
    ]


def _not_found_app(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
    start_response(status_line(404), [("content-type", "text/plain"), ("content-length", "0")])
    return []


class SitemapWSGIMiddleware:
    """Serves the sitemap in front of any WSGI application.

    The same keyword settings as :class:`~sitemap_middleware.SitemapMiddleware`.
    ``mode="intercept"`` (default): requests for the sitemap never reach the
    app. ``mode="fallback"``: the app answers first; only its 404 is replaced
    by the sitemap (its 404 body is dropped), so a real ``sitemap.xml`` wins.
    """

    def __init__(
        self,
        app: WSGIApp | None,
        /,
        *,
        sources: object,
        purger: Purger | None = None,
        **settings: Unpack[Options],
    ) -> None:
        self.app: WSGIApp = app if app is not None else _not_found_app
        self.sitemap = Sitemap(sources, make_settings(settings), purger)
        self.reads = SyncEffectRunner()
        """Performs the reads (async sources: on its own event loop, ``reads.loop``)."""

    @property
    def stats(self) -> dict[str, BadRowStats]:
        """Bad rows per source, counted since start."""
        return self.sitemap.rules.stats

    def recount(self) -> None:
        """Read the pages of every source kept current whole, now (see ``freshness``): after
        a bulk delete, say, rather than waiting for the next recount."""
        for live in self.sitemap.current_pages.values():
            while not live.claim_recount():
                time.sleep(0.01)  # a refresh is running: it ends soon
            run_effects(self.sitemap.keep_current(live), self.reads.perform)

    def purge(self, source: str | None = None) -> list[str]:
        """Purge the documents of one source (the root included), or every document, from
        the CDN, through the ``purger``: after a bulk write, say. Returns the surrogate keys
        queued at once (a ``ValueError`` for a source it does not serve); the purge runs in
        the background, retried when it fails."""
        return self.sitemap.purge(source)

    def close(self, grace: float = 10.0) -> None:
        """Let a job of pages kept current that runs in the background end (for at most
        ``grace`` seconds: its connection goes back to the pool), and the purges queued go
        out, then stop the background event loop of async sources, if one was started."""
        for live in self.sitemap.current_pages.values():
            live.idle.wait(grace)
        if self.sitemap.purges is not None:
            self.sitemap.purges.close(grace)
        self.reads.close()

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        target = self.sitemap.routes.match(path)
        if target is None:
            if self.sitemap.wants_robots(path, str(environ.get("REQUEST_METHOD", ""))):
                request = request_from(environ)
                return robots_txt(
                    self.sitemap,
                    self.app,
                    request,
                    (environ, start_response),
                    lambda outcome: _respond(start_response, outcome, request.method),
                )
            return self.app(environ, start_response)
        if self.sitemap.settings.mode == "fallback":
            return _Fallback(self, target, environ, start_response)
        return self.serve(target, environ, start_response)

    def serve(
        self, target: Target, environ: Environ, start_response: StartResponse
    ) -> Iterable[bytes]:
        """Answer a request for one of the sitemap's documents."""
        request = request_from(environ)
        outcome = run_effects(
            handle(self.sitemap, request, target, datetime.now(UTC)), self.reads.perform
        )
        if isinstance(outcome, Response):
            return _respond(start_response, outcome, request.method)
        return _Body(self.reads, outcome, start_response)


class _Body:
    """The lazy body of a ``urlset``; the status line goes out with its first chunk."""

    def __init__(
        self, reads: SyncEffectRunner, transfer: Transfer, start_response: StartResponse
    ) -> None:
        self._transfer = transfer
        self._chunks = self._generate(reads.transfer_chunks(transfer), start_response)

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def _generate(
        self, parts: SyncTransferChunks, start_response: StartResponse
    ) -> Generator[bytes, None, None]:
        try:
            for event in drive(transfer_events(self._transfer), parts.next):
                yield from _emit(start_response, event)
        finally:
            parts.close()

    def close(self) -> None:
        """Release the rows (the server calls this however the iteration ended)."""
        try:
            self._chunks.close()
        finally:
            self._transfer.close()


def _emit(start_response: StartResponse, event: Event) -> Iterator[bytes]:
    """An event as WSGI: ``start_response`` for the status line, bytes for the body."""
    if isinstance(event, Start):
        start_response(status_line(event.response.status), list(event.response.headers))
    elif isinstance(event, Chunk | End):
        if event.data:
            yield event.data
    else:
        raise event.error


class _Fallback:
    """``mode="fallback"``: the app's answer, unless it is a 404, then the sitemap's.

    The app may call ``start_response`` only while its iterable is first
    iterated (PEP 3333), so the decision waits for the app's first chunk; the
    wrapper is returned at once and forwards ``close()`` to whatever it wraps.
    """

    def __init__(
        self,
        middleware: SitemapWSGIMiddleware,
        target: Target,
        environ: Environ,
        start_response: StartResponse,
    ) -> None:
        self._middleware = middleware
        self._target = target
        self._environ = environ
        self._start_response = start_response
        self._captured: tuple[str, list[tuple[str, str]], ExcInfo | None] | None = None
        self._committed = False
        self._write: Callable[[bytes], object] | None = None
        self._inner: Iterable[bytes] | None = None
        self._chunks = self._generate()

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def _capture(
        self, status: str, headers: list[tuple[str, str]], exc_info: ExcInfo | None = None
    ) -> Callable[[bytes], object]:
        if self._committed and exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])  # type: ignore[union-attr]
        self._captured = (status, headers, exc_info)
        return self._write_through

    def _is_404(self) -> bool:
        return self._captured is not None and self._captured[0].startswith("404")

    def _commit(self) -> None:
        if not self._committed and self._captured is not None:
            self._committed = True
            self._write = self._start_response(*self._captured)

    def _write_through(self, data: bytes) -> None:
        # The legacy write() callable: the app's 404 body is dropped, anything else passes.
        if self._is_404():
            return
        self._commit()
        if self._write is not None:
            self._write(data)

    def _generate(self) -> Generator[bytes, None, None]:
        self._inner = self._middleware.app(self._environ, self._capture)
        inner = iter(self._inner)
        first = b""
        for chunk in inner:  # until the app has chosen its status (or sent a byte)
            if chunk or self._captured is not None:
                first = chunk
                break
        if self._is_404():
            self._close_inner()
            yield from self._serve()
            return
        self._commit()
        if first:
            yield first
        yield from inner

    def _serve(self) -> Generator[bytes, None, None]:
        body = self._middleware.serve(self._target, self._environ, self._start_response)
        self._inner = body
        yield from body

    def _close_inner(self) -> None:
        inner, self._inner = self._inner, None
        close_iterable(inner)

    def close(self) -> None:
        try:
            self._chunks.close()
        finally:
            self._close_inner()


class SitemapWSGIApp(SitemapWSGIMiddleware):
    """The sitemap as a standalone WSGI app (404 for every other path)."""

    def __init__(
        self, *, sources: object, purger: Purger | None = None, **settings: Unpack[Options]
    ) -> None:
        super().__init__(None, sources=sources, purger=purger, **settings)
