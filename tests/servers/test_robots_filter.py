"""``robots_filter``: the locs the app's own robots.txt disallows are left out of the
sitemap, counted and logged as bad rows, and the validators move with the rules; through
the ASGI and WSGI middleware, each around an app that serves a robots.txt it can change."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from sitemap_middleware import (
    ConfigurationError,
    MissingExtra,
    RobotsFilter,
    SitemapMiddleware,
    SitemapWSGIMiddleware,
)
from sitemap_middleware.core.sitemap import Sitemap
from sitemap_middleware.state.robots_rules import RobotsRules, digest_of
from sitemap_middleware.testing import ASGIClient, WSGIClient
from sitemap_middleware.testing import Response as ClientResponse

BASE = "https://example.com/"
LOCS = ["/", "/public/a", "/private/b", "/private/c", "/drafts/d"]
DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow: /\n"


@dataclass
class RobotsServed:
    """What the app answers for /robots.txt, changed by the tests; each request counted."""

    status: int = 200
    body: bytes = DISALLOW_PRIVATE
    raises: bool = False
    asked: list[str] = field(default_factory=list)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def starlette_app(served: RobotsServed) -> Starlette:
    async def robots(request: Request) -> Response:
        served.asked.append(request.headers.get("host", ""))
        if served.raises:
            raise RuntimeError("robots.txt view failed")
        return PlainTextResponse(served.body, status_code=served.status)

    return Starlette(routes=[Route("/robots.txt", robots)])


def wsgi_app(served: RobotsServed) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ["PATH_INFO"] != "/robots.txt":
            start_response("404 Not Found", [("content-type", "text/plain")])
            return [b""]
        served.asked.append(environ.get("HTTP_HOST", ""))
        if served.raises:
            raise RuntimeError("robots.txt view failed")
        start_response(f"{served.status} X", [("content-type", "text/plain")])
        return [served.body]

    return app


class Site:
    """One middleware around an app whose robots.txt the test controls."""

    def __init__(self, kind: str, served: RobotsServed, **settings: Any) -> None:
        self.kind = kind
        options: dict[str, Any] = {"sources": {"pages": LOCS}, "base_url": BASE, **settings}
        self.middleware: SitemapMiddleware | SitemapWSGIMiddleware
        if kind == "asgi":
            self.middleware = SitemapMiddleware(starlette_app(served), **options)
        else:
            self.middleware = SitemapWSGIMiddleware(wsgi_app(served), **options)
        self.clock = Clock()
        rules = self.sitemap.robots_rules
        if rules is not None:
            rules.clock = self.clock

    @property
    def sitemap(self) -> Sitemap:
        return self.middleware.sitemap

    def get(self, path: str = "/sitemap.xml", headers: dict[str, str] | None = None) -> Any:
        if isinstance(self.middleware, SitemapMiddleware):
            client = ASGIClient(self.middleware, BASE)

            async def request() -> ClientResponse:
                return await client.request("GET", path, headers)

            return anyio.run(request)
        return WSGIClient(self.middleware, BASE).request("GET", path, headers)

    def listed(self) -> list[str]:
        response = self.get()
        assert response.status == 200, response
        text = response.body.decode()
        return [loc for loc in LOCS if f"<loc>{BASE.rstrip('/')}{loc}</loc>" in text]


KINDS = ["asgi", "wsgi"]


@pytest.mark.parametrize("kind", KINDS)
def test_disallowed_locs_are_left_out_counted_and_logged(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = RobotsServed()
    site = Site(kind, served, robots_filter=True)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        assert site.listed() == ["/", "/public/a", "/drafts/d"]
    # Googlebot's group disallows everything: only User-agent: * decides.
    stats = site.middleware.stats["pages"]
    assert (stats.rows_skipped, stats.urls_skipped) == (2, 2)
    assert all("robots-disallowed" in bad.reason for bad in stats.recent)
    assert {bad.key for bad in stats.recent} == {"2", "3"}
    logged = [r.getMessage() for r in caplog.records if "robots-disallowed" in r.getMessage()]
    assert len(logged) == 2 and "https://example.com/private/b" in logged[0]
    # Asked once, in process, with the base URL's Host.
    assert served.asked == ["example.com"]
    assert site.listed() == ["/", "/public/a", "/drafts/d"]
    assert served.asked == ["example.com"]  # within the ttl: not asked again
    stats = site.middleware.stats["pages"]
    assert stats.urls_skipped == 4  # counted each time a document holds them


@pytest.mark.parametrize("kind", KINDS)
def test_off_by_default_lists_every_loc_and_never_asks(kind: str) -> None:
    served = RobotsServed()
    site = Site(kind, served)
    assert site.sitemap.robots_rules is None
    assert site.listed() == LOCS
    assert served.asked == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_changed_robots_txt_moves_the_etag_after_the_ttl(kind: str) -> None:
    served = RobotsServed()
    site = Site(kind, served, robots_filter=RobotsFilter(ttl=60))
    first = site.get()
    etag = first.header("etag")
    assert etag is not None
    assert site.get(headers={"if-none-match": etag}).status == 304

    served.body = b"User-agent: *\nDisallow: /drafts/\n"
    site.clock.now += 59
    assert site.get(headers={"if-none-match": etag}).status == 304  # not read again yet
    site.clock.now += 1
    changed = site.get(headers={"if-none-match": etag})
    assert changed.status == 200 and changed.header("etag") != etag
    assert site.listed() == ["/", "/public/a", "/private/b", "/private/c"]
    assert len(served.asked) == 2

    # Comments and Sitemap lines change nothing listed: the validators hold.
    served.body = b"# edited\nUser-agent: *\nDisallow: /drafts/ # why\nSitemap: /x.xml\n"
    site.clock.now += 60
    assert site.get(headers={"if-none-match": changed.header("etag")}).status == 304
    assert len(served.asked) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_robots_txt_allows_everything(kind: str) -> None:
    served = RobotsServed(status=404, body=b"not here")
    site = Site(kind, served, robots_filter=True)
    assert site.listed() == LOCS
    assert site.middleware.stats["pages"].urls_skipped == 0
    assert site.sitemap.robots_rules is not None and site.sitemap.robots_rules.status == 404


@pytest.mark.parametrize("kind", KINDS)
def test_a_failing_robots_txt_keeps_the_last_rules(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = RobotsServed()
    site = Site(kind, served, robots_filter=RobotsFilter(ttl=10))
    etag = site.get().header("etag")
    for failure in ("status", "raises"):
        served.status, served.raises = (503, False) if failure == "status" else (200, True)
        site.clock.now += 10
        with caplog.at_level(logging.WARNING, "sitemap_middleware"):
            assert site.get(headers={"if-none-match": etag}).status == 304
        assert "the last rules read are kept" in caplog.text
        assert site.listed() == ["/", "/public/a", "/drafts/d"]
        caplog.clear()


@pytest.mark.parametrize("kind", KINDS)
def test_a_failing_robots_txt_with_no_rules_read_leaves_nothing_out(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = RobotsServed(status=500)
    site = Site(kind, served, robots_filter=True)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        assert site.listed() == LOCS
    assert "answered 500" in caplog.text and "no loc is left out" in caplog.text
    # Once the file can be read, the rules apply (and the validators say so).
    etag = site.get().header("etag")
    served.status = 200
    site.clock.now += 300
    assert site.get(headers={"if-none-match": etag}).status == 200
    assert site.listed() == ["/", "/public/a", "/drafts/d"]


@pytest.mark.parametrize("kind", KINDS)
def test_strict_still_serves_what_robots_txt_allows(kind: str) -> None:
    site = Site(kind, RobotsServed(), robots_filter=True, strict=True)
    assert site.listed() == ["/", "/public/a", "/drafts/d"]


def test_the_html_view_and_pages_follow_the_same_rules() -> None:
    served = RobotsServed()
    site = Site("asgi", served, robots_filter=True, html=True, index="always")
    page = site.get("/sitemap-pages-1.xml")
    assert page.status == 200 and b"/private/" not in page.body and b"/public/a" in page.body
    table = site.get("/sitemap-pages-1.html")
    assert table.status == 200 and b"/private/" not in table.body and b"3 URLs" in table.body


def test_every_row_disallowed_is_a_404() -> None:
    served = RobotsServed(body=b"User-agent: *\nDisallow: /\n")
    site = Site("wsgi", served, robots_filter=True)
    assert site.get().status == 404
    assert site.middleware.stats["pages"].urls_skipped == len(LOCS)


def test_the_digest_is_of_the_rules_alone() -> None:
    assert digest_of("User-agent: *\nDisallow: /a\n") == digest_of(
        "# c\nuser-agent:*\n\nDISALLOW: /a   # why\nSitemap: https://x/s.xml\nCrawl-delay: 4\n"
    )
    assert digest_of("User-agent: *\nDisallow: /a\n") != digest_of("User-agent: *\nAllow: /a\n")


def test_settings_check_the_ttl_and_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match=r"^robots_filter\.ttl: "):
        RobotsFilter(ttl=0)
    from sitemap_middleware import settings

    real = settings.find_spec
    monkeypatch.setattr(
        settings, "find_spec", lambda name: None if name == "protego" else real(name)
    )
    with pytest.raises(ConfigurationError, match=r"^robots_filter: .*sitemap_middleware\[robots\]"):
        SitemapMiddleware(
            starlette_app(RobotsServed()), sources=LOCS, base_url=BASE, robots_filter=True
        )


def test_a_missing_protego_fails_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "protego", None)  # import protego raises ImportError
    with pytest.raises(MissingExtra, match=r"^robots_filter needs protego.*\[robots\]"):
        RobotsRules(60)
