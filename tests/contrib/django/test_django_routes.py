"""Route coverage on Django (:mod:`tests.routes_django`): the system check warns of the one
uncovered route without a query, and ``manage.py sitemap_routes`` reports it (reading the
sources), ``path()``, ``re_path()`` and ``i18n_patterns()`` routes alike."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ...django_setup import database, setup
from ...routes_site import BASE, DRAFTS, UNCOVERED

setup()

from django.core.checks import run_checks  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.test import override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402


def project(clean: bool = False) -> Any:
    sources = "clean_sources" if clean else "sources"
    return override_settings(
        ROOT_URLCONF="tests.routes_django",
        SITEMAP_MIDDLEWARE={"sources": f"tests.routes_django.{sources}", "base_url": BASE},
        SITEMAP_ROUTES_EXCLUDED=[DRAFTS],
    )


@pytest.fixture
def tables() -> Iterator[None]:
    database()
    yield


def uncovered() -> list[str]:
    return [m.obj for m in run_checks() if m.id == "sitemap_middleware.W002"]


def test_the_check_warns_of_the_uncovered_route_without_a_query() -> None:
    with project(), CaptureQueriesContext(connections["default"]) as queries:
        assert uncovered() == [UNCOVERED]
    assert len(queries) == 0
    with project(clean=True):
        assert uncovered() == []
    with project(), override_settings(SITEMAP_ROUTES_EXCLUDED=[DRAFTS, UNCOVERED]):
        assert uncovered() == []
    with project(), override_settings(SITEMAP_ROUTES_EXCLUDED=[]):
        assert uncovered() == [UNCOVERED, "/drafts/{slug:slug}"]


def test_check_command_prints_the_warning() -> None:
    out, err = io.StringIO(), io.StringIO()
    with project():
        call_command("check", stdout=out, stderr=err)
    printed = out.getvalue() + err.getvalue()
    assert "sitemap_middleware.W002" in printed and f"IterableSource(['{UNCOVERED}']" in printed


def test_no_check_without_the_setting() -> None:
    with override_settings(ROOT_URLCONF="tests.routes_django", SITEMAP_MIDDLEWARE=None):
        assert uncovered() == []


def test_sitemap_routes_reports_each_route(tables: None) -> None:
    out = io.StringIO()
    with project(), pytest.raises(SystemExit) as exited:
        call_command("sitemap_routes", "--json", stdout=out)
    assert exited.value.code == 1
    report = json.loads(out.getvalue())
    rows = {row["path"]: row for row in report["routes"]}
    assert [path for path, row in rows.items() if row["status"] == "uncovered"] == [UNCOVERED]
    assert rows["/articles/{slug}"]["by"] == "template"  # re_path(), the DjangoSource's template
    assert rows["/{lang:language}/about-us"]["url"] == BASE + "en/about-us"  # i18n_patterns()
    assert rows["/products/{slug:slug}"]["url"] == BASE + "products/chair"
    assert rows["/subscribe"]["excluded"] == "not GET"  # a class-based view without get()
    assert rows["/search"]["excluded"] == "not_in_sitemap"
    assert rows["/admin/{rest:path}"]["excluded"] == "admin"
    assert rows["/drafts/{slug:slug}"]["excluded"] == f"excluded: {DRAFTS}"
    assert all(source["error"] is None for source in report["sources"])
    out = io.StringIO()
    with project(clean=True):
        call_command("sitemap_routes", stdout=out)  # exit status 0: no SystemExit
    assert "0 uncovered" in out.getvalue()


def adopted_sources() -> Any:
    from sitemap_middleware.contrib.django import django_sitemap_sources

    from ...django_site.shop.sitemaps import SITEMAPS

    return django_sitemap_sources(SITEMAPS)


def test_the_check_reads_no_query_from_adopted_sitemap_classes() -> None:
    """An adopted ``Sitemap`` class is no list in memory (its ``_items`` is a method that
    queries): the check matches its routes by template only, and never fails on it."""
    settings = {"sources": f"{__name__}.adopted_sources", "base_url": BASE}
    with (
        override_settings(ROOT_URLCONF="tests.routes_django", SITEMAP_MIDDLEWARE=settings),
        CaptureQueriesContext(connections["default"]) as queries,
    ):
        warnings = [m for m in run_checks() if m.id.startswith("sitemap_middleware")]
    assert all(m.id == "sitemap_middleware.W002" for m in warnings), warnings
    assert len(queries) == 0
