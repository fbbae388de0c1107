"""``robots_filter``: the locs the app's own robots.txt disallows are left out of the
sitemap, counted and logged as bad rows, and the validators move with the rules; through
the ASGI, WSGI and Django middleware (under Django's WSGI and ASGI handlers), each in front
of an app that serves a robots.txt it can change (:mod:`tests.robots_site`). A robots.txt
that cannot be read (it hangs past ``timeout``, raises, answers 5xx) never lets a
disallowed loc through nor empties the sitemap: the last rules read, or a 503."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable

import anyio
import pytest

from sitemap_middleware import (
    ConfigurationError,
    MissingExtra,
    RobotsFilter,
    SitemapMiddleware,
)
from sitemap_middleware.servers.asgi_robots import until_ended
from sitemap_middleware.state.robots_rules import ALLOW_ALL, RobotsRules, digest_of
from sitemap_middleware.testing import Response as ClientResponse

from ..robots_site import (
    ALLOWED,
    ASYNC_KINDS,
    BASE,
    KINDS,
    LOCS,
    UNAVAILABLE,
    Clock,
    RobotsServed,
    Site,
    listed,
    starlette_app,
)


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


def assert_unavailable(response: ClientResponse) -> None:
    """The answer when no rules can be read: try later, and nothing published."""
    assert response.status == 503, response
    assert response.header("retry-after") == "120"  # headers.retry_after
    assert response.header("cache-control") == "no-store"
    assert response.body == UNAVAILABLE and b"<loc>" not in response.body


FAILURES = {
    "500": ({"status": 500}, "answered 500"),
    "503": ({"status": 503}, "answered 503"),
    "redirect": ({"status": 301}, "answered 301"),
    "raises": ({"raises": True}, "failed (RuntimeError: robots.txt view failed)"),
}
"""How a robots.txt can fail, and how the log says it (Django answers 500 for a view that
raises: its handler turns the exception into a response)."""


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_robots_txt_with_no_rules_read_is_a_503(
    kind: str, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    """RFC 9309 2.3.1.4: an unreachable robots.txt is a complete disallow; for a sitemap
    that is no document at all (a 503 with Retry-After, as for a failing source), never the
    locs it may disallow nor an empty sitemap a crawler would believe."""
    options, logged = FAILURES[failure]
    served = RobotsServed(**options)  # type: ignore[arg-type]
    site = Site(kind, served, robots_filter=True)
    if kind.startswith("django") and failure == "raises":
        logged = "answered 500"
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        assert_unavailable(site.get())
        assert_unavailable(site.get("/sitemap-pages-1.xml"))
    warnings = [r.getMessage() for r in caplog.records if r.name == "sitemap_middleware"]
    assert (
        warnings
        == [
            f"robots_filter: the application's /robots.txt {logged}; "
            "none read yet: the sitemap answers 503"
        ]
        * 2
    )
    assert site.middleware.stats["pages"].urls_skipped == 0
    # Asked again at each request until it can be read (no ttl to wait for), then the
    # rules apply at once.
    assert len(served.asked) == 2
    served.status, served.raises = 200, False
    assert site.listed() == ALLOWED
    assert len(served.asked) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_robots_txt_after_rules_allows_everything(kind: str) -> None:
    """A 4xx is no file (RFC 9309 2.3.1.3): the rules read before no longer apply."""
    served = RobotsServed()
    site = Site(kind, served, robots_filter=RobotsFilter(ttl=10))
    assert site.listed() == ALLOWED
    served.status = 404
    site.clock.now += 10
    assert site.listed() == LOCS
    assert site.sitemap.robots_rules is not None and site.sitemap.robots_rules.status == 404


@pytest.mark.parametrize("kind", KINDS)
def test_the_rules_are_the_apps_not_the_middlewares_own_robots_txt(kind: str) -> None:
    """The middleware answers /robots.txt itself (the app's, or a minimal one when the app
    has none, with its ``Sitemap:`` line); the rules are read from the app below it."""
    served = RobotsServed(status=404, body=b"not here")
    site = Site(kind, served, robots_filter=True)
    own = site.get("/robots.txt")
    assert own.status == 200 and b"Sitemap: https://example.com/sitemap.xml" in own.body
    assert site.listed() == LOCS
    rules = site.sitemap.robots_rules
    assert rules is not None and rules.status == 404
    assert served.asked == ["example.com", "example.com"]  # the client's, the rules'


def hanging_kinds() -> list[tuple[str, str]]:
    """Each adapter with each kind of view its application can have."""
    return [(kind, "sync") for kind in KINDS] + [(kind, "async") for kind in ASYNC_KINDS]


async def until(probe: Callable[[], bool]) -> None:
    """Until ``probe`` comes true: what a view that was released does in its own thread or
    task (its late answer taken by the rules)."""
    with anyio.fail_after(30):
        while not probe():  # noqa: ASYNC110 (set by another thread)
            await anyio.sleep(0.01)


@pytest.mark.parametrize(("kind", "view"), hanging_kinds())
def test_a_robots_txt_that_hangs_is_given_timeout_seconds(
    kind: str, view: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A view that does not answer within ``robots_filter.timeout``: the sitemap answers
    without it (a 503 with no rules read yet), it is not asked again while it hangs, and
    its late answer is taken when it comes."""
    served = RobotsServed(hangs=True, view=view)
    site = Site(kind, served, robots_filter=RobotsFilter(timeout=0.2))

    async def scenario() -> None:
        with caplog.at_level(logging.WARNING, "sitemap_middleware"):
            assert_unavailable(await site.aget())
            assert not served.release.is_set() and served.answered == 0  # it still hangs
            assert_unavailable(await site.aget())
        assert served.asked == ["example.com"]  # one request hangs: no other is made
        assert (
            caplog.messages.count(
                "robots_filter: the application's /robots.txt gave no answer within 0.2 s; "
                "none read yet: the sitemap answers 503"
            )
            == 1
        )
        served.release.set()
        rules = site.sitemap.robots_rules
        assert rules is not None
        await until(lambda: rules.current is not None)
        assert listed(await site.aget()) == ALLOWED
        assert served.asked == ["example.com"]  # the late answer was taken

    anyio.run(scenario)


@pytest.mark.parametrize(("kind", "view"), hanging_kinds())
def test_a_robots_txt_that_hangs_after_rules_keeps_them(
    kind: str, view: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = RobotsServed(view=view)
    site = Site(kind, served, robots_filter=RobotsFilter(ttl=60, timeout=0.2))

    async def scenario() -> None:
        first = await site.aget()
        assert listed(first) == ALLOWED
        served.hangs, served.body = True, b"User-agent: *\nDisallow: /\n"
        everything = digest_of(served.body.decode())
        site.clock.now += 60
        with caplog.at_level(logging.WARNING, "sitemap_middleware"):
            kept = await site.aget(headers={"if-none-match": first.header("etag") or ""})
            assert kept.status == 304
            assert listed(await site.aget()) == ALLOWED
        assert (served.answered, len(served.asked)) == (1, 2)
        assert (
            "robots_filter: the application's /robots.txt gave no answer within 0.2 s; "
            "the last rules read are kept"
        ) in caplog.messages
        served.release.set()
        rules = site.sitemap.robots_rules
        assert rules is not None
        await until(lambda: rules.current is not None and rules.current.digest == everything)
        # Its late answer is taken: everything disallowed now, every page a 404.
        assert (await site.aget()).status == 404
        assert len(served.asked) == 2

    anyio.run(scenario)


def test_one_request_at_a_time_and_one_that_hangs_holds_the_others_for_the_ttl() -> None:
    clock = Clock()
    rules = RobotsRules(10, clock=clock, timeout=0.5)
    first = rules.due()
    assert first is not None and rules.due() is None  # one at a time
    assert rules.running() is first  # no rules yet: the others wait for its answer
    rules.timed_out(first)
    assert rules.current is None and rules.status is None
    clock.now += 9.9
    assert rules.due() is None  # it still hangs: no second request beside it
    clock.now += 0.1
    second = rules.due()
    assert second is not None and second is not first
    # The first one's late answer is taken, and does not end the second.
    rules.read(200, b"User-agent: *\nDisallow: /x\n", reading=first)
    assert first.ended.is_set() and not second.ended.is_set()
    assert rules.current is not None and not rules.current.allowed("https://example.com/x")
    assert rules.running() is None  # rules read: nobody waits any more
    rules.timed_out(second)
    rules.read(404, reading=second)
    assert rules.current is ALLOW_ALL and rules.due() is None  # within the ttl


@pytest.mark.parametrize(
    ("outcome", "status", "logged"),
    [
        ((200, b"User-agent: *\nDisallow: /x\n"), 200, None),
        ((404, b""), 404, None),
        ((503, b""), 503, "answered 503"),
        ((None, b""), None, "failed (no status line)"),
        (ValueError("boom"), None, "failed (ValueError: boom)"),
        (asyncio.CancelledError(), None, "failed (interrupted)"),
    ],
    ids=["2xx", "4xx", "5xx", "no-status", "raises", "cancelled"],
)
def test_each_outcome_of_a_request_for_the_file_is_judged_in_one_place(
    outcome: tuple[int | None, bytes] | BaseException,
    status: int | None,
    logged: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rules = RobotsRules(10, clock=Clock(), timeout=0.5)
    reading = rules.due()
    assert reading is not None
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        try:
            with rules.asking(reading) as asking:
                if isinstance(outcome, BaseException):
                    raise outcome
                asking.answer = outcome
        except asyncio.CancelledError:
            assert isinstance(outcome, asyncio.CancelledError)  # goes on being raised
    # The application's own failure is its answer: not raised further.
    assert reading.ended.is_set() and rules.status == status
    messages = [record.getMessage() for record in caplog.records]
    if logged is None:
        assert rules.current is not None and not messages
    else:
        assert rules.current is None
        assert messages == [
            f"robots_filter: the application's /robots.txt {logged}; "
            "none read yet: the sitemap answers 503"
        ]


def test_an_event_loop_waits_for_an_answer_taken_in_another_thread_without_polling() -> None:
    rules = RobotsRules(10, clock=Clock(), timeout=3600)
    reading = rules.due()
    assert reading is not None
    woken: list[str] = []
    forget = reading.on_end(lambda: woken.append("forgotten"))
    forget()
    reading.on_end(lambda: woken.append("told"))

    async def scenario() -> None:
        answering = threading.Timer(0.05, rules.read, (404,), {"reading": reading})
        answering.start()
        # Woken by the answer, not by its hour of timeout (10 s: a test that would hang).
        await asyncio.wait_for(until_ended(reading, 3600), 10)
        answering.join()

    asyncio.run(scenario())
    assert reading.ended.is_set() and woken == ["told"]
    reading.on_end(lambda: woken.append("at once"))  # already ended
    assert woken == ["told", "at once"]


def test_a_timeout_is_checked_by_name() -> None:
    with pytest.raises(ConfigurationError, match=r"^robots_filter\.timeout: .*0\.01 to 60"):
        RobotsFilter(timeout=0)
    assert RobotsFilter().timeout == 5.0


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
