"""``sitemap-middleware routes``: the application's routes that no source covers, on
Starlette and Flask (:mod:`tests.routes_site`), and the matching of loc templates and locs
onto each framework's routes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from sitemap_middleware import IterableSource, SQLAlchemySource, not_in_sitemap
from sitemap_middleware.cli import main
from sitemap_middleware.cli.route_tables import app_routes
from sitemap_middleware.sources.coverage import (
    Param,
    Route,
    SourceView,
    app_path,
    classify,
    loc_templates,
    template_covers,
    template_shape,
)

from ..routes_site import DRAFTS, UNCOVERED

BASE = "https://site.test/"


def routes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["routes", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def by_status(report: dict[str, Any], status: str) -> dict[str, Any]:
    return {r["path"]: r for r in report["routes"] if r["status"] == status}


@pytest.mark.parametrize("framework", ["starlette", "flask"])
def test_finds_exactly_the_uncovered_route(
    framework: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = f"tests.routes_site:{framework}"
    status, report = routes(capsys, "--app", app, "--exclude", DRAFTS)
    assert status == 1
    assert list(by_status(report, "uncovered")) == [UNCOVERED]
    assert report["static_source"] == f"IterableSource([{UNCOVERED!r}], name='static')"
    excluded = {path: r["excluded"] for path, r in by_status(report, "excluded").items()}
    assert excluded["/search"] == "not_in_sitemap"
    assert excluded["/subscribe"] == "not GET"
    assert excluded["/drafts/{slug}"] == f"excluded: {DRAFTS}"
    assert any(why == "static files" for why in excluded.values())
    covered = by_status(report, "covered")
    assert covered["/products/{slug}"]["url"] == BASE + "products/chair"
    assert covered["/about"]["source"] == "pages"

    # Without the glob, the drafts are uncovered too (a parameter: not in the static line).
    status, report = routes(capsys, "--app", app)
    assert status == 1
    assert set(by_status(report, "uncovered")) == {UNCOVERED, "/drafts/{slug}"}
    assert report["static_source"] == f"IterableSource([{UNCOVERED!r}], name='static')"


@pytest.mark.parametrize("framework", ["starlette", "flask"])
def test_nothing_on_the_clean_site(framework: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = routes(
        capsys, "--app", f"tests.routes_site:{framework}_clean", "--exclude", DRAFTS
    )
    assert (status, by_status(report, "uncovered"), report["static_source"]) == (0, {}, None)


def test_text_report_with_the_static_line(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["routes", "--app", "tests.routes_site:starlette", "--exclude", DRAFTS])
    out = capsys.readouterr().out
    assert status == 1
    assert f"UNCOVERED  {UNCOVERED}" in out
    assert f"IterableSource([{UNCOVERED!r}], name='static')" in out.splitlines()[-1]
    assert "excluded   /robots.txt" in out
    assert "excluded   /sitemap.xml" in out and out.count("the sitemap's") == 1


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["routes", "--app", "tests.nowhere:app"]) == 2
    assert main(["routes"]) == 2
    capsys.readouterr()


def test_fastapi_routes_and_its_documentation() -> None:
    from fastapi import APIRouter, FastAPI

    api = FastAPI()
    router = APIRouter(prefix="/items")

    @router.get("/{item_id}")
    def item(item_id: int) -> dict[str, int]:
        return {"id": item_id}

    @router.post("/")
    def create() -> None:
        return None

    api.include_router(router)
    found = {route.path: route.excluded for route in app_routes(api) or []}
    assert found["/items/{item_id}"] is None
    assert found["/items/"] == "not GET"
    assert found["/docs"] == found["/openapi.json"] == "API documentation"


def route(*parts: str | Param) -> Route:
    return Route(tuple(parts))


SLUG = Param("slug")
ID = Param("id", "[0-9]+", "int")


@pytest.mark.parametrize(
    ("template", "target", "covers"),
    [
        ("/products/{slug}", route("/products/", SLUG), True),
        ("https://site.test/products/{code}", route("/products/", SLUG), True),
        ("/products/{slug}/", route("/products/", SLUG), False),  # the trailing slash differs
        ("/items/{pk}", route("/items/", ID), True),
        ("/items/{pk}/reviews", route("/items/", ID), False),
        ("/docs/{path}", route("/docs/", Param("rest", ".+", "path")), True),
        ("/en/about", route("/", Param("lang", "(?:en|de)", "language"), "/about"), True),
        ("/fr/about", route("/", Param("lang", "(?:en|de)", "language"), "/about"), False),
        ("https://elsewhere.test/products/{slug}", route("/products/", SLUG), False),
    ],
)
def test_a_template_maps_onto_a_route(template: str, target: Route, covers: bool) -> None:
    shape = template_shape(template, BASE)
    assert (shape is not None and template_covers(shape, target)) is covers


def test_locs_are_read_as_application_paths() -> None:
    assert app_path("https://site.test/a/b?x=1#y", BASE) == "/a/b"
    assert app_path("a/b", BASE) == "/a/b"
    assert app_path("https://other.test/a", BASE) is None
    assert app_path("https://site.test/shop/a", "https://site.test/shop/") == "/a"


def test_templates_of_sqlalchemy_sources() -> None:
    table = sa.table("articles", sa.column("id"), sa.column("slug"), sa.column("lang"))
    stmt = sa.select(table.c.id, table.c.slug)
    engine = sa.create_engine("sqlite://")
    plain = SQLAlchemySource(stmt, engine, name="articles", loc="/articles/{slug}", key="id")
    assert loc_templates(plain) == ["/articles/{slug}"]
    per_language = SQLAlchemySource(
        stmt, engine, name="i18n", loc="/{lang}/articles/{slug}", key="id", languages=["en", "de"]
    )
    assert loc_templates(per_language) == ["/en/articles/{slug}", "/de/articles/{slug}"]
    called = SQLAlchemySource(stmt, engine, name="f", loc=lambda row: f"/a/{row.slug}", key="id")
    assert loc_templates(called) == [] == loc_templates(IterableSource(["/a"]))


def test_a_template_covers_before_a_loc_and_a_marked_view_is_excluded() -> None:
    @not_in_sitemap
    def view() -> None:
        pass

    article = route("/articles/", SLUG)
    marked = Route(("/search",), view=view)
    views = [
        SourceView("listed", [], ["/articles/one"], BASE),
        SourceView("articles", ["/articles/{slug}"], [], BASE),
    ]
    rows = classify([article, marked], views[1:])
    assert rows[0].cover is not None and rows[0].cover.by == "template"
    assert rows[1].excluded == "not_in_sitemap"
    rows = classify([article], views)
    assert rows[0].cover is not None and (rows[0].cover.source, rows[0].cover.by) == (
        "listed",
        "loc",
    )
    assert rows[0].cover.url == BASE + "articles/one"


def test_regex_routes_of_django() -> None:
    pytest.importorskip("django")
    from sitemap_middleware.contrib.django.routes import _regex_parts

    year = Route(("/", *_regex_parts(r"^archive/(?P<year>[0-9]{4})/$")))
    assert (year.path, year.shape) == ("/archive/{year}/", "/archive/{}/")
    assert year.matches("/archive/2024/") and not year.matches("/archive/24/")
    dotted = Route(("/", *_regex_parts(r"^feed\.xml$")))
    assert dotted.path == "/feed.xml" and dotted.parameterless
    loose = Route(("/", *_regex_parts(r"^(?:old|new)/.*$")))
    assert loose.matches("/old/x") and not loose.parameterless


def test_mounted_applications() -> None:
    """A Flask app mounted in Starlette: its rules under the mount's path; any other
    mounted application: one excluded route for its whole path."""
    from flask import Flask
    from starlette.applications import Starlette
    from starlette.routing import Mount

    class WSGIAdapter:  # as a2wsgi's WSGIMiddleware holds the application
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            pass

    legacy = Flask("legacy")

    @legacy.route("/page/<int:n>")
    def page(n: int) -> str:
        return str(n)

    async def other(scope: Any, receive: Any, send: Any) -> None:
        pass

    app = Starlette(routes=[Mount("/old", app=WSGIAdapter(legacy)), Mount("/else", app=other)])
    found = {route.path: route for route in app_routes(app) or []}
    assert found["/old/page/{n:int}"].excluded is None
    assert found["/old/page/{n:int}"].matches("/old/page/7")
    assert found["/else/{path:path}"].excluded is not None
