"""What is Django's own in the middleware: its setting read when Django loads it, the mode
Django runs it in (a sync middleware under the ASGI handler still streams, chunk by chunk),
and the project's views around it (``mode="fallback"``, ``robots.txt``). Everything the
other adapters do is run through it by the behaviour, property and end-to-end tests."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpResponse
from django.test import override_settings
from django.urls import path
from sqlalchemy import Engine

from sitemap_middleware import (
    ConfigurationError,
    IterableSource,
    Limits,
    SitemapAborted,
    SitemapWSGIApp,
)
from sitemap_middleware.contrib.varnish import XkeyPurger

from ...adapters import MIDDLEWARE, DjangoApp, call, call_wsgi
from ...django_setup import database, setup
from ...servers.test_behaviour import boom_stmt
from ...support import article_source, eventually

pytestmark = pytest.mark.anyio
BASE = "https://example.com/"
SYNC_ONLY = f"{__name__}.SyncOnly"


class SyncOnly:
    """A middleware Django can only call synchronously: below it, ours runs sync under ASGI."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        if request.path_info == "/sitemap.xml":
            status = int(request.headers.get("x-status", "404"))
            return HttpResponse("the project's own", status=status)
        request.urlconf = "tests.adapters"  # no views: 404
        return self.get_response(request)


def built(kind: type, middleware: list[str], **setting: Any) -> DjangoApp:
    setup()
    with override_settings(MIDDLEWARE=middleware, SITEMAP_MIDDLEWARE=setting):
        return DjangoApp(kind())


async def test_a_sync_middleware_under_the_asgi_handler_streams_chunk_by_chunk(
    engine: Engine, failing_engine: Callable[[int], Engine]
) -> None:
    options = {"base_url": BASE, "limits": Limits(batch_size=100, chunk_bytes=4096)}
    app = built(ASGIHandler, [MIDDLEWARE, SYNC_ONLY], sources=[article_source(engine)], **options)
    assert not app.middleware.is_async
    other = SitemapWSGIApp(sources=[article_source(engine)], **options)
    try:
        path = "/sitemap-articles-1.xml"
        got = await call(app.handler, path=path, headers={"accept-encoding": "identity"})
        want = call_wsgi(other, path=path, headers={"accept-encoding": "identity"})
        assert got.status == 200 and got.body == want.body and got.complete
        assert len([b for b in got.bodies if b]) > 10  # streamed, not gathered whole
    finally:
        other.close()
    broken = failing_engine(900)
    source = article_source(broken, stmt=boom_stmt())
    app = built(ASGIHandler, [MIDDLEWARE, SYNC_ONLY], sources=[source], **options)
    aborted = await call(app.handler, path="/sitemap-articles-1.xml")
    assert aborted.status == 200 and not aborted.complete
    assert isinstance(aborted.error, SitemapAborted) and b"</urlset>" not in aborted.body
    # The aborted body's connection goes back from the thread that read it.
    assert eventually(lambda: broken.pool.checkedout() == 0)  # type: ignore[attr-defined]


async def test_the_setting_names_sources_or_a_function_read_when_django_loads_it() -> None:
    made: list[int] = []

    def sources() -> list[IterableSource]:
        made.append(1)
        return [IterableSource(["/a", "/b"], name="pages")]

    for kind in (WSGIHandler, ASGIHandler):
        app = built(kind, [MIDDLEWARE], sources=sources, base_url=BASE)
        response = await call(app.handler, wsgi=kind is WSGIHandler, path="/sitemap.xml")
        assert response.status == 200 and b"https://example.com/b" in response.body
    assert len(made) == 2  # once per handler, not per request
    dotted = built(
        WSGIHandler, [MIDDLEWARE], sources="tests.django_commands.sources", base_url=BASE
    )
    assert (await call(dotted.handler, wsgi=True, path="/sitemap.xml")).status == 200


def test_a_missing_or_wrong_setting_stops_the_handler() -> None:
    setup()
    with (
        override_settings(MIDDLEWARE=[MIDDLEWARE]),
        pytest.raises(ImproperlyConfigured, match=r"^SITEMAP_MIDDLEWARE: not set"),
    ):
        del_setting()
        WSGIHandler()
    for setting, message in (
        ({"base_url": BASE}, r"^SITEMAP_MIDDLEWARE\['sources'\]: required"),
        ({"sources": ["/"], "base_url": "/relative"}, r"^SITEMAP_MIDDLEWARE\['base_url'\]: "),
        (
            {"sources": ["/"], "base_url": BASE, "colour": 1},
            r"^SITEMAP_MIDDLEWARE\['colour'\]: not a",
        ),
        # A group as plain data: its fields named under it.
        (
            {"sources": ["/"], "base_url": BASE, "limits": {"max_urls": 0}},
            r"^SITEMAP_MIDDLEWARE\['limits'\]\['max_urls'\]: must be an integer from 1 ",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "limits": {"max_url": 10}},
            r"^SITEMAP_MIDDLEWARE\['limits'\]\['max_url'\]: not a setting of Limits; ",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "indexnow": {"every": 60}},
            r"^SITEMAP_MIDDLEWARE\['indexnow'\]\['key'\]: required",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "robots_filter": {"timeout": 0}},
            r"^SITEMAP_MIDDLEWARE\['robots_filter'\]\['timeout'\]: must be a number of seconds ",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "limits": 10},
            r"^SITEMAP_MIDDLEWARE\['limits'\]: must be a Limits or a mapping of its settings",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "purger": 5},
            r"^SITEMAP_MIDDLEWARE\['purger'\]: must have a purge\(keys\) method",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "purger": "tests.no_such_module.PURGER"},
            r"^SITEMAP_MIDDLEWARE\['purger'\]: cannot import ",
        ),
        (
            {"sources": ["/"], "base_url": BASE, "purger": PURGER_PATH},
            r"^SITEMAP_MIDDLEWARE\['purger'\]: the documents carry no surrogate keys",
        ),
    ):
        overridden = override_settings(MIDDLEWARE=[MIDDLEWARE], SITEMAP_MIDDLEWARE=setting)
        with overridden, pytest.raises(ConfigurationError, match=message):
            WSGIHandler()


PURGER = XkeyPurger("http://127.0.0.1:9/")
PURGER_PATH = f"{__name__}.PURGER"


def test_the_setting_names_a_purger_or_a_function_returning_one() -> None:
    keyed = {"base_url": BASE, "headers": {"surrogate_keys": ["surrogate-key"]}}
    for purger in (PURGER_PATH, PURGER, lambda: PURGER):
        app = built(WSGIHandler, [MIDDLEWARE], sources=["/a"], purger=purger, **keyed)
        assert app.middleware.sitemap.purges.purger is PURGER
        app.close()


def del_setting() -> None:
    from django.conf import settings

    if hasattr(settings, "SITEMAP_MIDDLEWARE"):
        del settings.SITEMAP_MIDDLEWARE


async def test_a_group_may_be_plain_data() -> None:
    """``{"limits": {"max_urls": 1}}`` in the Django setting is ``Limits(max_urls=1)``."""
    app = built(
        WSGIHandler, [MIDDLEWARE], sources=["/a", "/b"], base_url=BASE, limits={"max_urls": 1}
    )
    index = await call(app.handler, wsgi=True, path="/sitemap.xml")
    assert index.status == 200 and b"<sitemapindex" in index.body
    assert b"sitemap-urls-2.xml" in index.body


async def test_fallback_replaces_only_the_projects_404() -> None:
    for kind in (WSGIHandler, ASGIHandler):
        # Ours outermost, the project's SyncOnly answering /sitemap.xml itself.
        app = built(kind, [MIDDLEWARE, SYNC_ONLY], sources=["/a"], base_url=BASE, mode="fallback")
        wsgi = kind is WSGIHandler
        own = await call(app.handler, wsgi=wsgi, headers={"x-status": "200"})
        assert own.status == 200 and own.body == b"the project's own"
        replaced = await call(app.handler, wsgi=wsgi, headers={"x-status": "404"})
        assert replaced.status == 200 and b"<urlset" in replaced.body


async def test_robots_txt_gets_the_sitemap_line() -> None:
    for kind in (WSGIHandler, ASGIHandler):
        app = built(kind, [MIDDLEWARE, SYNC_ONLY], sources=["/a"], base_url=BASE)
        robots = await call(app.handler, wsgi=kind is WSGIHandler, path="/robots.txt")
        assert robots.status == 200
        assert robots.body.decode().splitlines()[-1] == "Sitemap: https://example.com/sitemap.xml"
        head = await call(app.handler, "HEAD", wsgi=kind is WSGIHandler, path="/robots.txt")
        assert head.status == 200 and head.body == b""


_robots_connections: list[Any] = []  # the connection each robots.txt read used, held


def recording_robots_txt(request: Any) -> Any:
    """The project's robots.txt from its rows; the connection it read on is recorded."""
    from django.conf import settings
    from django.db import connections

    from ...django_site.robots_urls import robots_txt

    answer = robots_txt(request)
    _robots_connections.append(connections[settings.ROBOTS_ALIAS].connection)
    return answer


urlpatterns = [path("robots.txt", recording_robots_txt)]  # ROOT_URLCONF of the test below


def test_a_robots_txt_read_closes_the_connection_it_kept() -> None:
    """``robots_filter`` asks the project's robots.txt in a thread of its own, which ends
    with the read (sync under WSGI, async under ASGI): a connection its view kept for
    ``CONN_MAX_AGE`` is closed then, not left for the garbage collector."""
    from django.db import connections

    alias = database("postgres")
    entry = connections[alias].settings_dict
    saved = entry.get("CONN_MAX_AGE", 0)
    entry["CONN_MAX_AGE"] = 60
    try:
        for kind in (WSGIHandler, ASGIHandler):
            _robots_connections.clear()
            with override_settings(ROOT_URLCONF=__name__, ROBOTS_ALIAS=alias):
                app = built(kind, [MIDDLEWARE], sources=["/a"], base_url=BASE, robots_filter=True)
                assert app.middleware.is_async is (kind is ASGIHandler)
                answer = anyio.run(partial(call, app.handler, wsgi=kind is WSGIHandler))
            assert answer.status == 200
            rules = app.sitemap.robots_rules
            assert rules is not None and rules.status == 200  # the view answered
            [connection] = _robots_connections
            assert eventually(lambda: bool(connection.closed)), kind  # noqa: B023
    finally:
        entry["CONN_MAX_AGE"] = saved


async def test_robots_filter_under_a_sync_middleware_below_the_asgi_handler() -> None:
    """Ours runs sync there (a sync-only middleware below it): the project's robots.txt is
    asked through that middleware from a thread, as an ``ASGIRequest``."""
    for kind in (WSGIHandler, ASGIHandler):
        app = built(
            kind, [MIDDLEWARE, SYNC_ONLY], sources=["/a"], base_url=BASE, robots_filter=True
        )
        assert not app.middleware.is_async
        answer = await call(app.handler, wsgi=kind is WSGIHandler)
        assert answer.status == 200 and b"<loc>https://example.com/a</loc>" in answer.body
        rules = app.sitemap.robots_rules
        assert rules is not None and rules.status == 404  # SyncOnly's URLconf: no views
