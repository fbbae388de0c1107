"""The public API is typed for its users: mypy --strict flags a misspelled or mistyped option
in their code, as it would in any other typed library (the package ships ``py.typed``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .support import shared_mypy_cache

mypy_api = pytest.importorskip("mypy.api")
pytestmark = pytest.mark.slow  # mypy takes seconds to start

PRELUDE = """\
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, select

from sitemap_middleware import SQLAlchemySource

articles = Table(
    "articles", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String),
    Column("image", String), Column("updated_at", DateTime),
)
engine = create_engine("sqlite://")
"""


def mypy_errors(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, **codes: str
) -> dict[str, list[str]]:
    """The errors mypy --strict reports for each code (after the prelude), one per line, by
    the code's name: one run of mypy for them all."""
    modules = []
    for name, code in codes.items():
        module = tmp_path / f"{name}.py"
        module.write_text(PRELUDE + textwrap.dedent(code))
        modules.append(str(module))
    with shared_mypy_cache(tmp_path_factory) as cache:
        out, _, _ = mypy_api.run(["--strict", "--cache-dir", str(cache), *modules])
    errors = [line for line in out.splitlines() if ": error:" in line]
    return {
        name: [line for line in errors if Path(line.split(":")[0]).stem == name] for name in codes
    }


def test_the_extension_options_of_a_source_are_typed_keywords(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    good = """
    SQLAlchemySource(
        select(articles), engine, name="articles", loc="/{lang}/{slug}",
        languages=["en", "de"], x_default="en", images="image", max_images=1,
    )
    """
    misspelled = """
    SQLAlchemySource(select(articles), engine, name="articles", loc="/{slug}", imagez="image")
    """
    mistyped = """
    SQLAlchemySource(select(articles), engine, name="articles", loc="/{slug}", max_images="9")
    """
    errors = mypy_errors(
        tmp_path, tmp_path_factory, good=good, misspelled=misspelled, mistyped=mistyped
    )
    assert errors["good"] == []
    (error,) = errors["misspelled"]
    assert '"imagez"' in error
    (error,) = errors["mistyped"]
    assert '"max_images"' in error


def test_sites_take_the_shared_settings_without_a_base_url(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    good = """
    from sitemap_middleware import SiteConfig, SitemapApp, SitemapWSGIMiddleware, Tenants

    def site_for(host: str) -> SiteConfig | None:
        return SiteConfig(base_url=f"https://{host}/", sources=["/"])

    SitemapApp(sites=site_for, tenants=Tenants(ttl=60), path="/maps.xml")
    SitemapWSGIMiddleware(None, sites={"a.example": site_for("a.example")})
    SitemapApp(sources=["/"], base_url="https://example.com/")
    """
    misspelled = """
    from sitemap_middleware import SitemapApp

    SitemapApp(sites={}, tenant={"ttl": 60})
    """
    errors = mypy_errors(tmp_path, tmp_path_factory, good=good, misspelled=misspelled)
    assert errors["good"] == []
    (error,) = errors["misspelled"]
    assert '"tenant"' in error
