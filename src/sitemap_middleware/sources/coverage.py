"""Route coverage: which of an application's ``GET`` routes its sources' URLs fall on.

A route is a path of literal text and parameters (:class:`Route`, listed from the
framework by ``cli/route_tables.py`` or ``contrib/django/routes.py``). A source covers it
when one of its loc templates maps onto the route (``"/products/{slug}"`` onto
``/products/{slug}`` or ``/products/<slug>``: the same literal text, a placeholder where
the route has a parameter) or when one of the locs it lists (the first few: a bounded
read, :func:`sample_locs`) matches the route's pattern.

A view (function or class) marked with :func:`not_in_sitemap` is excluded, as the
paths matched by the exclusion globs are.
"""

from __future__ import annotations

import fnmatch
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .base import ALL, AsyncSource, Source, SyncSource
from .iterable import IterableSource

V = TypeVar("V")

EXCLUDED = "__sitemap_excluded__"
"""The attribute :func:`not_in_sitemap` sets on a view."""

SAMPLE = 20
"""Locs read from each source that is not a list in memory (a list is read whole)."""


def not_in_sitemap(view: V) -> V:
    """Mark a view (a function, or a class-based view's class) as a page that belongs in no
    sitemap: ``sitemap-middleware routes`` and Django's system check do not report its
    routes as uncovered.

    ::

        @not_in_sitemap
        async def search(request): ...
    """
    setattr(view, EXCLUDED, True)
    return view


def marked(*views: object) -> bool:
    """Whether any of ``views`` (a view, its wrapped function or its class) is marked."""
    for view in views:
        while view is not None:
            if getattr(view, EXCLUDED, False) is True:
                return True
            view = getattr(view, "__wrapped__", None)
    return False


@dataclass(frozen=True)
class Param:
    """A parameter of a route: its name and the pattern of the text it matches."""

    name: str
    pattern: str = "[^/]+"
    converter: str = ""

    def __str__(self) -> str:
        return f"{{{self.name}:{self.converter}}}" if self.converter else f"{{{self.name}}}"


Part = str | Param


@dataclass
class Route:
    """One route of the application: its path as literal text and parameters."""

    parts: tuple[Part, ...]
    methods: frozenset[str] | None = None
    """The methods it answers, upper case; None: any (or not said)."""
    name: str = ""
    excluded: str | None = None
    """Why it is not expected in a sitemap; None when it is."""
    view: object = None

    @property
    def regex(self) -> re.Pattern[str]:
        """The pattern of the paths it matches (``re`` keeps the compiled ones)."""
        return re.compile(
            "".join(
                re.escape(part) if isinstance(part, str) else f"(?:{part.pattern})"
                for part in self.parts
            )
        )

    @property
    def path(self) -> str:
        """The path as the report writes it: ``/products/{slug}``, ``/items/{id:int}``."""
        return "".join(str(part) for part in self.parts)

    @property
    def parameterless(self) -> bool:
        return all(isinstance(part, str) for part in self.parts)

    @property
    def shape(self) -> str:
        """The path with every parameter as ``{}``: what a loc template is compared with."""
        return "".join(part if isinstance(part, str) else "{}" for part in self.parts)

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def join(*parts: Iterable[Part]) -> tuple[Part, ...]:
    """Parts put one after another, adjacent literal text merged (``/a`` + ``/b``)."""
    out: list[Part] = []
    for group in parts:
        for part in group:
            if isinstance(part, str) and out and isinstance(out[-1], str):
                out[-1] += part
            elif part != "":
                out.append(part)
    return tuple(out)


def excluded_by(route: Route, globs: Sequence[str]) -> str | None:
    """The first glob that matches the route's path (as the report writes it, or its shape)."""
    for glob in globs:
        if fnmatch.fnmatchcase(route.path, glob) or fnmatch.fnmatchcase(route.shape, glob):
            return glob
    return None


def app_path(loc: str, base_url: str) -> str | None:
    """The application path a loc (or loc template) names: a relative loc is below
    ``base_url``; an absolute one below it is made relative; any other is not the
    application's (None). The query and fragment are dropped."""
    if loc.startswith(base_url):
        rest = loc[len(base_url) :]
    elif urlsplit(loc).scheme:
        return None
    else:
        rest = loc
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    return "/" + rest.lstrip("/")


def template_shape(template: str, base_url: str) -> str | None:
    """A loc template's path with every field as ``{}`` (None when not the application's)."""
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError:
        return None
    shape = "".join(literal + ("{}" if name is not None else "") for literal, name, _, _ in pieces)
    return app_path(shape, base_url)


def template_covers(shape: str, route: Route) -> bool:
    """A template (its shape) maps onto the route: the same literal text and a placeholder
    where the route has a parameter, or, filled with sample values, it matches the route's
    pattern (a route parameter that spans segments, a language prefix the template spells)."""
    if shape == route.shape:
        return True
    return any(route.matches(shape.replace("{}", value)) for value in ("1", "x"))


def loc_templates(source: Source) -> list[str]:
    """The loc templates of a source (SQLAlchemy's and Django's; one per language with
    ``languages=``); none for a list, a generator or a loc function."""
    inner: Any = getattr(source, "sync", source)  # AsyncDjangoSource reads with its DjangoSource
    per_language = getattr(getattr(inner, "extras", None), "templates", None)
    if per_language:
        return [str(template) for template in per_language]
    template = getattr(getattr(getattr(inner, "options", None), "loc", None), "template", None)
    return [template] if isinstance(template, str) else []


def in_memory(source: Source) -> bool:
    """A list source holding its items: reading them all reads nothing but memory (an
    adopted Django ``Sitemap`` has an ``_items`` method, which queries)."""
    return _memory_items(source) is not None


def _memory_items(source: Source) -> tuple[object, ...] | None:
    items = getattr(source, "_items", None) if isinstance(source, IterableSource) else None
    return items if isinstance(items, tuple) else None


def _first_locs(source: SyncSource, count: int) -> list[str]:
    batches = source.batches(ALL, count)
    try:
        batch = next(batches, None)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()
    return [] if batch is None else [loc for loc in batch.locs[:count] if isinstance(loc, str)]


async def sample_locs(source: Source, count: int = SAMPLE) -> list[str]:
    """The first ``count`` locs of a source (every loc of a list in memory): one batch read,
    as the sitemap reads its first page, the iterator closed after it."""
    if in_memory(source):
        count = max(count, len(_memory_items(source) or ()))
    if isinstance(source, SyncSource):
        return await source.in_thread(lambda: _first_locs(source, count))
    if isinstance(source, AsyncSource):
        batches = source.batches(ALL, count)
        try:
            batch = await anext(batches, None)
        finally:
            await batches.aclose()
        return [] if batch is None else [loc for loc in batch.locs[:count] if isinstance(loc, str)]
    return []


def memory_locs(source: Source) -> list[str]:
    """The locs of a list source in memory (no I/O); none for any other source."""
    if not in_memory(source) or not isinstance(source, SyncSource):
        return []
    return _first_locs(source, len(_memory_items(source) or ()) or 1)


@dataclass(frozen=True)
class Cover:
    """Why a route is covered: the source, how (``template`` or ``loc``) and one URL."""

    source: str
    by: str
    url: str


@dataclass
class SourceView:
    """What coverage knows of one source: its loc templates and the locs read."""

    name: str
    templates: list[str]
    locs: list[str]
    base_url: str
    error: str | None = None


def cover(route: Route, sources: Sequence[SourceView]) -> Cover | None:
    """The first source covering ``route``, with one of its URLs on it (a loc that matches,
    else the template, made absolute)."""
    for source in sources:
        sample = next(
            (
                loc
                for loc in source.locs
                if (path := app_path(loc, source.base_url)) is not None and route.matches(path)
            ),
            None,
        )
        for template in source.templates:
            shape = template_shape(template, source.base_url)
            if shape is not None and template_covers(shape, route):
                return Cover(source.name, "template", absolute(sample or template, source))
        if sample is not None:
            return Cover(source.name, "loc", absolute(sample, source))
    return None


def absolute(loc: str, source: SourceView) -> str:
    return loc if urlsplit(loc).scheme else source.base_url + loc.lstrip("/")


def static_source_line(paths: Sequence[str]) -> str:
    """The source listing ``paths``, ready to paste into ``sources=``."""
    return f"IterableSource({list(paths)!r}, name='static')"


SITEMAP = "the sitemap's"
ROBOTS_TXT = "robots.txt"
MARKED = "not_in_sitemap"


@dataclass(frozen=True)
class Row:
    """A route and what coverage says of it: covered (``cover``), excluded (``excluded``:
    why), or neither (uncovered)."""

    route: Route
    cover: Cover | None = None
    excluded: str | None = None

    @property
    def uncovered(self) -> bool:
        return self.cover is None and self.excluded is None


def classify(
    routes: Sequence[Route],
    sources: Sequence[SourceView],
    globs: Sequence[str] = (),
    own: Callable[[str], bool] | None = None,
) -> list[Row]:
    """Each route's row, in the order given. ``own(path)``: whether a parameterless path is
    one the sitemap middleware answers itself (its documents, the key file)."""
    rows = []
    for route in routes:
        why = route.excluded
        if why is None and route.parameterless:
            if route.path.rstrip("/").endswith("/robots.txt"):
                why = ROBOTS_TXT
            elif own is not None and own(route.path):
                why = SITEMAP
        if why is None and marked(route.view, getattr(route.view, "view_class", None)):
            why = MARKED
        if why is None and (glob := excluded_by(route, globs)) is not None:
            why = f"excluded: {glob}"
        if why is not None:
            rows.append(Row(route, excluded=why))
            continue
        rows.append(Row(route, cover(route, sources)))
    return rows
