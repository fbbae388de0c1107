"""Routes: which document a path names (``routing.py``), and the path of each document."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.core.routing import (
    NOT_FOUND,
    DocumentTarget,
    PageTarget,
    RootTarget,
    Routes,
    Target,
)

NAMES = ["articles", "news", "news-2024"]
ROUTES = Routes("/sitemap.xml", NAMES)
HTML = Routes("/sitemap.xml", NAMES, html=True)


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/sitemap.xml", RootTarget()),
        ("/sitemap.xml.gz", RootTarget(gz=True)),
        ("/sitemap-articles-1.xml", PageTarget("articles", 1)),
        ("/sitemap-articles-3.xml.gz", PageTarget("articles", 3, gz=True)),
        # The longest name wins: "news-2024" is not page 2024 of "news" here...
        ("/sitemap-news-2024-1.xml", PageTarget("news-2024", 1)),
        # ...but is there, where no page number follows it.
        ("/sitemap-news-2024.xml", PageTarget("news", 2024)),
        # Pages of 64-bit keys: up to 19 digits.
        ("/sitemap-articles-9223372036854775807.xml", PageTarget("articles", 2**63 - 1)),
        ("/sitemap-articles-9999999999999999999.xml", PageTarget("articles", 10**19 - 1)),
    ],
)
def test_documents_are_named_by_their_paths(path: str, target: Target) -> None:
    assert ROUTES.match(path) == target


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-articles-0.xml",
        "/sitemap-articles-01.xml",
        "/sitemap-articles--1.xml",
        "/sitemap-articles-+1.xml",
        "/sitemap-articles-x.xml",
        "/sitemap-articles-1.5.xml",
        "/sitemap-articles- 1.xml",
        "/sitemap-articles-\u0661.xml",  # an Arabic-Indic digit: int() reads it, routes do not
        "/sitemap-articles-10000000000000000000.xml",  # 20 digits
        "/sitemap-articles.xml",
        "/sitemap-other-1.xml",
        "/sitemap-Articles-1.xml",
        "/sitemap-.xml",
        "/sitemap--1.xml",
    ],
)
def test_any_other_xml_under_the_prefix_is_ours_and_names_nothing(path: str) -> None:
    for suffix in ("", ".gz"):
        assert ROUTES.match(path + suffix) == NOT_FOUND


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/other",
        "/sitemap",
        "/sitemap.xml/",
        "/sitemap.xml.gz.gz",
        "/sitemaps-articles-1.xml",
        "/sitemap-articles-1.txt",
        "/sitemap-articles-1.xml/",
        "/sitemap.html",  # the human view is off
        "/sitemap-articles-1.html",
        "/blog/sitemap.xml",
        "/SITEMAP.XML",
    ],
)
def test_other_paths_are_not_the_sitemaps(path: str) -> None:
    assert ROUTES.match(path) is None


def test_the_html_siblings_exist_only_with_the_human_view() -> None:
    assert HTML.match("/sitemap.html") == RootTarget(html=True)
    assert HTML.match("/sitemap-news-2-2.html") == NOT_FOUND
    assert HTML.match("/sitemap-news-2024-2.html") == PageTarget("news-2024", 2, html=True)
    assert HTML.match("/sitemap-articles-01.html") == NOT_FOUND
    assert HTML.match("/sitemap.html.gz") is None  # no gzip file of a page for people
    assert HTML.match("/sitemap-articles-1.html.gz") is None
    assert HTML.match("/sitemap.xml") == RootTarget()  # the XML stays where it was
    assert HTML.html_path(RootTarget()) == "/sitemap.html"
    assert HTML.html_path(PageTarget("articles", 4, gz=True)) == "/sitemap-articles-4.html"


def test_children_sit_in_the_roots_directory() -> None:
    routes = Routes("/maps/site.xml", ["articles"])
    assert routes.child_prefix == "/maps/site-"
    assert routes.match("/maps/site-articles-2.xml") == PageTarget("articles", 2)
    assert routes.match("/site-articles-2.xml") is None
    assert routes.match("/maps/sitemap-articles-2.xml") is None
    assert routes.page_path("articles", 2, gz=True) == "/maps/site-articles-2.xml.gz"
    assert routes.path_of(RootTarget(gz=True)) == "/maps/site.xml.gz"
    assert routes.html_path(RootTarget()) == "/maps/site.html"


targets = st.one_of(
    st.builds(RootTarget, gz=st.booleans()),
    st.builds(
        PageTarget,
        st.sampled_from(NAMES),
        st.integers(1, 10**19 - 1),
        st.booleans(),
    ),
    st.builds(PageTarget, st.sampled_from(NAMES), st.integers(1, 10**19 - 1), html=st.just(True)),
    st.just(RootTarget(html=True)),
)


@given(targets)
def test_every_document_is_found_again_at_its_path(target: DocumentTarget) -> None:
    path = HTML.path_of(target)
    assert HTML.match(path) == target
    if not target.html:
        assert ROUTES.match(path) == target
        if isinstance(target, PageTarget):
            assert path == ROUTES.page_path(target.source, target.page, target.gz)


def test_targets_spell_their_part_of_the_entity_tag_as_ever() -> None:
    # Same data, same tag, across versions too: replicas upgraded one at a time agree.
    assert RootTarget().tag_text == (
        "Target(source=None, page=None, gz=False, valid=True, html=False, key_file=False)"
    )
    assert PageTarget("news-2024", 3, gz=True).tag_text == (
        "Target(source='news-2024', page=3, gz=True, valid=True, html=False, key_file=False)"
    )
    assert RootTarget(html=True).tag_text == (
        "Target(source=None, page=None, gz=False, valid=True, html=True, key_file=False)"
    )
