"""Django's testing patterns, as a Django project's own tests use them: ``TestCase`` with
``Client`` and with ``AsyncClient``, ``TransactionTestCase`` and ``override_settings``, on
the test databases Django's test runner sets up, with the default freshness. The rows a
test writes are listed, the validators follow the test's writes, and nothing is logged;
for the adopted ``Sitemap`` classes, ``DjangoSource`` and ``AsyncDjangoSource`` alike.

The databases are set up by Django's test machinery (``setup_test_environment`` and
``setup_databases``, what ``DiscoverRunner`` does before running a project's tests), once
for this module and torn down after it: SQLite in memory (Django's shared-cache test
database, where a read on another connection meets the test's write lock), and the
PostgreSQL database of the suite, kept (``keepdb``: the role cannot create databases) with
its tables in the process's schema. pytest-django is not used: it would own the settings
and block database access for the rest of the suite, whose Django tests set up their
tables themselves (``tests.django_setup``). The test classes are plain
``django.test`` classes; pytest collects them as unittest cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from lxml import etree

from ...django_setup import database, setup
from ...support import join_job_threads

setup()

from django.conf import settings  # noqa: E402
from django.contrib.sitemaps import Sitemap  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.test import (  # noqa: E402
    AsyncClient,
    Client,
    TestCase,
    TransactionTestCase,
    override_settings,
)
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)

from sitemap_middleware import Freshness  # noqa: E402
from sitemap_middleware.contrib.django import (  # noqa: E402
    AsyncDjangoSource,
    DjangoSitemapSource,
    DjangoSource,
)

from ...django_site.shop.models import Article  # noqa: E402

# The default freshness (tests/conftest.py runs unmarked tests in the exact mode).
BASE = "https://example.com/"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
_databases: dict[str, Any] = {}  # alias -> what teardown_databases restores


def prepare_databases(alias: str) -> None:
    """Django's test database for ``alias``, set up once for the module."""
    if alias in _databases:
        return
    if alias != "default":
        database(alias)  # skips without a server; the process's schema and its tables
        # Kept, not created (the role cannot create databases): the suite's database,
        # its tables in the process's schema, synced without migrations.
        test = connections[alias].settings_dict["TEST"]
        test.update(NAME=connections[alias].settings_dict["NAME"], MIGRATE=False)
        test["DEPENDENCIES"] = []
    if not _databases:
        setup_test_environment()
    _databases[alias] = setup_databases(
        verbosity=0, interactive=False, keepdb=alias != "default", aliases={alias}
    )
    if alias != "default":  # kept: emptied of what the suite's other tests left there
        call_command("flush", database=alias, interactive=False, verbosity=0)


def tearDownModule() -> None:
    if not _databases:
        return
    for alias, old_config in _databases.items():
        teardown_databases(old_config, verbosity=0, keepdb=alias != "default")
        connections[alias].close()  # SQLite keeps its in-memory connection open until now
    _databases.clear()
    teardown_test_environment()


# -- the sources --------------------------------------------------------------------------


class ArticleSitemap(Sitemap):  # type: ignore[type-arg]
    """A project's Sitemap class, on the database of the test class."""

    using = "default"
    changefreq = "daily"

    def items(self) -> Any:
        return Article.objects.using(self.using).filter(published=True)

    def lastmod(self, item: Article) -> datetime | None:
        return item.updated_at


def sources(kind: str, alias: str) -> list[Any]:
    """The one source of kind ``kind`` over the published articles of ``alias``."""
    if kind == "adopted":
        sitemap = type("ArticleSitemap", (ArticleSitemap,), {"using": alias})
        return [DjangoSitemapSource(sitemap, name="articles")]
    queryset = Article.objects.using(alias).filter(published=True)
    made = DjangoSource if kind == "queryset" else AsyncDjangoSource
    return [made(queryset, name="articles", loc="/articles/{slug}", lastmod="updated_at")]


def sitemap_settings(kind: str, alias: str, **options: Any) -> override_settings:
    return override_settings(
        MIDDLEWARE=MIDDLEWARE,
        SITEMAP_MIDDLEWARE={"sources": sources(kind, alias), "base_url": BASE, **options},
    )


# -- what every test class checks ---------------------------------------------------------


class Answer:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.etag = headers.get("ETag")
        self.last_modified = headers.get("Last-Modified")
        self.body = body

    def locs(self) -> list[str]:
        """The locs of a urlset (the root of one small source is one)."""
        assert self.status == 200, self.status
        root = etree.fromstring(self.body)
        assert root.tag == f"{NS}urlset", root.tag
        return [url.findtext(f"{NS}loc") or "" for url in root]


class Checks:
    """The checks, written once; each test class runs them its way (sync or async)."""

    alias: ClassVar[str]
    databases: ClassVar[set[str]]

    @classmethod
    def setUpClass(cls) -> None:
        prepare_databases(cls.alias)
        super().setUpClass()  # type: ignore[misc]

    def articles(self, *numbers: int, published: bool = True) -> None:
        now = datetime.now(UTC).replace(microsecond=0)
        for number in numbers:
            Article.objects.using(self.alias).create(
                id=number,
                slug=f"a-{number}",
                updated_at=now - timedelta(minutes=number),
                published=published,
            )

    def entitle(self, number: int, title: str) -> None:
        Article.objects.using(self.alias).filter(id=number).update(title=title)

    def edit(self, number: int, slug: str) -> None:
        """A rename that moves the lastmod to now, as ``auto_now`` does."""
        now = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
        Article.objects.using(self.alias).filter(id=number).update(slug=slug, updated_at=now)

    def delete(self, number: int) -> None:
        Article.objects.using(self.alias).filter(id=number).delete()

    def expect(self, *slugs: str) -> list[str]:
        return [f"{BASE}articles/{slug}" for slug in slugs]

    def assert_followed(self, before: Answer, after: Answer, conditional: Answer) -> None:
        """A write shows at once: new validators, and the old entity tag is not current."""
        assert after.etag != before.etag
        assert conditional.status == 200, "the old entity tag answered 304 after a write"
        assert conditional.etag == after.etag


def get(client: Any, path: str = "/sitemap.xml", **headers: str) -> Answer:
    """A request through Django's test ``Client``."""
    response = client.get(path, headers=headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return Answer(response.status_code, response, body)


async def aget(client: Any, path: str = "/sitemap.xml", **headers: str) -> Answer:
    """A request through Django's ``AsyncClient``."""
    response = await client.get(path, headers=headers)
    if response.streaming:
        body = b"".join([chunk async for chunk in response.streaming_content])
    else:
        body = response.content
    return Answer(response.status_code, response, body)


class SyncChecks(Checks):
    """Through ``self.client`` (Django's WSGI handler, in the test's thread)."""

    def get(self, path: str = "/sitemap.xml", **headers: str) -> Answer:
        return get(self.client, path, **headers)  # type: ignore[attr-defined]

    def quietly(self, check: Callable[[], None]) -> None:
        """Run ``check``; nothing may be logged meanwhile, background reads included."""
        with self.assertNoLogs("sitemap_middleware", "WARNING"):  # type: ignore[attr-defined]
            check()
            join_job_threads()

    def test_the_tests_rows_are_listed(self) -> None:
        def check() -> None:
            self.articles(1, 2, 3)
            self.articles(4, published=False)
            assert self.get().locs() == self.expect("a-1", "a-2", "a-3")

        self.quietly(check)

    def test_validators_follow_the_tests_writes(self) -> None:
        def check() -> None:
            self.articles(1, 2, 3)
            writes: Iterable[Callable[[], None]] = (
                lambda: self.articles(5),
                lambda: self.edit(2, "renamed"),
                lambda: self.delete(1),
            )
            listed = [["a-1", "a-2", "a-3", "a-5"], ["a-1", "renamed", "a-3", "a-5"]]
            listed.append(["renamed", "a-3", "a-5"])
            before = self.get()
            for write, slugs in zip(writes, listed, strict=True):
                write()
                after = self.get()
                conditional = self.get(if_none_match=before.etag or "")
                assert after.locs() == self.expect(*slugs)
                self.assert_followed(before, after, conditional)
                before = after

        self.quietly(check)

    def test_background_reads_see_the_tests_rows(self) -> None:
        """Pages kept current by a refresh or recount at every request: each runs on the
        test's connection (a thread of its own would not see the test's rows, and would
        meet its lock on SQLite), so a later request shows a write, with the validators
        a process started then would give."""
        setting = {
            **settings.SITEMAP_MIDDLEWARE,
            # exact_rows=0: a few rows would be read exactly by every request instead.
            "freshness": Freshness(refresh_interval=0, recount_interval=0, exact_rows=0),
        }
        with self.settings(SITEMAP_MIDDLEWARE=setting):  # type: ignore[attr-defined]
            self.quietly(self.check_background_reads)

    def check_background_reads(self) -> None:
        self.articles(1, 2)
        before = self.get()
        self.articles(3)
        self.get()  # a refresh (and a recount) at every request
        join_job_threads()  # committed rows (TransactionTestCase): in a thread
        after = self.get()
        assert after.locs() == self.expect("a-1", "a-2", "a-3")
        assert after.etag != before.etag
        first = get(Client())  # a new middleware: what a process started now answers
        assert (after.etag, after.last_modified) == (first.etag, first.last_modified)

    def test_robots_txt_is_read_in_the_tests_transaction(self) -> None:
        """``robots_filter`` with its defaults: the project's robots.txt view reads the
        test's rows (in the request's thread, where the test's transaction is), and the locs
        it disallows are left out, each logged."""
        with self.settings(**robots_settings(self.alias)):  # type: ignore[attr-defined]
            self.articles(1, 2, 3)
            self.entitle(2, "private")
            with self.assertLogs("sitemap_middleware", "WARNING") as logs:  # type: ignore[attr-defined]
                assert self.get().locs() == self.expect("a-1", "a-3")
            assert_left_out(logs.output, "a-2")
            self.entitle(3, "private")  # read again once the ttl has passed, not before
            assert self.get().locs() == self.expect("a-1", "a-3")


def robots_settings(alias: str) -> dict[str, Any]:
    """The project's robots.txt from its rows, and ``robots_filter`` on."""
    return {
        "SITEMAP_MIDDLEWARE": {**settings.SITEMAP_MIDDLEWARE, "robots_filter": True},
        "ROOT_URLCONF": "tests.django_site.robots_urls",
        "ROBOTS_ALIAS": alias,
    }


def assert_left_out(output: list[str], *slugs: str) -> None:
    """The log says each loc left out, and only those; nothing else is logged."""
    assert len(output) == len(slugs), output
    for line, slug in zip(output, slugs, strict=True):
        assert "robots-disallowed" in line and f"{BASE}articles/{slug} " in line, line


class AsyncChecks(Checks):
    """Through ``self.async_client`` (Django's ASGI handler, on the test's event loop)."""

    async def get(self, path: str = "/sitemap.xml", **headers: str) -> Answer:
        return await aget(self.async_client, path, **headers)  # type: ignore[attr-defined]

    async def settle(self) -> None:
        """Refreshes and recounts started by requests under ASGI are tasks on the test's
        event loop: whatever they log is logged once they end."""
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            await asyncio.wait(others, timeout=30)

    async def test_the_tests_rows_are_listed(self) -> None:
        with self.assertNoLogs("sitemap_middleware", "WARNING"):  # type: ignore[attr-defined]
            await self.awrite(self.articles, 1, 2, 3)
            await self.awrite(lambda: self.articles(4, published=False))
            assert (await self.get()).locs() == self.expect("a-1", "a-2", "a-3")
            await self.settle()

    async def test_validators_follow_the_tests_writes(self) -> None:
        with self.assertNoLogs("sitemap_middleware", "WARNING"):  # type: ignore[attr-defined]
            await self.awrite(self.articles, 1, 2, 3)
            writes: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
                (self.articles, (5,)),
                (self.edit, (2, "renamed")),
                (self.delete, (1,)),
            ]
            listed = [["a-1", "a-2", "a-3", "a-5"], ["a-1", "renamed", "a-3", "a-5"]]
            listed.append(["renamed", "a-3", "a-5"])
            before = await self.get()
            for (write, arguments), slugs in zip(writes, listed, strict=True):
                await self.awrite(write, *arguments)
                after = await self.get()
                conditional = await self.get(if_none_match=before.etag or "")
                assert after.locs() == self.expect(*slugs)
                self.assert_followed(before, after, conditional)
                before = after
            await self.settle()

    async def test_background_reads_see_the_tests_rows(self) -> None:
        """As under ``Client``: a refresh or recount at every request, in Django's thread
        for sync work, which under ``AsyncClient`` is the test's."""
        setting = {
            **settings.SITEMAP_MIDDLEWARE,
            # exact_rows=0: a few rows would be read exactly by every request instead.
            "freshness": Freshness(refresh_interval=0, recount_interval=0, exact_rows=0),
        }
        with (
            self.settings(SITEMAP_MIDDLEWARE=setting),  # type: ignore[attr-defined]
            self.assertNoLogs("sitemap_middleware", "WARNING"),  # type: ignore[attr-defined]
        ):
            await self.awrite(self.articles, 1, 2)
            before = await self.get()
            await self.awrite(self.articles, 3)
            await self.get()
            await self.settle()
            after = await self.get()
            assert after.locs() == self.expect("a-1", "a-2", "a-3")
            assert after.etag != before.etag
            first = await aget(AsyncClient())  # a new middleware, as a process started now
            assert (after.etag, after.last_modified) == (first.etag, first.last_modified)
            await self.settle()

    async def test_robots_txt_is_read_in_the_tests_transaction(self) -> None:
        """As under ``Client``: the robots.txt view runs in Django's thread for sync work,
        the test's, where its transaction is."""
        with self.settings(**robots_settings(self.alias)):  # type: ignore[attr-defined]
            await self.awrite(self.articles, 1, 2, 3)
            await self.awrite(self.entitle, 2, "private")
            with self.assertLogs("sitemap_middleware", "WARNING") as logs:  # type: ignore[attr-defined]
                assert (await self.get()).locs() == self.expect("a-1", "a-3")
                await self.settle()
            assert_left_out(logs.output, "a-2")

    async def awrite(self, write: Callable[..., None], *arguments: Any) -> None:
        """A write from async test code, in the test's thread (its transaction's)."""
        from asgiref.sync import sync_to_async

        await sync_to_async(write)(*arguments)


# -- the test classes: backend x client x source ------------------------------------------


class OnSQLite:
    alias = "default"
    databases: ClassVar[set[str]] = {"default"}


class OnPostgres:
    alias = "postgres"
    databases: ClassVar[set[str]] = {"postgres"}


@sitemap_settings("adopted", "default")
class AdoptedClientSQLite(OnSQLite, SyncChecks, TestCase):
    pass


@sitemap_settings("queryset", "default")
class QuerySetClientSQLite(OnSQLite, SyncChecks, TestCase):
    pass


@sitemap_settings("adopted", "default")
class AdoptedAsyncClientSQLite(OnSQLite, AsyncChecks, TestCase):
    pass


@sitemap_settings("queryset", "default")
class QuerySetAsyncClientSQLite(OnSQLite, AsyncChecks, TestCase):
    pass


@sitemap_settings("async", "default")
class AsyncQuerySetAsyncClientSQLite(OnSQLite, AsyncChecks, TestCase):
    pass


@sitemap_settings("adopted", "postgres")
class AdoptedClientPostgres(OnPostgres, SyncChecks, TestCase):
    pass


@sitemap_settings("queryset", "postgres")
class QuerySetClientPostgres(OnPostgres, SyncChecks, TestCase):
    pass


@sitemap_settings("adopted", "postgres")
class AdoptedAsyncClientPostgres(OnPostgres, AsyncChecks, TestCase):
    pass


@sitemap_settings("queryset", "postgres")
class QuerySetAsyncClientPostgres(OnPostgres, AsyncChecks, TestCase):
    pass


@sitemap_settings("async", "postgres")
class AsyncQuerySetAsyncClientPostgres(OnPostgres, AsyncChecks, TestCase):
    pass


# TransactionTestCase: the test's writes are committed; each test ends by emptying the tables.


@sitemap_settings("adopted", "default")
class AdoptedTransactionSQLite(OnSQLite, SyncChecks, TransactionTestCase):
    pass


@sitemap_settings("queryset", "postgres")
class QuerySetTransactionPostgres(OnPostgres, SyncChecks, TransactionTestCase):
    pass


@sitemap_settings("adopted", "postgres")
class AdoptedAsyncTransactionPostgres(OnPostgres, AsyncChecks, TransactionTestCase):
    pass


@sitemap_settings("async", "default")
class AsyncQuerySetTransactionSQLite(OnSQLite, AsyncChecks, TransactionTestCase):
    pass


# override_settings: a test (or a class) changes the sitemap's setting; the middleware is
# loaded with it by the test's client.


class OverriddenSettings(OnSQLite, Checks, TestCase):
    @override_settings(MIDDLEWARE=MIDDLEWARE)
    def test_a_test_gives_its_own_sitemap_setting(self) -> None:
        Article.objects.create(id=7, slug="seven", updated_at=datetime(2024, 5, 1, tzinfo=UTC))
        setting = {"sources": sources("adopted", "default"), "base_url": "https://shop.test/"}
        with self.settings(SITEMAP_MIDDLEWARE=setting), self.assertNoLogs("sitemap_middleware"):
            answer = get(self.client)
        assert answer.locs() == ["https://shop.test/articles/seven"]
        assert answer.last_modified == "Wed, 01 May 2024 00:00:00 GMT"

    @override_settings(
        MIDDLEWARE=MIDDLEWARE,
        SITEMAP_MIDDLEWARE={
            "sources": "tests.contrib.django.test_django_testing.project_sources",
            "base_url": BASE,
        },
    )
    async def test_a_dotted_path_of_sources_under_async_client(self) -> None:
        from asgiref.sync import sync_to_async

        await sync_to_async(Article.objects.create)(
            id=8, slug="eight", updated_at=datetime(2024, 5, 2, tzinfo=UTC)
        )
        answer = await aget(self.async_client)
        assert answer.locs() == [f"{BASE}articles/eight"]


def project_sources() -> list[Any]:
    """``SITEMAP_MIDDLEWARE['sources']`` as a project names it: a function's dotted path."""
    return [*sources("adopted", "default")]
