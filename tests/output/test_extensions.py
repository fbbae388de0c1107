"""Extension elements: valid against the official XSDs, bad values left out by their rule,
and never larger than the worst case pages are sized for."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from lxml import etree

from sitemap_middleware.core.urls import Site
from sitemap_middleware.output.extensions import (
    MAX_DESCRIPTION,
    MAX_NEWS_TITLE,
    MAX_TEXT,
    MAX_TITLE,
    MAX_VIDEO_TAGS,
    Alternate,
    Extensions,
    Image,
    News,
    Shape,
    Video,
    check,
    urlset_open,
)

from ..support import _schema

SITE = Site.build("https://example.com/", "/sitemap.xml")
NOW = datetime(2024, 5, 3, 12, 0, tzinfo=UTC)
CUTOFF = NOW - timedelta(days=2)
FULL = Shape(alternates=3, images=2, videos=1, news=True)


def assert_valid_with_extensions(document: bytes) -> etree._Element:
    root = etree.fromstring(document)
    schema = _schema("urlset-with-extensions.xsd")
    if not schema.validate(root):
        raise AssertionError(f"not valid: {schema.error_log}")
    return root


def written_urlset(prefixes: tuple[str, ...], *elements: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + urlset_open(prefixes)
        + "".join(elements)
        + "</urlset>\n"
    ).encode()


def written_url(loc: str, extensions: str) -> str:
    return f"<url><loc>{loc}</loc><changefreq>daily</changefreq>{extensions}</url>\n"


def test_every_extension_validates_against_the_official_schemas() -> None:
    extensions = Extensions(
        alternates={
            "en": "/en/page",
            "de-CH": "https://example.ch/de/seite",
            "x-default": "https://example.com/en/page",
        },
        images=[Image("https://cdn.example.net/a.jpg"), "/img/b é.png"],
        videos=[
            Video(
                "/thumbs/1.jpg",
                "A title & more",
                "What it shows <in> detail",
                content_loc="https://cdn.example.net/1.mp4",
                player_loc="/player?id=1&autoplay=0",
                duration=600,
                expiration_date=date(2030, 1, 1),
                rating=4.5,
                view_count=12345,
                publication_date=datetime(2024, 5, 1, 8, 0),
                tags=["cooking", "steak"],
                family_friendly=True,
                restriction=("allow", ["US", "CA"]),
                requires_subscription=False,
                uploader="Grill Master",
                platform=("deny", ["tv"]),
                live=False,
            )
        ],
        news=News("The Times", "en", datetime(2024, 5, 2, 9, 30, tzinfo=UTC), "Big news"),
    )
    checked = check(extensions, "https://example.com/en/page", SITE, FULL, UTC, CUTOFF)
    assert checked.problems == []
    document = written_urlset(
        FULL.prefixes, written_url("https://example.com/en/page", checked.xml)
    )
    root = assert_valid_with_extensions(document)
    ns = {
        "x": "http://www.w3.org/1999/xhtml",
        "image": "http://www.google.com/schemas/sitemap-image/1.1",
    }
    assert root.xpath("//x:link/@hreflang", namespaces=ns) == ["en", "de-CH", "x-default"]
    assert root.xpath("//image:loc/text()", namespaces=ns) == [
        "https://cdn.example.net/a.jpg",
        "https://example.com/img/b%20%C3%A9.png",
    ]
    assert b"xmlns:news=" in document and len(checked.xml) <= FULL.worst_case(2047)


def test_namespaces_are_declared_only_when_used() -> None:
    assert urlset_open(()) == '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    assert Shape().prefixes == () and Shape(images=1).prefixes == ("image",)
    assert Shape(alternates=2, news=True).prefixes == ("xhtml", "news")


@pytest.mark.parametrize(
    ("alternates", "problem"),
    [
        ({"en": "/en/page", "de": "/de/seite", "fr": "/fr/page", "it": "/it"}, "more than"),
        ({"de": "/de/seite", "fr": "/fr/page"}, "not among its own alternates"),
        ({"en": "/en/page", "EN": "/en/other"}, "appears twice"),
        ({"en": "/en/page", "english": "/de"}, "not a language code"),
        ({"en": "/en/page", "de": "//evil.example/de"}, "scheme-relative"),
        ([Alternate("en", "/en/page"), Alternate("de", "ftp://example.com/de")], "scheme"),
        ({"en": "/en/page", "de": "/de/../seite"}, "dot segment"),
        ({"en": "/en/page ", "de": "/de/seite"}, "not among its own alternates"),  # page%20
    ],
)
def test_alternates_are_one_group(alternates: object, problem: str) -> None:
    checked = check(
        Extensions(alternates=alternates),  # type: ignore[arg-type]
        "https://example.com/en/page",
        SITE,
        FULL,
        UTC,
        CUTOFF,
    )
    assert checked.xml == ""
    assert len(checked.problems) == 1 and problem in checked.problems[0]


def test_bad_items_are_left_out_one_by_one() -> None:
    video = Video("/t.jpg", "Title", "Description", content_loc="/v.mp4")
    extensions = Extensions(
        images=["/ok.png", "/bad\x01.png", "/third.png"],
        videos=[Video("/t.jpg", "T" * (MAX_TITLE + 1), "d", content_loc="/v.mp4"), video],
        news=News("Paper", "en-GB", NOW, "Title"),
    )
    checked = check(
        extensions, "https://example.com/p", SITE, Shape(images=2, videos=2, news=True), UTC, CUTOFF
    )
    assert checked.xml.count("<image:image>") == 1 and checked.xml.count("<video:video>") == 1
    assert "news:news" not in checked.xml
    assert len(checked.problems) == 4
    past, image, title, language = checked.problems
    assert past == "1 images past the limit left out"  # the third: two are declared
    assert "U+0001" in image and "title is 101 characters" in title and "en-GB" in language
    assert_valid_with_extensions(
        written_urlset(("image", "video"), written_url("https://example.com/p", checked.xml))
    )


def test_images_past_the_declared_maximum_are_left_out() -> None:
    checked = check(
        Extensions(images=["/1.png", "/2.png", "/3.png"]),
        "https://example.com/p",
        SITE,
        Shape(images=2),
        UTC,
        None,
    )
    assert checked.xml.count("<image:image>") == 2
    assert checked.problems == ["1 images past the limit left out"]


def test_news_older_than_two_days_loses_its_news_element() -> None:
    fresh = News("Paper", "zh-cn", CUTOFF + timedelta(seconds=1), "Fresh")
    stale = News("Paper", "en", CUTOFF - timedelta(seconds=1), "Stale")
    shape = Shape(news=True)
    assert (
        "<news:title>Fresh</news:title>"
        in check(Extensions(news=fresh), "https://example.com/a", SITE, shape, UTC, CUTOFF).xml
    )
    old = check(Extensions(news=stale), "https://example.com/a", SITE, shape, UTC, CUTOFF)
    assert old.xml == "" and old.problems == []  # aged out: not a bad row
    undeclared = check(Extensions(news=fresh), "https://example.com/a", SITE, Shape(), UTC, CUTOFF)
    assert undeclared.xml == "" and "does not declare news" in undeclared.problems[0]


def test_the_worst_case_bounds_the_longest_values() -> None:
    longest_link = "https://example.com/" + "'" * (2047 - len("https://example.com/"))
    video = Video(
        longest_link,
        "'" * MAX_TITLE,
        "'" * MAX_DESCRIPTION,
        content_loc=longest_link,
        player_loc=longest_link,
        duration=28_800,
        expiration_date=datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC),
        rating=4.55,
        view_count=10**20 - 1,
        publication_date=datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC),
        tags=["'" * MAX_TEXT] * MAX_VIDEO_TAGS,
        family_friendly=True,
        restriction=("allow", ["XX"] * 250),
        requires_subscription=True,
        uploader="'" * MAX_TEXT,
        platform=("allow", ["web", "mobile", "tv"]),
        live=True,
    )
    shape = Shape(alternates=3, images=3, videos=2, news=True)
    extensions = Extensions(
        alternates={"x-default": longest_link, "zh-Hant-TW": longest_link, "en": longest_link},
        images=[longest_link] * 3,
        videos=[video, video],
        news=News("'" * MAX_TEXT, "zh-cn", NOW, "'" * MAX_NEWS_TITLE),
    )
    checked = check(extensions, longest_link, SITE, shape, UTC, CUTOFF)
    assert checked.problems == []
    xml = checked.xml
    assert (xml.count("<xhtml:link"), xml.count("<image:image>")) == (3, 3)
    assert (xml.count("<video:video>"), xml.count("<news:news>")) == (2, 1)
    assert len(xml.encode()) <= shape.worst_case(2047)
    assert len(xml.encode()) > 0.9 * shape.worst_case(2047)  # and the bound is not loose


def test_the_page_is_found_among_its_alternates_however_its_escapes_are_spelt() -> None:
    alternates = {"de": "/de/m%c3%bcsli", "en": "https://EXAMPLE.com/en/m%C3%BCsli"}
    checked = check(
        Extensions(alternates=alternates),
        "https://example.com/de/m%C3%BCsli",
        SITE,
        FULL,
        UTC,
        CUTOFF,
    )
    assert checked.problems == [] and checked.xml.count("<xhtml:link") == 2
