"""``--app MODULE:ATTR``: find the application, and the sitemaps configured in it.

``ATTR`` (dotted for nested attributes) may name:

* an ASGI application: a Starlette or FastAPI app with ``SitemapMiddleware``
  added, a ``SitemapMiddleware`` or ``SitemapApp`` instance, any ASGI callable;
* a function taking no arguments that returns one of those (a factory, sync or
  async); it is recognised by its signature, or forced with ``--factory``.

The sitemaps are found by walking the application: its built middleware stack
(``.middleware_stack`` / ``.app``), Starlette's ``user_middleware`` entries
and ``Mount`` routes, so ``render`` knows each sitemap's path and base URL.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from ..asgi import SitemapMiddleware
from ..settings import ConfigurationError, Settings, make_settings
from .asgi_client import ASGIApp


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
    """A plain function callable with no arguments (an ASGI application takes three)."""
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        return False
    parameters = inspect.signature(target).parameters.values()
    return all(
        p.default is not inspect.Parameter.empty
        or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        for p in parameters
    )


async def resolve_app(target: object, factory: bool | None = None) -> ASGIApp:
    """The ASGI application ``target`` is, or makes when it is a factory."""
    if factory or (factory is None and is_factory(target)):
        if not callable(target):
            raise LoadError("--factory: the attribute is not callable")
        try:
            target = target()
            if inspect.isawaitable(target):
                target = await target
        except ConfigurationError as exc:
            raise LoadError(f"--app: the factory's sitemap configuration is wrong: {exc}") from exc
    if not callable(target):
        raise LoadError(f"--app names a {type(target).__name__}, not an ASGI application")
    app: ASGIApp = target
    return app


def find_sitemaps(app: object) -> list[Mounted]:
    """Every ``SitemapMiddleware`` configured in ``app``, in the order found, one per path."""
    found: dict[str, Mounted] = {}
    seen: set[int] = set()

    def walk(node: object, prefix: str, depth: int) -> None:
        if node is None or id(node) in seen or depth > 100:
            return
        seen.add(id(node))
        if isinstance(node, SitemapMiddleware):
            mounted = Mounted(prefix, node.sitemap.settings)
            found.setdefault(mounted.path, mounted)
        for entry in getattr(node, "user_middleware", None) or ():
            settings = _declared(entry)
            if settings is not None:
                mounted = Mounted(prefix, settings)
                found.setdefault(mounted.path, mounted)
        walk(getattr(node, "middleware_stack", None), prefix, depth + 1)
        walk(getattr(node, "app", None), prefix, depth + 1)
        for route in _list(getattr(node, "routes", None)):
            path = getattr(route, "path", None)
            if type(route).__name__ == "Mount" and isinstance(path, str):
                walk(getattr(route, "app", None), prefix + path, depth + 1)

    walk(app, "", 0)
    return list(found.values())


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
