"""The I/O of ``sites=``: a request's sitemap, the resolver called when the core asks.

:meth:`.core.sites.Sites.find` decides; these only call the resolver under
``tenants.timeout`` and hand its answer (or its failure) back to the core. Under an async
server a sync resolver runs in a worker thread and an async one is awaited; under a sync
server a sync resolver runs in the request's thread (where Django's connection is) and an
async one on the loop thread of the async sources. A sync call cannot be interrupted: one
that took longer than the timeout has its answer discarded (a 503), as one cut short.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.exchange import Request, Response
from ..core.sitemap import Sitemap
from ..core.sites import Resolve, Sites
from ..core.urls import normalize_host
from ..settings import SiteConfig


class ResolverTimeout(TimeoutError):
    """The resolver took longer than ``tenants.timeout``."""


def find(
    sites: Sites, request: Request, run_async: Callable[[Callable[[], Awaitable[Any]]], Any]
) -> Sitemap | Response:
    """The request's sitemap, or the answer without one; ``run_async`` runs an async
    resolver's coroutine (on the async sources' loop) and waits for it."""
    found = sites.find(request)
    if not isinstance(found, Resolve):
        return found
    resolver = sites.resolver
    assert resolver is not None
    timeout = sites.settings.tenants.timeout
    started = time.monotonic()
    try:
        answer: Any = resolver(found.host)
        if inspect.isawaitable(answer):
            awaitable = answer

            async def wait() -> Any:
                return await asyncio.wait_for(_awaited(awaitable), timeout)

            answer = run_async(wait)
        elif time.monotonic() - started > timeout:
            raise ResolverTimeout(f"answered after {time.monotonic() - started:.3f}s")
    except Exception as error:
        return sites.failed(found.host, _named(error, timeout))
    return sites.resolved(found.host, answer)


async def afind(
    sites: Sites,
    request: Request,
    in_thread: Callable[[Callable[[str], Any], str], Awaitable[Any]] = asyncio.to_thread,
) -> Sitemap | Response:
    """:func:`find` with awaits: a sync resolver in a worker thread (``in_thread``: Django's
    thread for sync work), an async one awaited."""
    found = sites.find(request)
    if not isinstance(found, Resolve):
        return found
    resolver = sites.resolver
    assert resolver is not None
    timeout = sites.settings.tenants.timeout
    try:
        if sites.is_async:
            answer = await asyncio.wait_for(_awaited(resolver(found.host)), timeout)
        else:
            answer = await asyncio.wait_for(in_thread(resolver, found.host), timeout)
            if inspect.isawaitable(answer):
                answer = await asyncio.wait_for(_awaited(answer), timeout)
    except Exception as error:
        return sites.failed(found.host, _named(error, timeout))
    return sites.resolved(found.host, answer)


async def _awaited(value: object) -> Any:
    return await value if inspect.isawaitable(value) else value


def _named(error: Exception, timeout: float) -> Exception:
    if isinstance(error, TimeoutError) and not isinstance(error, ResolverTimeout):
        return ResolverTimeout(f"no answer within tenants.timeout={timeout:g}s")
    return error


async def site_config(sites: Sites, host: str) -> SiteConfig | None:
    """The site of ``host`` outside a request (the CLI's ``--host``, IndexNow's pushers): a
    mapping's, or the resolver's answer as a request would get it (a sync resolver in a
    worker thread, under ``tenants.timeout``); None when there is none. Raises
    ``ValueError`` for a host that is not one and for an answer that is not that host's
    site, :class:`ResolverTimeout` for a resolver that took too long."""
    normal = normalize_host(host, "https")
    if normal is None:
        raise ValueError(f"{host!r} is not a host name such as 'shop.example.com'")
    configs = sites.configs
    if configs is not None:
        return configs.get(normal) or configs.get(normal.removesuffix(":80"))
    resolver = sites.resolver
    assert resolver is not None
    timeout = sites.settings.tenants.timeout

    async def ask() -> Any:
        if sites.is_async:
            return await _awaited(resolver(normal))
        return await _awaited(await asyncio.to_thread(resolver, normal))

    try:
        answer = await asyncio.wait_for(ask(), timeout)
    except TimeoutError as error:
        raise _named(error, timeout) from error
    if answer is None:
        return None
    if not isinstance(answer, SiteConfig) or answer.host not in (
        normal,
        normal.removesuffix(":80"),
    ):
        raise ValueError(f"the sites resolver gave {answer!r} for {normal!r}")
    return answer
