"""``DjangoSource`` locs as Django writes them: a template's values are what ``reverse()``
writes for the same values (``request.build_absolute_uri(reverse(...))``), and Django's
``resolve()`` reads each served loc back into the stored value; ``x_default=True`` writes
x-default where Django's i18n sitemaps do (tests/django_site)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemap_middleware import SitemapWSGIApp
from sitemap_middleware.settings import ConfigurationError

from ...adapters import call_wsgi
from ...conftest import examples
from ...django_setup import database, setup
from ...sources.sqlalchemy.test_template_values import HOSTILE, is_bad_row
from ...support import NS, assert_valid_index, assert_valid_urlset, locs

setup()

from django.test import Client, RequestFactory, override_settings  # noqa: E402
from django.urls import NoReverseMatch, resolve, reverse  # noqa: E402

from sitemap_middleware.contrib.django import DjangoSitemapSource, DjangoSource  # noqa: E402

from ...django_site.shop.models import Article, Page  # noqa: E402
from ...django_site.shop.sitemaps import PageSitemap  # noqa: E402
from ...django_site.urls import value  # noqa: E402

BASE = "https://example.com/"
XHTML = "{http://www.w3.org/1999/xhtml}"
ROUTES = {"value-str": "/values/{slug}", "value-path": "/paths/{slug}"}
# Any text a database stores (no lone surrogates; SQLite: no NUL, which XML refuses anyway).
slugs = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1),
    st.text("%0123456789abcdefABCDEF/ ?#&=+.", min_size=1, max_size=8),
)


def listed_locs(app: Any, schema: etree.XMLSchema) -> list[str]:
    reply = call_wsgi(app, path="/sitemap.xml")
    if reply.status == 404:  # every row was a bad row
        return []
    assert reply.status == 200, reply.body
    return locs(assert_valid_urlset(reply.body, schema))


def check_as_django(alias: str, values: list[str], schema: etree.XMLSchema) -> None:
    """Each route's locs: a good row's is ``build_absolute_uri(reverse(...))`` whenever
    Django can reverse its value, and ``resolve()`` gives the value back."""
    Article.objects.using(alias).all().delete()
    Article.objects.using(alias).bulk_create(
        Article(id=i, slug=slug) for i, slug in enumerate(values, 1)
    )
    request = RequestFactory().get("/", secure=True, HTTP_HOST="example.com")
    good = [slug for slug in values if not is_bad_row(slug)]
    for route, template in ROUTES.items():
        source = DjangoSource(Article.objects.using(alias), loc=template, name="articles")
        listed = listed_locs(SitemapWSGIApp(base_url=BASE, sources=[source]), schema)
        assert len(listed) == len(good)
        for loc, slug in zip(listed, good, strict=True):
            try:
                path = reverse(route, kwargs={"slug": slug})
            except NoReverseMatch:
                # Django's converters refuse it: "str" a "/", "path" (".+") a newline.
                assert "/" in slug or "\n" in slug, slug
                continue
            assert loc == request.build_absolute_uri(path)
            match = resolve(unquote(urlsplit(loc).path))
            assert (match.func, match.url_name, match.kwargs) == (value, route, {"slug": slug})


def test_locs_are_django_s_reverse_of_any_value(sitemap_schema: etree.XMLSchema) -> None:
    alias = database("default")

    @settings(max_examples=examples(50), deadline=None)
    @given(values=st.lists(slugs, min_size=1, max_size=10, unique=True))
    def run(values: list[str]) -> None:
        check_as_django(alias, values, sitemap_schema)

    run()


@pytest.mark.parametrize("alias", ["default", "postgres"])
def test_hostile_values_on_both_databases(alias: str, sitemap_schema: etree.XMLSchema) -> None:
    check_as_django(database(alias), HOSTILE, sitemap_schema)
    # The values the tables held in the field: data, not escapes.
    assert "https://example.com/values/percent%2520lit" in listed_locs(
        SitemapWSGIApp(
            base_url=BASE,
            sources=[DjangoSource(Article.objects.using(alias), loc="/values/{slug}")],
        ),
        sitemap_schema,
    )
    Article.objects.using(alias).all().delete()


# --- x-default --------------------------------------------------------------------------


def alternates(body: bytes) -> dict[str, frozenset[tuple[str | None, str | None]]]:
    return {
        url.findtext(f"{NS}loc") or "": frozenset(
            (link.get("hreflang"), link.get("href")) for link in url.iter(f"{XHTML}link")
        )
        for url in etree.fromstring(body).iter(f"{NS}url")
    }


def served_alternates(source: Any) -> dict[str, frozenset[tuple[str | None, str | None]]]:
    """Every URL of a source's pages (through the index), with its alternates."""
    app = SitemapWSGIApp(base_url=BASE, sources=[source], index="always")
    listed = {}
    for loc, _ in assert_valid_index(call_wsgi(app, path="/sitemap.xml").body):
        listed |= alternates(call_wsgi(app, path=loc.removeprefix("https://example.com")).body)
    return listed


def django_pages_listing() -> dict[str, frozenset[tuple[str | None, str | None]]]:
    """What Django's own views list for ``PageSitemap`` (i18n, alternates, x_default)."""
    client = Client(HTTP_HOST="example.com")
    index = client.get("/django/sitemap.xml", secure=True)
    listed = {}
    for loc, _ in assert_valid_index(index.content):
        if "sitemap-pages" in loc:
            page = client.get(loc.removeprefix("https://example.com"), secure=True)
            listed |= alternates(page.content)
    return listed


@pytest.mark.parametrize("alias", ["default", "postgres"])
def test_x_default_true_is_django_s_x_default(alias: str, sitemap_schema: etree.XMLSchema) -> None:
    """The same URLs and alternates as Django's views and the adopted class: x-default is
    LANGUAGE_CODE's URL without its language prefix."""
    alias = database(alias)
    Page.objects.using(alias).all().delete()
    Page.objects.using(alias).bulk_create(Page(path=p) for p in ("about", "contact", "a/b"))
    source = DjangoSource(
        Page.objects.using(alias),
        loc="/{lang}/{path}",
        languages=["en", "de"],
        x_default=True,
        name="pages",
    )
    reply = call_wsgi(SitemapWSGIApp(base_url=BASE, sources=[source]), path="/sitemap.xml")
    assert reply.status == 200
    assert_valid_urlset(reply.body, sitemap_schema)
    ours = alternates(reply.body)
    assert ours[f"{BASE}de/about"] == {
        ("en", f"{BASE}en/about"),
        ("de", f"{BASE}de/about"),
        ("x-default", f"{BASE}about"),
    }
    adopted = DjangoSitemapSource(PageSitemap, name="pages", base_url=BASE)
    if alias == "default":  # PageSitemap and Django's views read the default database
        assert ours == served_alternates(adopted)
        assert ours == django_pages_listing()
    # A language names that language's URL, as on every SQL source.
    source = DjangoSource(
        Page.objects.using(alias), loc="/{lang}/{path}", languages=["en", "de"], x_default="en"
    )
    reply = call_wsgi(SitemapWSGIApp(base_url=BASE, sources=[source]), path="/sitemap.xml")
    assert ("x-default", f"{BASE}en/about") in alternates(reply.body)[f"{BASE}de/about"]
    Page.objects.using(alias).all().delete()


def test_x_default_true_follows_language_code() -> None:
    database("default")
    Page.objects.all().delete()
    Page.objects.create(path="about")
    with override_settings(LANGUAGE_CODE="de"):
        source = DjangoSource(
            Page.objects.all(), loc="/{lang}/{path}", languages=["en", "de"], x_default=True
        )
    reply = call_wsgi(SitemapWSGIApp(base_url=BASE, sources=[source]), path="/sitemap.xml")
    assert ("x-default", f"{BASE}about") in alternates(reply.body)[f"{BASE}en/about"]
    Page.objects.all().delete()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"languages": ["de", "fr"], "loc": "/{lang}/{path}"}, "LANGUAGE_CODE 'en'"),
        ({"languages": ["en", "de"], "loc": "/pages/{path}?lang={lang}"}, "'/{lang}/'"),
    ],
)
def test_x_default_true_that_cannot_be_written_is_refused(
    options: dict[str, Any], named: str
) -> None:
    setup()
    with pytest.raises(ConfigurationError, match="x_default") as raised:
        DjangoSource(Page.objects.all(), x_default=True, **options)
    assert named in str(raised.value)


def test_x_default_true_is_django_s_only() -> None:
    from sqlalchemy import column, create_engine, select

    from sitemap_middleware import SQLAlchemySource

    stmt = select(column("id"), column("slug"))
    with pytest.raises(ConfigurationError, match=r"x_default: .*DjangoSource"):
        SQLAlchemySource(
            stmt,
            create_engine("sqlite://"),
            name="a",
            loc="/{lang}/{slug}",
            languages=["en"],
            x_default=True,
        )


def test_a_source_without_a_setting_it_needs_is_told_which() -> None:
    setup()
    with pytest.raises(ConfigurationError, match=r"^name: DjangoSitemapSource needs name="):
        DjangoSitemapSource(PageSitemap)
    with pytest.raises(ConfigurationError, match=r"^loc: DjangoSource needs loc="):
        DjangoSource(Page.objects.all())
