"""The pure parts of the indexability audit: what a page tells crawlers, robots.txt as RFC 9309
reads it (through protego), the verdict on each URL, sources, and the baseline file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.cli.baseline import BaselineError, read_baseline
from sitemap_middleware.cli.indexable import source_of
from sitemap_middleware.cli.indexable_rules import (
    Found,
    Visit,
    hreflang_findings,
    page_findings,
)
from sitemap_middleware.cli.pace import Pace
from sitemap_middleware.cli.page_signals import (
    Signals,
    header_links,
    read_signals,
    x_robots_noindex,
)
from sitemap_middleware.cli.robots_txt import RobotsTxt, fetch, read, robots_url
from sitemap_middleware.cli.scope import resource

URL = "https://example.com/a/page"


def page(head: str = "", body: str = "") -> bytes:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>".encode()


@pytest.mark.parametrize(
    ("value", "crawlers"),
    [
        ("noindex", ["*"]),
        ("NoIndex, nofollow", ["*"]),
        ("none", ["*"]),
        ("nofollow", []),
        ("googlebot: noindex", ["Googlebot"]),
        ("Googlebot: nofollow, noindex", ["Googlebot"]),  # the name holds for what follows
        ("bingbot: noindex", ["Bingbot"]),
        ("otherbot: noindex, nofollow", []),  # a crawler of no concern
        ("googlebot: nofollow, bingbot: noindex", ["Bingbot"]),
        ("unavailable_after: 25 Jun 2010 15:00:00 PST", []),  # a directive, not a name
        ("max-snippet: 20, noindex", ["*"]),
        ("noindexes", []),
    ],
)
def test_x_robots_tag(value: str, crawlers: list[str]) -> None:
    assert list(x_robots_noindex(value)) == crawlers


def test_meta_robots_generic_and_per_crawler_anywhere_in_the_page() -> None:
    signals = read_signals(
        URL,
        page(
            '<meta name="ROBOTS" content="NOINDEX">',
            '<meta name="googlebot" content="nofollow, none"><meta name="bingbot" '
            'content="index"><meta name="otherbot" content="noindex">'
            '<meta name="description" content="noindex">',
        ),
        None,
    )
    assert [crawler for crawler, _ in signals.noindex] == ["*", "Googlebot"]
    assert signals.noindex[1][1] == '<meta name="googlebot" content="nofollow, none">'


def test_canonicals_from_the_head_and_the_link_header() -> None:
    signals = read_signals(
        URL,
        page(
            '<base href="https://example.com/b/"><link rel="Canonical" href="other">'
            '<link rel="alternate" hreflang="de" href="/de/page">'
            '<link rel="alternate" href="/feed.xml">',  # no hreflang: not an alternate
            '<link rel="canonical" href="/in-body">',  # Google ignores it there
        ),
        "utf-8",
        links=[
            '<https://example.com/a/page>; rel="canonical", </fr/page>; rel=alternate; '
            'hreflang="fr"',
            '<https://example.com/x>; rel="preload"; as="style"',
        ],
    )
    assert signals.canonicals == (
        ("https://example.com/a/page", 'Link: <https://example.com/a/page>; rel="canonical"'),
        ("https://example.com/b/other", '<link rel="canonical" href="other">'),
    )
    assert signals.alternates == {"https://example.com/de/page", "https://example.com/fr/page"}


def test_link_header_parameters() -> None:
    parsed = list(
        header_links(['<a, b>; REL="canonical next"; title="x\\"y, z", <c>;rel=alternate'])
    )
    assert parsed == [
        ("a, b", {"rel": "canonical next", "title": 'x"y, z'}),
        ("c", {"rel": "alternate"}),
    ]


def test_hrefs_that_are_no_urls() -> None:
    signals = read_signals(
        URL,
        page('<base href="//["><link rel="canonical" href="http://[">'),
        None,
        links=['<http://[x>; rel="alternate"; hreflang="de"'],
    )
    assert signals.canonicals == (("http://[", '<link rel="canonical" href="http://[">'),)
    assert signals.alternates == {"http://[x"}
    (found,) = page_findings(Visit(URL, 200, signals=signals), None)
    assert found.detail == 'canonical http://[ (<link rel="canonical" href="http://[">)'


@pytest.mark.parametrize("body", [None, b"", b"   ", b"\x00\xff", b"<p>no head"])
def test_any_body_reads(body: bytes | None) -> None:
    signals = read_signals(URL, body, "no-such-charset", ["noindex"])
    assert [crawler for crawler, _ in signals.noindex] == ["*"]


HEAD_PARTS = [
    '<link rel="canonical" href="http://[">',
    '<base href="//[">',
    "<base>",
    '<meta name="googlebot" content="none">',
    "<meta name=robots>",
    '<link rel=alternate hreflang=de href="de">',
    "<link rel=canonical>",
    "<link rel=canonical href='  /x  '>",
    "<title>",
    "</head><body>",
]


@given(
    st.binary(max_size=300)
    | st.text(max_size=300).map(lambda t: page(t).replace(b"x", b"<"))
    | st.lists(st.sampled_from(HEAD_PARTS), max_size=8).map(lambda parts: page("".join(parts))),
    st.none() | st.sampled_from(["utf-8", "latin-1", "utf-16", "x-unknown", ""]),
    st.lists(st.text(max_size=40), max_size=3),
    st.lists(st.text(max_size=60), max_size=3),
)
def test_any_page_reads_without_error(
    body: bytes, charset: str | None, tags: list[str], links: list[str]
) -> None:
    signals = read_signals(URL, body, charset, tags, links)
    assert all(crawler in ("*", "Googlebot", "Bingbot") for crawler, _ in signals.noindex)
    page_findings(Visit(URL, 200, signals=signals), None)


def visit(status: int = 200, **signals: object) -> Visit:
    return Visit(URL, status, signals=Signals(**signals))  # type: ignore[arg-type]


def test_status_redirect_and_unreachable() -> None:
    moved = Visit(URL, 301, location="https://example.com/b")
    assert page_findings(moved, None) == [
        Found("indexable.redirect", URL, "301 to https://example.com/b")
    ]
    assert page_findings(Visit(URL, 302), None)[0].detail == "302 to (no Location)"
    assert page_findings(visit(404), None) == [Found("indexable.status", URL, "404")]
    assert page_findings(visit(204), None) == [Found("indexable.status", URL, "204")]
    gone = Visit(URL, error="GET: ConnectError")
    assert page_findings(gone, None) == [Found("indexable.unreachable", URL, "GET: ConnectError")]
    # A page that does not answer 200 is not read: its canonical is not judged.
    other = (("https://example.com/b", "<link>"),)
    assert [f.code for f in page_findings(visit(404, canonicals=other), None)] == [
        "indexable.status"
    ]


@pytest.mark.parametrize(
    ("canonicals", "detail"),
    [
        ((), None),
        (((URL, "<link>"),), None),
        ((("HTTPS://EXAMPLE.COM:443/a/p%61ge", "<link>"),), None),  # the same resource
        (((URL, "<link>"), (URL, "Link")), None),  # twice, agreeing
        ((("https://example.com/b", "<link>"),), "canonical https://example.com/b (<link>)"),
        (
            ((URL, "<link>"), ("https://example.com/b", "Link")),
            f"several canonicals: {URL} (<link>); https://example.com/b (Link)",
        ),
    ],
)
def test_canonical(canonicals: tuple[tuple[str, str], ...], detail: str | None) -> None:
    found = page_findings(visit(canonicals=canonicals), None)
    assert found == ([] if detail is None else [Found("indexable.canonical", URL, detail)])


def test_noindex_names_whom() -> None:
    generic = (("*", "<meta robots>"), ("Googlebot", "X-Robots-Tag: googlebot: noindex"))
    (found,) = page_findings(visit(noindex=generic), None)
    assert found.detail == (
        "<meta robots>; X-Robots-Tag: googlebot: noindex (noindex for every crawler)"
    )
    both = (("Googlebot", "a"), ("Bingbot", "b"))
    (found,) = page_findings(visit(noindex=both), None)
    assert found.detail == "a; b (noindex for Bingbot and Googlebot)"


ROBOTS = """\
User-agent: Googlebot
Disallow: /a/
Allow: /a/open

User-agent: bingbot
Disallow: /b/

User-agent: *
Disallow: /a/page
Disallow: /*.pdf$
"""


def test_robots_txt_groups_per_crawler() -> None:
    robots = read(robots_url(URL), 200, ROBOTS.encode())
    assert robots.url == "https://example.com/robots.txt"
    # Googlebot's own group, not "*": /a/ closed to it, /a/open not.
    assert robots.disallowed(URL) == ["Googlebot", "*"]
    assert robots.disallowed("https://example.com/a/open") == []
    assert robots.disallowed("https://example.com/b/x") == ["Bingbot"]
    assert robots.disallowed("https://example.com/doc.pdf") == ["*"]
    assert robots.disallowed("https://example.com/doc.pdf?x") == []
    assert robots.disallowed("https://example.com/robots.txt") == []
    (found,) = page_findings(visit(), robots)
    assert found == Found("indexable.robots", URL, "disallowed for Googlebot, *")


@pytest.mark.parametrize(
    ("status", "closed"), [(404, []), (401, []), (403, []), (500, ["Googlebot", "Bingbot", "*"])]
)
def test_robots_txt_status_rfc_9309(status: int, closed: list[str]) -> None:
    robots = read("https://example.com/robots.txt", status, b"User-agent: *\nDisallow: /\n")
    assert robots.disallowed(URL) == closed


def test_an_unreachable_robots_txt_closes_everything() -> None:
    robots = read("https://example.com/robots.txt", None, None, "ConnectError")
    assert robots.disallowed(URL) == ["Googlebot", "Bingbot", "*"]
    (found,) = page_findings(Visit(URL, 200), robots)
    assert found.detail.startswith("disallowed for Googlebot, Bingbot, * (no answer (ConnectError)")
    assert RobotsTxt("x").disallowed(URL) == []


DE = "https://example.com/de/page"
FR = "https://example.com/fr/page"


def test_hreflang_listed_back_by_the_sitemap_or_the_page() -> None:
    alternates = frozenset({URL, DE, FR})
    back = {resource(DE): Visit(DE, 200, signals=Signals(alternates=frozenset({URL})))}
    back[resource(FR)] = Visit(FR, 200)
    # FR's sitemap entry lists URL back; DE's page does.
    in_sitemap = {(FR, URL)}
    assert hreflang_findings(URL, alternates, lambda a, u: (a, u) in in_sitemap, back) == []
    # Neither for FR: one-way.
    (found,) = hreflang_findings(URL, alternates, lambda a, u: False, back)
    assert (found.code, found.url, found.subject) == ("indexable.hreflang", URL, FR)
    assert "does not list it back (neither its sitemap entry nor its page)" in found.detail
    # An alternate that redirects or is missing.
    back[resource(FR)] = Visit(FR, 301, location=URL)
    (found,) = hreflang_findings(URL, alternates, lambda a, u: False, back)
    assert found.detail == f"the alternate {FR} answers 301 to {URL}"
    assert found.key == ("indexable.hreflang", URL, FR)


@pytest.mark.parametrize(
    ("url", "source"),
    [
        ("https://example.com/sitemap.xml", "/sitemap"),
        ("https://example.com/sitemap-articles-1.xml", "/sitemap-articles"),
        ("https://example.com/sitemap-articles-12.xml.gz", "/sitemap-articles"),
        ("https://example.com/blog/sitemap_3.xml", "/blog/sitemap"),
        ("https://example.com/sitemap-pages.xml?p=2", "/sitemap-pages"),
        ("https://example.com/maps/1.xml", "/maps/1"),
    ],
)
def test_source_of(url: str, source: str) -> None:
    assert source_of(url) == source


def test_baseline(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    found = [
        {"code": "indexable.status", "url": URL, "subject": "", "detail": "404"},
        {"code": "indexable.hreflang", "url": URL, "subject": DE},
        {"code": "indexable.noindex", "url": DE},  # no subject: none
    ]
    path.write_text(json.dumps({"indexable": {"found": found}}))
    assert read_baseline(path) == {
        ("indexable.status", URL, ""),
        ("indexable.hreflang", URL, DE),
        ("indexable.noindex", DE, ""),
    }
    path.write_text(json.dumps([found]))
    with pytest.raises(BaselineError, match="no indexability findings"):
        read_baseline(path)


Reply = tuple[int, dict[str, str], bytes]


def robots_fetched(answers: dict[str, Reply | Exception]) -> tuple[RobotsTxt, list[str]]:
    """robots_txt.fetch of https://example.com/robots.txt against scripted answers by URL;
    the robots.txt read and the URLs requested."""
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        found = answers[str(request.url)]
        if isinstance(found, Exception):
            raise found
        status, headers, content = found
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(content))

    async def run() -> RobotsTxt:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            return await fetch(Pace(client, 1, 0), "https://example.com/robots.txt")

    return anyio.run(run), asked


def moved(to: str) -> Reply:
    return 301, {"location": to}, b""


def test_robots_txt_fetch_follows_five_redirects() -> None:
    rules = gzip.compress(b"User-agent: *\nDisallow: /a/\n")
    hops = {f"https://example.com/r{i}": moved(f"/r{i + 1}") for i in range(1, 5)}
    answers: dict[str, Reply | Exception] = {
        "https://example.com/robots.txt": moved("/r1"),
        **hops,
        "https://example.com/r5": (200, {"content-encoding": "gzip"}, rules),
    }
    robots, asked = robots_fetched(answers)
    assert len(asked) == 6 and robots.status == 200
    assert robots.disallowed(URL) == ["Googlebot", "Bingbot", "*"]
    assert robots.note == "200: rules read (redirected to https://example.com/r5)"
    answers["https://example.com/r5"] = moved("/r6")  # a sixth: unavailable
    robots, asked = robots_fetched(answers)
    assert len(asked) == 6 and robots.disallowed(URL) == []
    assert robots.note.startswith("more than 5 redirects")


def test_robots_txt_fetch_errors() -> None:
    url = "https://example.com/robots.txt"
    robots, _ = robots_fetched({url: (503, {}, b"")})
    assert robots.disallow_all and robots.note.startswith("503: unreachable")
    robots, _ = robots_fetched({url: httpx.ConnectError("refused")})
    assert robots.disallow_all and robots.status is None and "refused" in robots.note
    robots, _ = robots_fetched({url: (410, {}, b"User-agent: *\nDisallow: /")})
    assert robots.disallowed(URL) == [] and robots.note.startswith("410: unavailable")
