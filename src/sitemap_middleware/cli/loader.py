"""``--app MODULE:ATTR``: find the application, tell ASGI from WSGI, and find the sitemaps
configured in it.

``ATTR`` (dotted for nested attributes) may name:

* an ASGI application: a Starlette or FastAPI app with ``SitemapMiddleware``
  added, a ``SitemapMiddleware`` or ``SitemapApp`` instance, any ASGI callable;
* a WSGI application: a Flask app whose ``wsgi_app`` is wrapped in
  ``SitemapWSGIMiddleware``, a ``SitemapWSGIMiddleware`` (around Django's
  ``get_wsgi_application()``, say) or ``SitemapWSGIApp`` instance, any WSGI
  callable;
* a function taking no arguments that returns one of those (a factory, sync or
  async); it is recognised by its signature, or forced with ``--factory``.

The interface is told by the object (:func:`interface`): our own middleware
classes by their type, others by their call signature: a coroutine function
or three parameters ``(scope, receive, send)`` is ASGI, two parameters
``(environ, start_response)`` is WSGI; anything else needs ``--asgi`` or
``--wsgi``.

The sitemaps are found by walking the application: its built middleware stack
(``.middleware_stack`` / ``.app``), Starlette's ``user_middleware`` entries
and ``Mount`` routes, Flask's ``wsgi_app`` and werkzeug's
``DispatcherMiddleware`` mounts, so ``render`` knows each sitemap's path and
base URL.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast
from urllib.parse import urlsplit

from ..core.sitemap import Sitemap
from ..core.sites import Sites
from ..core.urls import Site
from ..servers.asgi import SitemapMiddleware
from ..servers.resolving import site_config
from ..servers.wsgi import SitemapWSGIMiddleware
from ..settings import ConfigurationError, Settings, make_settings

Interface = Literal["asgi", "wsgi"]


class LoadError(ValueError):
    """The application cannot be loaded; the message says why."""


@dataclass(frozen=True)
class Mounted:
    """A sitemap found in the application: its settings and the mount path in front of it."""

    prefix: str
    settings: Settings

    @property
    def path(self) -> str:
        """The root document's path in the application."""
        return self.prefix + self.settings.path


def import_attribute(spec: str, app_dir: str) -> object:
    module_name, colon, attributes = spec.partition(":")
    if not colon or not module_name or not attributes:
        raise LoadError(f"--app must be MODULE:ATTRIBUTE such as 'mysite.main:app', got {spec!r}")
    if app_dir not in sys.path:
        sys.path.insert(0, app_dir)
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as exc:
        if exc.name == module_name:
            raise LoadError(f"--app: cannot import module {module_name!r} from {app_dir}") from None
        raise LoadError(f"--app: importing {module_name!r} failed: {exc}") from exc
    for attribute in attributes.split("."):
        try:
            target = getattr(target, attribute)
        except AttributeError:
            raise LoadError(f"--app: {module_name!r} has no attribute {attributes!r}") from None
    return target


def is_factory(target: object) -> bool:
    """A plain function callable with no arguments (an ASGI application takes three, a WSGI
    application two)."""
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        return False
    parameters = inspect.signature(target).parameters.values()
    # (*args, **kwargs) is how wrappers around an application look: not a factory unless
    # --factory says so.
    return all(
        p.default is not inspect.Parameter.empty or p.kind == inspect.Parameter.VAR_KEYWORD
        for p in parameters
    )


@dataclass(frozen=True)
class Loaded:
    """The application to drive, and how."""

    app: Any
    interface: Interface


async def resolve_app(
    target: object, factory: bool | None = None, forced: Interface | None = None
) -> Loaded:
    """The application ``target`` is (or makes, when it is a factory), and its interface."""
    if factory or (factory is None and is_factory(target)):
        if not callable(target):
            raise LoadError("--factory: the attribute is not callable")
        try:
            target = target()
            if inspect.isawaitable(target):
                target = await target
        except ConfigurationError as exc:
            raise LoadError(f"--app: the factory's sitemap configuration is wrong: {exc}") from exc
        except Exception as exc:
            raise LoadError(f"--app: the factory raised {type(exc).__name__}: {exc}") from exc
    if not callable(target):
        raise LoadError(f"--app names a {type(target).__name__}, not an ASGI or WSGI application")
    kind = forced or interface(target)
    if kind is None:
        raise LoadError(
            f"--app: cannot tell whether the {type(target).__name__} is an ASGI application "
            "(scope, receive, send) or a WSGI one (environ, start_response); pass --asgi or "
            "--wsgi"
        )
    return Loaded(target, kind)


def interface(app: object) -> Interface | None:
    """``asgi`` or ``wsgi`` from the object itself; None when it does not say."""
    if isinstance(app, SitemapWSGIMiddleware):
        return "wsgi"
    if isinstance(app, SitemapMiddleware):
        return "asgi"
    call = getattr(app, "__call__", None)  # noqa: B004 - the method itself is wanted
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
        return "asgi"
    try:
        parameters = list(inspect.signature(app).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None  # (*args): a wrapper that does not say
    required = [p for p in parameters if p.kind in positional and p.default is p.empty]
    return {2: "wsgi", 3: "asgi"}.get(len(required))  # type: ignore[return-value]


def find_sitemaps(app: object) -> list[Mounted]:
    """Every sitemap middleware configured in ``app``, in the order found, one per path."""
    found: dict[str, Mounted] = {}
    for node, prefix in _walk(app):
        sitemap = getattr(node, "sitemap", None)  # the adapters, Django's middleware too
        if isinstance(sitemap, Sitemap):
            mounted = Mounted(prefix, sitemap.settings)
            found.setdefault(mounted.path, mounted)
        for entry in getattr(node, "user_middleware", None) or ():
            settings = _declared(entry)
            if settings is not None:
                mounted = Mounted(prefix, settings)
                found.setdefault(mounted.path, mounted)
    return list(found.values())


def sites_of(app: object) -> list[tuple[str, Sites]]:
    """Every built middleware of ``app`` given ``sites=`` (its sites), with its mount path."""
    return [
        (prefix, sites)
        for node, prefix in _walk(app)
        if isinstance(sites := getattr(node, "sites", None), Sites)
    ]


def sites_middlewares(app: object) -> list[object]:
    """Every built middleware of ``app`` given ``sites=`` (each holds its ``sites``)."""
    return [node for node, _ in _walk(app) if isinstance(getattr(node, "sites", None), Sites)]


async def sites_mounted(app: object, host: str) -> list[Mounted]:
    """The sitemaps ``host`` gets from the middlewares of ``app`` given ``sites=`` (the
    resolver asked as a request would ask it: a sync one in a worker thread)."""
    found = []
    for prefix, sites in sites_of(app):
        try:
            config = await site_config(sites, host)
        except ValueError as error:
            raise LoadError(f"--host: {error}") from None
        if config is not None:
            found.append(Mounted(prefix, config.settings(sites.settings)))
    return found


async def host_sitemaps(app: object, host: str) -> list[Mounted]:
    """``--host``: the sitemaps ``host`` gets from the middlewares of ``app`` given ``sites=``;
    :class:`LoadError` when the application has none or none has a site for ``host``."""
    if not sites_of(app):
        raise LoadError("--host: the application has no middleware given sites=")
    found = await sites_mounted(app, host)
    if not found:
        raise LoadError(f"--host: no site for {host!r}")
    return found


async def host_root_url(app: object, host: str, url: str | None = None) -> str:
    """``--host``: the public URL of the root sitemap ``host`` gets from ``app`` (the first
    middleware given ``sites=`` that has a site for it); with ``url``, that URL once it is
    on that host."""
    found = await host_sitemaps(app, host)
    if url is None:
        settings = found[0].settings
        return settings.site.url_for(settings.path)
    parts = urlsplit(url)
    try:
        origin = Site.build(f"{parts.scheme}://{parts.netloc}/", "/sitemap.xml").origin
    except ValueError:
        origin = None
    if origin not in {mounted.settings.site.origin for mounted in found}:
        raise LoadError(f"--host: {url} is not on the site of {host!r}; leave URL out")
    return url


class SitemapHolder(Protocol):
    """A built adapter of the core: it holds the ``Sitemap`` it serves."""

    sitemap: Sitemap


def sitemap_holders(app: object) -> list[SitemapHolder]:
    """Every built middleware of ``app`` that holds a ``Sitemap`` (ASGI, WSGI or any other
    adapter of the core), in the order found."""
    return [
        cast(SitemapHolder, node)
        for node, _ in _walk(app)
        if isinstance(getattr(node, "sitemap", None), Sitemap)
    ]


def wsgi_middlewares(app: object) -> list[SitemapWSGIMiddleware]:
    """Every ``SitemapWSGIMiddleware`` in ``app`` (each may run a loop for async sources)."""
    return [node for node, _ in _walk(app) if isinstance(node, SitemapWSGIMiddleware)]


def nodes(app: object) -> list[object]:
    """Every object of the application's stack, outermost first."""
    return [node for node, _ in _walk(app)]


def _walk(app: object) -> Iterator[tuple[object, str]]:
    """Every object of the application's stack, with the mount path in front of it."""
    # Held, not just their ids: a bound method made by getattr is gone once dropped, and
    # another object could then take its id.
    seen: dict[int, object] = {}
    pending: list[tuple[object, str, int]] = [(app, "", 0)]
    while pending:
        node, prefix, depth = pending.pop()
        if node is None or id(node) in seen or depth > 100:
            continue
        seen[id(node)] = node
        yield node, prefix
        inner: list[tuple[object, str]] = [
            (getattr(node, "middleware_stack", None), prefix),
            (getattr(node, "app", None), prefix),
            (getattr(node, "wsgi_app", None), prefix),  # Flask
            # Django's handlers: the middleware chain, each link wrapped by Django.
            (getattr(node, "_middleware_chain", None), prefix),
            (getattr(node, "__wrapped__", None), prefix),
            (getattr(node, "get_response", None), prefix),
        ]
        for route in _list(getattr(node, "routes", None)):
            path = getattr(route, "path", None)
            if type(route).__name__ == "Mount" and isinstance(path, str):
                inner.append((getattr(route, "app", None), prefix + path))
        mounts = getattr(node, "mounts", None)  # werkzeug's DispatcherMiddleware
        if isinstance(mounts, dict):
            inner += [(mounted, prefix + path) for path, mounted in mounts.items()]
        # Depth first, in the order listed.
        pending += [(child, path, depth + 1) for child, path in reversed(inner)]


def _declared(entry: object) -> Settings | None:
    """The settings of a Starlette ``Middleware(SitemapMiddleware, ...)`` not yet built."""
    cls = getattr(entry, "cls", None)
    options: Any = getattr(entry, "kwargs", None)
    if not (isinstance(cls, type) and issubclass(cls, SitemapMiddleware)):
        return None
    if not isinstance(options, dict):
        return None
    try:
        return make_settings({k: v for k, v in options.items() if k != "sources"})
    except ConfigurationError:
        return None  # the app itself reports it when it starts


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []
