"""The built-in rules of ``check`` for sitemap extensions, against urlset-with-extensions.xsd.

Every good document passes both; every bad one the XSD rejects, the built-in rules catch
too; the rules only Google states (alternates pointing both ways, counts, page URLs) are
caught by the built-in rules although the XSD accepts the document.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sitemap_middleware.cli.document import inspect
from sitemap_middleware.cli.findings import Findings

from ..support import EXTENSIONS, image, news, url, urlset, xmlns, xsd_valid

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
DECLARE = xmlns(EXTENSIONS)
SITEMAP = "https://example.com/sitemap.xml"
NOW = datetime(2024, 5, 2, 12, tzinfo=UTC)
EN, DE = "https://example.com/en/a", "https://example.com/de/a"


def link(hreflang: str, href: str, rel: str = "alternate") -> str:
    return f'<xhtml:link rel="{rel}" hreflang="{hreflang}" href="{href}"/>'


PAIR = link("en", EN) + link("de", DE) + link("x-default", EN)


def video(
    thumbnail: str = "https://example.com/t.jpg",
    title: str = "<video:title>Tour</video:title>",
    description: str = "<video:description>A walk</video:description>",
    play: str = "<video:content_loc>https://media.example.net/v.mp4</video:content_loc>",
) -> str:
    return (
        f"<video:video><video:thumbnail_loc>{thumbnail}</video:thumbnail_loc>"
        f"{title}{description}{play}</video:video>"
    )


def findings_of(body: bytes) -> Findings:
    findings = Findings()
    inspect(body, SITEMAP, NOW, findings)
    return findings


def errors(body: bytes) -> set[str]:
    return {f.code for f in findings_of(body) if f.severity == "error"}


GOOD = [
    urlset(url(EN, "<lastmod>2024-05-01</lastmod>", PAIR) + url(DE, PAIR), attributes=DECLARE),
    urlset(url(EN, image() + image("https://example.com/2.png") + video()), attributes=DECLARE),
    urlset(
        url(EN, video(play="<video:player_loc>https://example.com/p</video:player_loc>")),
        attributes=DECLARE,
    ),
    urlset(url(EN, news()) + url(DE, news("zh-cn", "2024-05-02")), attributes=DECLARE),
    # Only the namespaces used need declaring.
    urlset(
        url(EN, image()),
        attributes=' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"',
    ),
]

# (what is wrong, document, the built-in code that must catch it); the XSD rejects each.
BAD = [
    (
        "extension before lastmod",
        urlset(url(EN, image() + "<lastmod>2024-05-01</lastmod>"), attributes=DECLARE),
        "schema.order",
    ),
    ("image without loc", urlset(url(EN, "<image:image/>"), attributes=DECLARE), "image.loc"),
    (
        "image with two locs",
        urlset(
            url(
                EN,
                "<image:image><image:loc>https://e.com/1</image:loc><image:loc>https://e.com/2</image:loc></image:image>",
            ),
            attributes=DECLARE,
        ),
        "image.loc",
    ),
    (
        "image:loc alone",
        urlset(url(EN, "<image:loc>https://cdn.example.net/1.jpg</image:loc>"), attributes=DECLARE),
        "schema.extension-element",
    ),
    ("video without title", urlset(url(EN, video(title="")), attributes=DECLARE), "video.required"),
    (
        "video without description",
        urlset(url(EN, video(description="")), attributes=DECLARE),
        "video.required",
    ),
    ("news without title", urlset(url(EN, news(title="")), attributes=DECLARE), "news.required"),
    (
        "news language with region",
        urlset(url(EN, news("en-GB")), attributes=DECLARE),
        "news.language",
    ),
    ("news language in capitals", urlset(url(EN, news("EN")), attributes=DECLARE), "news.language"),
    (
        "hreflang underscore",
        urlset(url(EN, link("en_GB", EN)), attributes=DECLARE),
        "alternates.hreflang",
    ),
    (
        "news date year-month",
        urlset(url(EN, news(published="2024-05")), attributes=DECLARE),
        "news.date",
    ),
    (
        "news:publication alone",
        urlset(
            url(
                EN,
                "<news:publication><news:name>P</news:name><news:language>en</news:language></news:publication>",
            ),
            attributes=DECLARE,
        ),
        "schema.extension-element",
    ),
    (
        "image namespace 1.0",
        urlset(
            url(EN, image()),
            attributes=' xmlns:image="http://www.google.com/schemas/sitemap-image/1.0"',
        ),
        "schema.extension-namespace",
    ),
    (
        "news namespace over https",
        urlset(
            url(EN, news()),
            attributes=' xmlns:news="https://www.google.com/schemas/sitemap-news/0.9"',
        ),
        "schema.extension-namespace",
    ),
    (
        "xhtml namespace with a slash",
        urlset(url(EN, link("en", EN)), attributes=' xmlns:xhtml="http://www.w3.org/1999/xhtml/"'),
        "schema.extension-namespace",
    ),
]

# Google's rules the XSD cannot state: the XSD accepts each document.
GOOGLE_ONLY = [
    (
        "alternates without the URL itself",
        urlset(url(EN, link("de", DE)), attributes=DECLARE),
        "alternates.self",
    ),
    (
        "no return link",
        urlset(url(EN, PAIR) + url(DE, link("de", DE)), attributes=DECLARE),
        "alternates.return",
    ),
    (
        "return link missing entirely",
        urlset(url(EN, PAIR) + url(DE), attributes=DECLARE),
        "alternates.return",
    ),
    (
        "hreflang a word",
        urlset(url(EN, link("english", EN)), attributes=DECLARE),
        "alternates.hreflang",
    ),
    (
        "hreflang twice",
        urlset(url(EN, link("en", EN) + link("EN", EN)), attributes=DECLARE),
        "alternates.duplicate",
    ),
    (
        "link without rel alternate",
        urlset(url(EN, link("en", EN, rel="canonical")), attributes=DECLARE),
        "alternates.link",
    ),
    (
        "relative href",
        urlset(url(EN, link("en", EN) + link("de", "/de/a")), attributes=DECLARE),
        "alternates.href",
    ),
    ("1,001 images", urlset(url(EN, image() * 1001), attributes=DECLARE), "image.limit"),
    ("relative image", urlset(url(EN, image("/1.jpg")), attributes=DECLARE), "image.loc"),
    (
        "1,001 news",
        urlset("".join(url(f"{EN}/{i}", news()) for i in range(1001)), attributes=DECLARE),
        "news.limit",
    ),
    (
        "video without content or player",
        urlset(url(EN, video(play="")), attributes=DECLARE),
        "video.required",
    ),
    (
        "video content_loc is the page",
        urlset(
            url(EN, video(play=f"<video:content_loc>{EN}</video:content_loc>")), attributes=DECLARE
        ),
        "video.loc",
    ),
    (
        "news date in the future",
        urlset(url(EN, news(published="2024-06-01")), attributes=DECLARE),
        "news.date",
    ),
]


@pytest.mark.parametrize("body", GOOD)
def test_good_documents_pass_both(body: bytes) -> None:
    assert xsd_valid(body)
    assert list(findings_of(body)) == []


@pytest.mark.parametrize(("problem", "body", "code"), BAD, ids=[b[0] for b in BAD])
def test_bad_documents_fail_both(problem: str, body: bytes, code: str) -> None:
    assert not xsd_valid(body), problem
    assert code in errors(body)


@pytest.mark.parametrize(("problem", "body", "code"), GOOGLE_ONLY, ids=[g[0] for g in GOOGLE_ONLY])
def test_google_rules_beyond_the_schema(problem: str, body: bytes, code: str) -> None:
    assert xsd_valid(body), problem
    assert errors(body) == {code}


def test_undeclared_prefixes() -> None:
    body = urlset(url(EN, image()), attributes="")
    assert errors(body) == {"xml.namespace"}
    attribute = urlset(
        url(EN, '<x:y xmlns:x="http://www.w3.org/1999/xhtml" xhtml:href="a"/>'), attributes=""
    )
    assert errors(attribute) == {"xml.namespace"}


def test_warnings_do_not_fail() -> None:
    retired = urlset(url(EN, image(extra="<image:caption>Old</image:caption>")), attributes=DECLARE)
    old_news = urlset(url(EN, news(published="2024-04-28")), attributes=DECLARE)
    other_xhtml = urlset(url(EN, '<xhtml:meta name="x" content="y"/>'), attributes=DECLARE)
    for body, code in [
        (retired, "image.retired"),
        (old_news, "news.old"),
        (other_xhtml, "alternates.element"),
    ]:
        found = findings_of(body)
        assert [(f.code, f.severity) for f in found] == [(code, "warning")]
    # Two days back is still news (with an hour's allowance for the server's clock).
    assert (
        list(
            findings_of(urlset(url(EN, news(published="2024-04-30T11:30:00Z")), attributes=DECLARE))
        )
        == []
    )
    # An unknown namespace is a warning (the XSD rejects it; crawlers skip it).
    unknown = urlset(url(EN, '<m:mobile xmlns:m="http://example.org/mobile"/>'), attributes="")
    assert [(f.code, f.severity) for f in findings_of(unknown)] == [("schema.extension", "warning")]


def test_return_links_span_the_document_only() -> None:
    # An alternate that is not in this document (another sitemap lists it) is not judged.
    body = urlset(url(EN, PAIR), attributes=DECLARE)
    assert errors(body) == set()
    findings = findings_of(urlset(url(EN, PAIR) + url(DE, link("de", DE)), attributes=DECLARE))
    (finding,) = list(findings)
    assert finding.examples == [f"{DE} does not list {EN}"]
