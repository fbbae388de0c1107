"""``sitemap-middleware routes``: the application's ``GET`` routes, each covered by a source
of its sitemap, excluded, or uncovered (the exit status says whether any is: a CI gate).

The routes are asked of the framework (:mod:`.route_tables` for Starlette/FastAPI and
Flask, :mod:`..contrib.django.routes` for Django); the sources are those of the sitemap
middleware found in the application (as ``render`` finds it, after the lifespan startup),
each read once, bounded: its loc templates, and its first ``--sample`` locs (a list in
memory whole). The matching is :mod:`..sources.coverage`'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..core.sitemap import Sitemap
from ..sources.coverage import (
    SAMPLE,
    Route,
    Row,
    SourceView,
    classify,
    loc_templates,
    sample_locs,
    static_source_line,
)
from .loader import (
    Interface,
    LoadError,
    import_attribute,
    nodes,
    resolve_app,
    sitemap_holders,
    wsgi_middlewares,
)
from .route_tables import app_routes

UNCOVERED = 1


@dataclass
class RoutesOptions:
    app: str = ""
    app_dir: str = "."
    factory: bool | None = None
    interface: Interface | None = None
    exclude: list[str] = field(default_factory=list)
    sample: int = SAMPLE
    json: bool = False


async def source_views(sitemaps: Sequence[Sitemap], sample: int) -> list[SourceView]:
    """Each source of each sitemap: its templates and its first ``sample`` locs (a source
    that fails to read is reported, its templates still used)."""
    views = []
    for sitemap in sitemaps:
        base_url = sitemap.site.base_url
        for source in sitemap.sources:
            error = None
            try:
                locs = await sample_locs(source, sample)
            except Exception as exc:
                first = (str(exc).splitlines() or [""])[0]  # SQLAlchemy's add the statement
                locs, error = [], f"{type(exc).__name__}: {first}"
            views.append(SourceView(source.name, loc_templates(source), locs, base_url, error))
    return views


def rows_of(
    routes: Sequence[Route],
    sitemaps: Sequence[Sitemap],
    views: Sequence[SourceView],
    exclude: Sequence[str],
) -> list[Row]:
    def own(path: str) -> bool:
        return any(sitemap.routes.match(path) is not None for sitemap in sitemaps)

    return classify(routes, views, exclude, own)


async def report_routes(
    routes: Sequence[Route],
    sitemaps: Sequence[Sitemap],
    exclude: Sequence[str],
    sample: int,
    as_json: bool,
    out: TextIO,
) -> int:
    """Read the sources, classify the routes and write the report; the exit status."""
    views = await source_views(sitemaps, sample)
    return write_report(rows_of(routes, sitemaps, views, exclude), views, as_json, out)


async def run_routes(options: RoutesOptions, stdout: TextIO, stderr: TextIO) -> int:
    """Load the application, list its routes and report their coverage; the exit status."""
    from ..testing import with_lifespan

    target = import_attribute(options.app, options.app_dir)
    loaded = await resolve_app(target, options.factory, options.interface)
    app = loaded.app

    async def work(_: object = None) -> int:
        routes = _routes(app)
        sitemaps = [holder.sitemap for holder in sitemap_holders(app)]
        if not sitemaps:
            raise LoadError(
                "--app: no sitemap middleware with sources= found in the application "
                "(routes does not read per-host sitemaps, sites=)"
            )
        return await report_routes(
            routes, sitemaps, options.exclude, options.sample, options.json, stdout
        )

    try:
        if loaded.interface == "wsgi":
            return await work()
        return await with_lifespan(app, "http://localhost/", work)
    finally:
        for middleware in wsgi_middlewares(app):
            middleware.close()


def _routes(app: object) -> list[Route]:
    if any(type(node).__module__.startswith("django.core.handlers") for node in nodes(app)):
        from ..contrib.django.routes import django_routes, excluded_globs

        return _with_globs(django_routes(), excluded_globs())
    routes = app_routes(app)
    if routes is None:
        raise LoadError(
            "--app: no routes found: routes lists those of Starlette/FastAPI, Flask and "
            "Django applications"
        )
    return routes


def _with_globs(routes: list[Route], globs: list[str]) -> list[Route]:
    """``SITEMAP_ROUTES_EXCLUDED`` applied to Django's routes as they are listed."""
    from ..sources.coverage import excluded_by

    for route in routes:
        if route.excluded is None and (glob := excluded_by(route, globs)) is not None:
            route.excluded = f"excluded: {glob}"
    return routes


def write_report(
    rows: Sequence[Row], views: Sequence[SourceView], as_json: bool, out: TextIO
) -> int:
    """The report, text or JSON; the exit status (1 when a route is uncovered)."""
    uncovered = [row for row in rows if row.uncovered]
    static = [row.route.path for row in uncovered if row.route.parameterless]
    line = static_source_line(static) if static else None
    if as_json:
        out.write(json.dumps(_as_json(rows, views, line), indent=2) + "\n")
    else:
        out.write(_as_text(rows, views, line))
    return UNCOVERED if uncovered else 0


def _status(row: Row) -> str:
    return "covered" if row.cover else "excluded" if row.excluded else "uncovered"


def _as_json(rows: Sequence[Row], views: Sequence[SourceView], line: str | None) -> dict[str, Any]:
    return {
        "routes": [
            {
                "path": row.route.path,
                "name": row.route.name,
                "methods": None if row.route.methods is None else sorted(row.route.methods),
                "status": _status(row),
                "source": row.cover.source if row.cover else None,
                "by": row.cover.by if row.cover else None,
                "url": row.cover.url if row.cover else None,
                "excluded": row.excluded,
            }
            for row in rows
        ],
        "uncovered": sum(row.uncovered for row in rows),
        "static_source": line,
        "sources": [
            {
                "name": view.name,
                "templates": view.templates,
                "locs_read": len(view.locs),
                "error": view.error,
            }
            for view in views
        ],
    }


def _as_text(rows: Sequence[Row], views: Sequence[SourceView], line: str | None) -> str:
    width = max((len(row.route.path) for row in rows), default=0)
    lines = []
    for row in rows:
        path = row.route.path.ljust(width)
        if row.cover:
            cover = row.cover
            lines.append(f"  covered    {path}  {cover.source} ({cover.by}): {cover.url}")
        elif row.excluded:
            lines.append(f"  excluded   {path}  {row.excluded}")
        else:
            name = f"  {row.route.name}" if row.route.name else ""
            lines.append(f"  UNCOVERED  {path}{name}")
    for view in views:
        if view.error:
            lines.append(f"  source {view.name!r} could not be read ({view.error}): templates only")
    counts = {
        status: sum(_status(row) == status for row in rows)
        for status in ("covered", "excluded", "uncovered")
    }
    head = (
        f"{len(rows)} routes: {counts['covered']} covered, {counts['excluded']} excluded, "
        f"{counts['uncovered']} uncovered"
    )
    text = head + "\n" + "\n".join(lines) + "\n"
    if line:
        text += f"\nThe uncovered routes without parameters, as a static source:\n  {line}\n"
    return text
