"""``check --app MODULE:ATTR URL``: check an application in-process, with no server.

An httpx transport hands each request of ``check`` (the sitemaps, the
conditional probes, the audit's pages, any method) to the application
through the in-process clients ``render`` uses (:mod:`sitemap_middleware.testing`; an
ASGI application's lifespan run around the whole check), with the URL's
host in ``Host``. The answer comes back as sent, ``Content-Encoding`` and all,
with the ``Date`` a server would add (:class:`ServerDate`). A response the
application does not complete (it raised, or a source failed mid-stream) is a
broken transfer to ``check``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from ..core.http import format_http_date
from ..testing import ASGIClient, Fetch, ResponseFailed, WSGIClient, with_lifespan
from .check import CheckOptions, Report, run_check
from .loader import host_root_url, import_attribute, resolve_app


class InProcessTransport(httpx.AsyncBaseTransport):
    def __init__(self, fetch: Fetch) -> None:
        self.fetch = fetch

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        body = bytearray()
        try:
            head = await self.fetch(
                request.url.raw_path.decode("ascii"), headers, body.extend, request.method
            )
        except ResponseFailed as exc:
            if exc.head is None:
                raise httpx.RemoteProtocolError(str(exc), request=request) from exc
            # The response started, then broke off: its body ends in an error, as a
            # broken transfer does over HTTP.
            stream: httpx.AsyncByteStream = _Broken(bytes(body), str(exc))
            return httpx.Response(exc.head.status, headers=exc.head.headers, stream=stream)
        # A stream, not content=: httpx would add a Content-Length the application never sent.
        return httpx.Response(
            head.status, headers=head.headers, stream=httpx.ByteStream(bytes(body))
        )


class ServerDate(httpx.AsyncBaseTransport):
    """An in-process transport that adds ``Date`` as a server does when the application
    writes none (waitress, wsgiref; uvicorn, hypercorn and gunicorn write theirs always).

    The middleware leaves ``Date`` to the server, so checking an application without one
    would find none; a ``Date`` the application writes itself is kept, repeats and all.
    It is the clock when the request arrived, as uvicorn's and waitress's are."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        arrived = datetime.now(UTC)
        response = await self.inner.handle_async_request(request)
        if "date" not in response.headers:
            response.headers["date"] = format_http_date(arrived)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Broken(httpx.AsyncByteStream):
    def __init__(self, body: bytes, failure: str) -> None:
        self.body = body
        self.failure = failure

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.body:
            yield self.body
        raise httpx.RemoteProtocolError(self.failure)


async def run_app_check(
    options: CheckOptions, app: str, app_dir: str = ".", host: str | None = None
) -> Report:
    """Check ``options.url`` as the application ``app`` (MODULE:ATTR) answers it in-process.
    With ``host`` (an application given ``sites=``): that host's sitemap, its root when
    ``options.url`` is None. Raises :class:`~.loader.LoadError` or
    :class:`~sitemap_middleware.testing.StartupFailed`."""
    loaded = await resolve_app(import_attribute(app, app_dir))

    async def check(client_for: Callable[[str], Fetch]) -> Report:
        # After startup: Starlette builds its middleware stack then, and the sites with it.
        if host is not None:
            options.url = await host_root_url(loaded.app, host, options.url or None)
        parts = urlsplit(options.url)
        fetch = client_for(f"{parts.scheme}://{parts.netloc}/")
        return await run_check(options, ServerDate(InProcessTransport(fetch)))

    if loaded.interface == "wsgi":
        return await check(lambda origin: WSGIClient(loaded.app, origin).fetch)

    async def work(started: ASGIClient) -> Report:
        def client_for(origin: str) -> Fetch:
            client = ASGIClient(loaded.app, origin)
            client.state = started.state  # what the lifespan's startup left for requests
            return client.fetch

        return await check(client_for)

    return await with_lifespan(loaded.app, "http://localhost/", work)
