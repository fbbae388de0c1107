"""The project's routes (``get_resolver()`` walked recursively), for route coverage: each
``URLPattern`` under its ``URLResolver``\\ s, ``path()`` routes (``<slug:slug>``) and
``re_path()`` regexes alike, an ``i18n_patterns()`` prefix as a language parameter.

Excluded as they are listed: Django's admin (one route for its prefix), static files
(``django.views.static.serve``, staticfiles' ``serve``), ``django.contrib.sitemaps``'
views, and class-based views without ``get``. The project's own exclusions are the
setting ``SITEMAP_ROUTES_EXCLUDED`` (globs on the route path, e.g. ``["/search/*"]``) and
views marked with :func:`~sitemap_middleware.not_in_sitemap`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.conf import settings

from ...sources.coverage import Param, Part, Route, join

EXCLUDED_SETTING = "SITEMAP_ROUTES_EXCLUDED"
_ROUTE_PARAM = re.compile(r"<(?:([^>:]+):)?([^>]+)>")
_STATIC_VIEWS = ("django.views.static.serve", "django.contrib.staticfiles.views.serve")


def excluded_globs() -> list[str]:
    """``SITEMAP_ROUTES_EXCLUDED``: globs on the route path."""
    value = getattr(settings, EXCLUDED_SETTING, None) or ()
    return [value] if isinstance(value, str) else [str(glob) for glob in value]


def django_routes(urlconf: str | None = None) -> list[Route]:
    """Every route of the URLconf (default: ``ROOT_URLCONF``), in resolving order."""
    from django.urls import get_resolver

    return list(_walk(get_resolver(urlconf).url_patterns, ("/",)))


def _walk(patterns: Any, prefix: tuple[Part, ...]) -> Iterator[Route]:
    from django.urls import URLPattern, URLResolver

    for entry in patterns:
        parts = join(prefix, _parts(entry.pattern))
        if isinstance(entry, URLResolver):
            if "admin" in (entry.app_name, entry.namespace):
                yield Route(join(parts, (Param("rest", ".*", "path"),)), None, "admin", "admin")
                continue
            yield from _walk(entry.url_patterns, parts)
        elif isinstance(entry, URLPattern):
            yield _route(entry, parts)


def _route(entry: Any, parts: tuple[Part, ...]) -> Route:
    view = entry.callback
    cls = getattr(view, "view_class", None)
    dotted = f"{getattr(view, '__module__', '')}.{getattr(view, '__name__', '')}"
    excluded = None
    if dotted in _STATIC_VIEWS:
        excluded = "static files"
    elif dotted.startswith("django.contrib.sitemaps."):
        excluded = "the sitemap's"
    elif cls is not None and not hasattr(cls, "get"):
        excluded = "not GET"
    return Route(parts, None, entry.name or dotted, excluded, view)


def _parts(pattern: Any) -> tuple[Part, ...]:
    """A pattern's parts: a route's text and converters, a regex's literal text and
    groups (the whole regex as one parameter when it is more than that), a language prefix."""
    from django.urls.resolvers import LocalePrefixPattern, RoutePattern

    if isinstance(pattern, LocalePrefixPattern):
        codes = "|".join(re.escape(code) for code, _ in settings.LANGUAGES)
        if pattern.prefix_default_language:
            return (Param("lang", f"(?:{codes})", "language"), "/")
        return (Param("lang", f"(?:(?:{codes})/)?", "language"),)
    if isinstance(pattern, RoutePattern):
        route = str(pattern._route)
        converters = pattern.converters
        parts: list[Part] = []
        at = 0
        for match in _ROUTE_PARAM.finditer(route):
            parts.append(route[at : match.start()])
            converter, name = match.group(1), match.group(2)
            regex = getattr(converters.get(name), "regex", "[^/]+")
            parts.append(Param(name, regex, converter or ""))
            at = match.end()
        parts.append(route[at:])
        return join(parts)
    return _regex_parts(str(pattern._regex))


def _regex_parts(regex: str) -> tuple[Part, ...]:
    """``^articles/(?P<year>[0-9]{4})/$`` as ``articles/``, ``{year}``, ``/``."""
    body = regex.removeprefix("^").removesuffix("$").removesuffix("\\Z")
    parts: list[Part] = []
    literal: list[str] = []
    at = 0
    while at < len(body):
        char = body[at]
        if char == "\\" and at + 1 < len(body) and not body[at + 1].isalnum():
            literal.append(body[at + 1])
            at += 2
        elif char == "(":
            end = _closing(body, at)
            if end is None:
                break
            group = body[at + 1 : end]
            named = re.match(r"\?P<(\w+)>", group)
            parts += [
                "".join(literal),
                Param(
                    named.group(1) if named else "re",
                    group[named.end() :] if named else group.removeprefix("?:"),
                ),
            ]
            literal = []
            at = end + 1
        elif char in ".^$*+?{}[]|\\":
            break
        else:
            literal.append(char)
            at += 1
    else:
        parts.append("".join(literal))
        return join(parts)
    # More than literal text and groups: the regex is one parameter.
    return (Param("re", body),)


def _closing(text: str, start: int) -> int | None:
    """The index of the parenthesis closing the one at ``start``."""
    depth = 0
    at = start
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return None
