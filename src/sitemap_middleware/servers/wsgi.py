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
from ..core.sites import ServesSites, Sites, configure, purge_served, sitemaps_of
from ..settings import AdapterOptions, Settings
from ..state.purges import Purger
from .resolving import find
from .sync_effects import SyncEffectRunner, SyncTransferChunks
from .types import Environ, ExcInfo, StartResponse, WSGIApp, close_iterable
from .wsgi_robots import read_rules, robots_txt

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


class SitemapWSGIMiddleware(ServesSites):
    """Serves the sitemap in front of any WSGI application.

    The same keyword settings as :class:`~sitemap_middleware.SitemapMiddleware`.
    ``mode="intercept"`` (default): requests for the sitemap never reach the
    app. ``mode="fallback"``: the app answers first; only its 404 is replaced
    by the sitemap (its 404 body is dropped), so a real ``sitemap.xml`` wins.

    ``sites=`` instead of ``sources=`` and ``base_url=``: a sitemap per host (see
    :class:`~sitemap_middleware.SiteConfig`).
    """

    def __init__(
        self,
        app: WSGIApp | None,
        /,
        *,
        sources: object = None,
        sites: object = None,
        purger: Purger | None = None,
        **settings: Unpack[AdapterOptions],
    ) -> None:
        self.app: WSGIApp = app if app is not None else _not_found_app
        self.served = configure(sources, sites, settings, purger)
        self.reads = SyncEffectRunner()
        """Performs the reads (async sources: on its own event loop, ``reads.loop``)."""

    @property
    def settings(self) -> Settings:
        """The settings (with ``sites=``: those shared by every site)."""
        return self.served.settings

    def recount(self) -> None:
        """Read the pages of every source kept current whole, now (see ``freshness``): after
        a bulk delete, say, rather than waiting for the next recount."""
        for sitemap in sitemaps_of(self.served):
            for live in sitemap.current_pages.values():
                while not live.claim_recount():
                    time.sleep(0.01)  # a refresh is running: it ends soon
                run_effects(sitemap.keep_current(live), self.reads.perform)

    def purge(self, source: str | None = None, *, host: str | None = None) -> list[str]:
        """Purge the documents of one source (the root included), or every document, from
        the CDN, through the ``purger``: after a bulk write, say. With ``sites=``, those of
        the site of ``host`` (every site's, with none). Returns the surrogate keys queued at
        once (a ``ValueError`` for a source it does not serve); the purge runs in the
        background, retried when it fails."""
        return purge_served(self.served, source, host)

    def close(self, grace: float = 10.0) -> None:
        """Let a job of pages kept current that runs in the background end (for at most
        ``grace`` seconds: its connection goes back to the pool), and the purges queued go
        out, then stop the background event loop of async sources, if one was started."""
        for sitemap in sitemaps_of(self.served):
            for live in sitemap.current_pages.values():
                live.idle.wait(grace)
        if self.served.purges is not None:
            self.served.purges.close(grace)
        self.reads.close()

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if isinstance(self.served, Sites):
            return self._per_host(self.served, path, environ, start_response)
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

    def _per_host(
        self, sites: Sites, path: str, environ: Environ, start_response: StartResponse
    ) -> Iterable[bytes]:
        """A request with ``sites=``: the host's sitemap answers (or 400, 404, 503), the
        resolver asked only for a path of ours."""
        robots = sites.routes.match(path) is None
        if robots and not sites.wants_robots(path, str(environ.get("REQUEST_METHOD", ""))):
            return self.app(environ, start_response)
        if robots or sites.settings.mode == "intercept":
            return self._for_host(sites, path, robots, environ, start_response)
        return _Fallback(self, path, environ, start_response)

    def _for_host(
        self,
        sites: Sites,
        path: str,
        robots: bool,
        environ: Environ,
        start_response: StartResponse,
    ) -> Iterable[bytes]:
        request = request_from(environ)
        found = find(sites, request, self.reads.loop.call)
        if robots:
            if isinstance(found, Response):  # no site here: the app's robots.txt as it is
                return self.app(environ, start_response)
            return robots_txt(
                found,
                self.app,
                request,
                (environ, start_response),
                lambda outcome: _respond(start_response, outcome, request.method),
            )
        if isinstance(found, Response):
            return _respond(start_response, found, request.method)
        target = found.routes.match_claimed(path)
        return self.serve(target, environ, start_response, found)

    def serve(
        self,
        target: Target,
        environ: Environ,
        start_response: StartResponse,
        sitemap: Sitemap | None = None,
    ) -> Iterable[bytes]:
        """Answer a request for one of the sitemap's documents (``sitemap``: the host's,
        with ``sites=``)."""
        request = request_from(environ)
        sitemap = sitemap or self.sitemap
        if sitemap.robots_rules is not None:
            read_rules(sitemap, self.app, environ)
        outcome = run_effects(
            handle(sitemap, request, target, datetime.now(UTC)),
            self.reads.perform,
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
        target: Target | str,
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
        middleware, target = self._middleware, self._target
        if isinstance(target, str):  # with sites=: the route path, the host's sitemap found now
            sites = middleware.sites
            assert sites is not None
            body = middleware._for_host(sites, target, False, self._environ, self._start_response)
        else:
            body = middleware.serve(target, self._environ, self._start_response)
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
        self,
        *,
        sources: object = None,
        sites: object = None,
        purger: Purger | None = None,
        **settings: Unpack[AdapterOptions],
    ) -> None:
        super().__init__(None, sources=sources, sites=sites, purger=purger, **settings)
