"""The routes of a Starlette/FastAPI or Flask application, as :class:`~..sources.coverage.Route`
values; Django's are listed by :mod:`..contrib.django.routes`.

Starlette: ``app.routes``, recursing into ``Mount``s (and routers) and ``Host``s, each
``{name}`` / ``{name:convertor}`` with its convertor's pattern; a ``Mount`` of static files
is one excluded route; a mounted Flask application's rules are listed under the mount's
path, any other mounted application is one excluded route. Flask:
``app.url_map.iter_rules()``, each ``<name>`` / ``<converter:name>`` with its converter's
pattern; the ``static`` endpoints are excluded.
"""

from __future__ import annotations

import re
from typing import Any

from ..sources.coverage import Param, Part, Route, join
from .loader import nodes

_STARLETTE_PARAM = re.compile(r"{([a-zA-Z_][a-zA-Z0-9_]*)(?::([a-zA-Z_][a-zA-Z0-9_]*))?}")
_FLASK_PARAM = re.compile(r"<(?:([a-zA-Z_][a-zA-Z0-9_]*)(?:\([^>]*\))?:)?([a-zA-Z_][a-zA-Z0-9_]*)>")
NOT_GET = "not GET"
STATIC = "static files"
DOCS = "API documentation"
MOUNTED = "a mounted application (its routes are not listed)"


def app_routes(app: object) -> list[Route] | None:
    """The routes of the first Starlette router or Flask application found in ``app``'s
    stack; None when there is none."""
    for node in nodes(app):
        url_map = getattr(node, "url_map", None)
        if url_map is not None and hasattr(url_map, "iter_rules"):
            return flask_routes(node)
        if type(node).__module__.startswith(("starlette.", "fastapi.")) and isinstance(
            getattr(node, "routes", None), list
        ):
            return starlette_routes(node)
    return None


def starlette_routes(app: Any) -> list[Route]:
    docs = {
        getattr(app, name, None)
        for name in ("openapi_url", "docs_url", "redoc_url", "swagger_ui_oauth2_redirect_url")
    } - {None}
    return [
        _docs(route, docs) for route in _starlette(list(getattr(app, "routes", None) or ()), ())
    ]


def _docs(route: Route, docs: set[Any]) -> Route:
    if route.excluded is None and route.path in docs:
        route.excluded = DOCS
    return route


def _starlette(routes: list[Any], prefix: tuple[Part, ...]) -> list[Route]:
    from starlette.convertors import CONVERTOR_TYPES

    param = _starlette_param(CONVERTOR_TYPES)
    found: list[Route] = []
    for route in routes:
        kind = type(route).__name__
        included = getattr(route, "original_router", None)
        if included is not None:  # FastAPI's include_router(): the router, under a prefix
            at = str(getattr(getattr(route, "include_context", None), "prefix", "") or "")
            inner_prefix = join(prefix, _parse(at, _STARLETTE_PARAM, param))
            found += _starlette(list(getattr(included, "routes", None) or ()), inner_prefix)
            continue
        path = getattr(route, "path", "") or ""
        parts = join(prefix, _parse(path, _STARLETTE_PARAM, param))
        if kind == "Mount" or kind == "Host":
            inner = getattr(route, "routes", None)
            app = getattr(route, "app", None)
            if type(app).__name__ == "StaticFiles":
                found.append(
                    Route(join(parts, ("/", Param("path", ".*", "path"))), None, "", STATIC)
                )
            elif isinstance(inner, list) and inner:
                found += _starlette(inner, parts if kind == "Mount" else prefix)
            elif kind == "Mount":  # an application of its own: a Flask app's rules, or unknown
                listed = app_routes(app) if app is not None else None
                if listed is not None:
                    for inner_route in listed:
                        inner_route.parts = join(parts, inner_route.parts)
                    found += listed
                else:
                    rest = join(parts, ("/", Param("path", ".*", "path")))
                    found.append(Route(rest, None, getattr(route, "name", "") or "", MOUNTED))
            continue
        if kind == "WebSocketRoute":
            found.append(Route(parts, frozenset(), getattr(route, "name", ""), "WebSocket"))
            continue
        methods = getattr(route, "methods", None)
        endpoint = getattr(route, "endpoint", None)
        allowed = None if methods is None else frozenset(m.upper() for m in methods)
        excluded = None
        if allowed is not None and "GET" not in allowed:
            excluded = NOT_GET
        elif allowed is None and isinstance(endpoint, type) and not hasattr(endpoint, "get"):
            excluded = NOT_GET  # an HTTPEndpoint without get()
        name = getattr(route, "name", "") or ""
        found.append(Route(parts, allowed, name, excluded, endpoint))
    return found


def _starlette_param(convertors: dict[str, Any]) -> Any:
    def param(name: str, converter: str | None) -> Param:
        kind = converter or "str"
        pattern = getattr(convertors.get(kind), "regex", "[^/]+")
        return Param(name, pattern, converter or "")

    return param


def flask_routes(app: Any) -> list[Route]:
    found = []
    for rule in app.url_map.iter_rules():
        converters = getattr(rule, "_converters", {}) or {}

        def param(name: str, converter: str | None, converters: Any = converters) -> Param:
            pattern = getattr(converters.get(name), "regex", "[^/]+")
            return Param(name, pattern, converter or "")

        parts = _parse(rule.rule, _FLASK_PARAM, param, flask=True)
        methods = frozenset(m.upper() for m in rule.methods or ())
        view = app.view_functions.get(rule.endpoint)
        excluded = None
        if rule.endpoint == "static" or rule.endpoint.endswith(".static"):
            excluded = STATIC
        elif "GET" not in methods:
            excluded = NOT_GET
        found.append(Route(parts, methods, rule.endpoint, excluded, view))
    return found


def _parse(path: str, syntax: re.Pattern[str], param: Any, flask: bool = False) -> tuple[Part, ...]:
    parts: list[Part] = []
    at = 0
    for match in syntax.finditer(path):
        parts.append(path[at : match.start()])
        # Flask writes <converter:name>, Starlette {name:convertor}.
        name, converter = match.group(2, 1) if flask else match.group(1, 2)
        parts.append(param(name, converter))
        at = match.end()
    parts.append(path[at:])
    return join(parts)
