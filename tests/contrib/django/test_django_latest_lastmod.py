"""An adopted ``Sitemap`` whose ``get_latest_lastmod()`` gives nothing usable (None, as
``GenericSitemap``'s does on PostgreSQL when a NULL sorts first; a moment in the future,
which is not listed): each page keeps its own newest lastmod, in the index and in its
``Last-Modified``, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from lxml import etree

from sitemap_middleware import SitemapWSGIApp

from ...adapters import call_wsgi
from ...django_setup import database, setup
from ...support import NS, assert_valid_index, assert_valid_urlset

setup()

from django.contrib.sitemaps import GenericSitemap  # noqa: E402
from django.utils.http import http_date  # noqa: E402

from sitemap_middleware import Freshness, Limits  # noqa: E402
from sitemap_middleware.contrib.django import DjangoSitemapSource  # noqa: E402

from ...django_site.shop.models import Article  # noqa: E402

BASE = "https://example.com/"
FUTURE = datetime(2999, 1, 1, tzinfo=UTC)


@pytest.fixture(params=["default", "postgres"])
def alias(request: pytest.FixtureRequest) -> Iterator[str]:
    name = database(request.param)
    Article.objects.using(name).all().delete()
    yield name
    Article.objects.using(name).all().delete()


def fill(alias: str, odd: datetime | None) -> None:
    """Eight articles (ids 1-8) on pages of keys 0-2, 3-5 and 6-8; id 5 (page 2) holds
    ``odd``."""
    moments = [datetime(2024, 3, day, 12, tzinfo=UTC) for day in (4, 9, 1, 7, 2, 5, 8, 3)]
    Article.objects.using(alias).bulk_create(
        Article(id=i, slug=f"a{i}", updated_at=odd if i == 5 else moment)
        for i, moment in enumerate(moments, 1)
    )


class NoLatest(GenericSitemap):  # type: ignore[type-arg]
    """A class whose override answers None, whatever the rows."""

    def get_latest_lastmod(self) -> Any:
        return None


class NotADate(GenericSitemap):  # type: ignore[type-arg]
    def get_latest_lastmod(self) -> Any:
        return "soon"


def app_of(source: DjangoSitemapSource, **settings: Any) -> SitemapWSGIApp:
    return SitemapWSGIApp(
        base_url=BASE, sources=[source], limits=Limits(max_urls=3), index="always", **settings
    )


def pages_of(source: Any, schema: etree.XMLSchema) -> list[tuple[Any, ...]]:
    """(index lastmod, page Last-Modified, newest lastmod the page lists) of every page of
    a source (or of an app)."""
    app = source if isinstance(source, SitemapWSGIApp) else app_of(source)
    index = call_wsgi(app, path="/sitemap.xml")
    assert index.status == 200
    found = []
    for loc, lastmod in assert_valid_index(index.body):
        page = call_wsgi(app, path=loc.removeprefix("https://example.com"))
        assert page.status == 200
        listed = [
            datetime.fromisoformat(text)
            for url in assert_valid_urlset(page.body, schema)
            if (text := url.findtext(f"{NS}lastmod")) is not None
        ]
        newest = max(listed) if listed else None
        found.append((lastmod and datetime.fromisoformat(lastmod), page.headers, newest))
    return found


def assert_own_newest(found: list[tuple[Any, ...]]) -> None:
    assert len(found) == 3
    for index_lastmod, headers, newest in found:
        assert newest is not None
        assert index_lastmod == newest
        assert headers["last-modified"] == http_date(newest.timestamp())


@pytest.mark.parametrize("odd", [None, FUTURE], ids=["null", "future"])
def test_generic_sitemap_with_a_null_or_future_latest(
    alias: str, odd: datetime | None, sitemap_schema: etree.XMLSchema
) -> None:
    fill(alias, odd)
    info = {"queryset": Article.objects.using(alias).order_by("id"), "date_field": "updated_at"}
    sitemap = GenericSitemap(info)
    latest = sitemap.get_latest_lastmod()
    if odd is FUTURE or alias == "postgres":  # PostgreSQL sorts a NULL first, descending
        assert latest in (None, FUTURE)  # unusable: the case under test
    source = DjangoSitemapSource(sitemap, name="products", base_url=BASE)
    found = pages_of(source, sitemap_schema)
    if latest in (None, FUTURE):
        assert_own_newest(found)
        # Page 2 holds the odd row: its newest is of the others (March 7th), not the NULL
        # or the future moment, which is not listed.
        assert found[1][2] == datetime(2024, 3, 7, 12, tzinfo=UTC)
    else:  # SQLite sorts a NULL last: the class's usable value is every page's, as Django's
        assert {index_lastmod for index_lastmod, _, _ in found} == {latest}


@pytest.mark.parametrize("kind", [NoLatest, NotADate])
def test_an_override_without_a_date_falls_back_to_each_page_s_newest(
    alias: str,
    kind: type[GenericSitemap],
    sitemap_schema: etree.XMLSchema,  # type: ignore[type-arg]
) -> None:
    fill(alias, datetime(2024, 3, 6, 12, tzinfo=UTC))
    info = {"queryset": Article.objects.using(alias).order_by("id"), "date_field": "updated_at"}
    found = pages_of(
        DjangoSitemapSource(kind(info), name="products", base_url=BASE), sitemap_schema
    )
    assert_own_newest(found)
    assert [newest.day for _, _, newest in found] == [9, 7, 8]


def test_the_fallback_with_the_default_freshness(
    alias: str, sitemap_schema: etree.XMLSchema
) -> None:
    """The pages kept current between recounts carry the same lastmods (``exact_rows=0``:
    a few rows would be read exactly by every request)."""
    fill(alias, FUTURE)
    info = {"queryset": Article.objects.using(alias).order_by("id"), "date_field": "updated_at"}
    source = DjangoSitemapSource(GenericSitemap(info), name="products", base_url=BASE)
    app = app_of(source, freshness=Freshness(exact_rows=0))
    for _ in range(2):  # the first request reads the pages, the second is answered from them
        found = pages_of(app, sitemap_schema)
        assert_own_newest(found)
        assert [newest.day for _, _, newest in found] == [9, 7, 8]
