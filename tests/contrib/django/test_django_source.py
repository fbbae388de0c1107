"""``DjangoSource``: a QuerySet read with the SQL sources' options and rules, on SQLite and
PostgreSQL, through both adapters. (The reference model test, tests/e2e/test_model.py, runs its
histories of hostile rows through it too.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from lxml import etree
from sqlalchemy import event

from sitemap_middleware.settings import ConfigurationError, ConfigurationTypeError

from ...adapters import call, sitemap_app
from ...django_setup import database, setup
from ...support import assert_valid_index, assert_valid_urlset, join_job_threads, locs

setup()

from sitemap_middleware import Freshness, Limits  # noqa: E402
from sitemap_middleware.contrib.django import AsyncDjangoSource, DjangoSource  # noqa: E402

from ...django_site.shop.models import Article, Page, Product  # noqa: E402

BASE = "https://example.com/"


@pytest.fixture(params=["default", "postgres"])
def alias(request: pytest.FixtureRequest) -> Iterator[str]:
    name = database(request.param)
    for model in (Article, Page, Product):
        model.objects.using(name).all().delete()
    yield name


def fill(alias: str, count: int = 9) -> None:
    Article.objects.using(alias).bulk_create(
        Article(
            id=i,
            slug=f"a-{i}",
            updated_at=datetime(2024, 1, i, 12, tzinfo=UTC),
            priority=0.5 if i % 2 else None,
            published=i != 4,
            image=f"/img/{i}.jpg",
        )
        for i in range(1, count + 1)
    )


def serve(app: Any, path: str) -> Any:
    async def run() -> Any:
        return await call(app, path=path)

    return anyio.run(run)


def every_loc(app: Any, schema: etree.XMLSchema) -> list[str]:
    found = []
    for loc, _ in assert_valid_index(serve(app, "/sitemap.xml").body):
        page = serve(app, loc.removeprefix("https://example.com"))
        assert page.status == 200, loc
        found += locs(assert_valid_urlset(page.body, schema))
    return found


@pytest.mark.parametrize("adapter", ["asgi", "wsgi"])
def test_a_queryset_is_served_with_its_filters(
    alias: str, adapter: str, sitemap_schema: etree.XMLSchema
) -> None:
    fill(alias)
    source = DjangoSource(
        Article.objects.using(alias).filter(published=True),
        loc="/{lang}/articles/{slug}",
        lastmod="updated_at",
        priority_column="priority",
        changefreq="daily",
        languages=["en", "de"],
        images="image",
    )
    assert source.name == "article"
    app = sitemap_app(
        adapter, base_url=BASE, sources=[source], limits=Limits(max_urls=4), index="always"
    )
    expected = [
        f"{BASE}{lang}/articles/a-{i}" for i in range(1, 10) if i != 4 for lang in ("en", "de")
    ]
    assert every_loc(app, sitemap_schema) == expected
    first = serve(app, "/sitemap-article-1.xml")
    assert b"<priority>0.5</priority>" in first.body and b"image:loc" in first.body
    assert b'hreflang="de"' in first.body


def test_other_keys_are_cut(alias: str, sitemap_schema: etree.XMLSchema) -> None:
    """A text or UUID primary key: pages are cuts of the keys in order."""
    Page.objects.using(alias).bulk_create(Page(path=f"p{i:02d}") for i in range(7))
    keys = sorted(uuid.uuid4() for _ in range(5))
    Product.objects.using(alias).bulk_create(
        Product(id=key, sku=f"s{n}") for n, key in enumerate(keys)
    )
    pages = DjangoSource(Page.objects.using(alias), loc="/{path}")
    products = DjangoSource(Product.objects.using(alias), loc="/products/{sku}")
    assert not pages.fixed_ranges and not products.fixed_ranges
    app = sitemap_app("wsgi", base_url=BASE, sources=[pages, products], limits=Limits(max_urls=3))
    listed = every_loc(app, sitemap_schema)
    assert listed[:7] == [f"{BASE}p{i:02d}" for i in range(7)]
    assert sorted(listed[7:]) == sorted(f"{BASE}products/s{n}" for n in range(5))


def test_pages_are_key_ranges_without_offset(sitemap_schema: etree.XMLSchema) -> None:
    alias = database()
    Article.objects.all().delete()
    fill(alias, 20)
    source = DjangoSource(Article.objects.all(), loc="/a/{slug}", lastmod="updated_at")
    app = sitemap_app("wsgi", base_url=BASE, sources=[source], limits=Limits(max_urls=5))
    assert len(assert_valid_index(serve(app, "/sitemap.xml").body)) == 5  # keys 0-4, 5-9...
    seen: list[tuple[str, Any]] = []
    event.listen(source.engine, "before_cursor_execute", lambda *a: seen.append((a[2], a[3])))
    page = serve(app, "/sitemap-article-3.xml")
    assert locs(assert_valid_urlset(page.body, sitemap_schema)) == [
        f"{BASE}a/a-{i}" for i in range(10, 15)
    ]
    rows = [(sql, bounds) for sql, bounds in seen if "ORDER BY" in sql]
    assert rows == [(rows[0][0], (9, 14))]  # keys 10 to 14, read in key order
    assert "OFFSET" not in rows[0][0] and '"shop_article"' in rows[0][0]


def test_the_same_bytes_on_both_databases(sitemap_schema: etree.XMLSchema) -> None:
    bodies = []
    for alias in ("default", database("postgres")):
        database(alias)
        Article.objects.using(alias).all().delete()
        fill(alias)
        source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
        app = sitemap_app("wsgi", base_url=BASE, sources=[source])
        bodies.append(serve(app, "/sitemap.xml").body)
    assert bodies[0] == bodies[1]
    assert len(assert_valid_urlset(bodies[0], sitemap_schema)) == 9


def test_misconfiguration_names_the_setting() -> None:
    database()
    with pytest.raises(ConfigurationTypeError, match="queryset: needs a Django QuerySet"):
        DjangoSource([1, 2], loc="/{slug}")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="lastmod: source 'article': 'modified'"):
        DjangoSource(Article.objects.all(), loc="/{slug}", lastmod="modified")
    with pytest.raises(ConfigurationError, match="loc"):
        DjangoSource(Article.objects.all(), loc="/{nope}")
    with pytest.raises(ConfigurationError, match="name"):
        DjangoSource(Article.objects.all(), loc="/{slug}", name="Not A Name")


def test_async_reads_give_the_same_bytes(alias: str) -> None:
    """AsyncDjangoSource (reads in Django's thread for sync work) serves what DjangoSource
    serves."""
    fill(alias)
    queryset = Article.objects.using(alias).filter(published=True)
    options: dict[str, Any] = {"loc": "/a/{slug}", "lastmod": "updated_at", "images": "image"}
    paths = ["/sitemap.xml", *(f"/sitemap-article-{n}.xml" for n in range(1, 5))]
    source = AsyncDjangoSource(queryset, **options)
    apps = [
        sitemap_app("asgi", base_url=BASE, sources=[each], limits=Limits(max_urls=4))
        for each in (DjangoSource(queryset, **options), source)
    ]

    async def run() -> list[list[tuple[int, bytes, str | None]]]:
        served = []
        for app in apps:
            for path in paths:
                reply = await call(app, path=path)
                served.append((reply.status, reply.body, reply.headers.get("etag")))
        return [served[: len(paths)], served[len(paths) :]]

    by_sync, by_async = anyio.run(run)
    assert by_sync == by_async
    assert [status for status, _, _ in by_sync] == [200, 200, 200, 200, 404]


def test_connections_read_the_alias_when_opened(tmp_path: Any) -> None:
    """A source built before a test runner swaps its database in reads that database."""
    import sqlite3
    from contextlib import closing

    from django.db import connections

    from sitemap_middleware.contrib.django.statements import dispose

    from ...django_site.shop.models import ModelRow

    for name, slug in (("before", "old"), ("after", "new")):
        with closing(sqlite3.connect(tmp_path / f"{name}.sqlite3")) as db, db:
            db.execute(
                "CREATE TABLE pages (id INTEGER PRIMARY KEY, k BIGINT, slug TEXT, "
                "lastmod DATETIME, cf TEXT, pr DECIMAL, img TEXT)"
            )
            db.execute("INSERT INTO pages (id, k, slug) VALUES (1, 1, ?)", (slug,))
    entry = connections["model"].settings_dict
    saved = entry["NAME"]
    dispose("model")
    entry["NAME"] = str(tmp_path / "before.sqlite3")
    try:
        source = DjangoSource(ModelRow.objects.using("model"), loc="/{slug}", name="rows")
        entry["NAME"] = str(tmp_path / "after.sqlite3")
        body = serve(sitemap_app("wsgi", base_url=BASE, sources=[source]), "/sitemap.xml").body
        assert b"<loc>https://example.com/new</loc>" in body
    finally:
        entry["NAME"] = saved
        dispose("model")


def test_any_queryset_django_compiles(alias: str, sitemap_schema: etree.XMLSchema) -> None:
    """Percent signs, LIKE patterns built from columns, dates and joins' parameters: the
    QuerySet's SQL and parameters reach the database as Django wrote them."""
    from django.db.models import F, Q

    fill(alias)
    Article.objects.using(alias).update(title="zz")
    Article.objects.using(alias).filter(id=2).update(slug="50%:off", title="50%")
    Article.objects.using(alias).filter(id=3).update(slug="a-3", title="a-")
    queryset = Article.objects.using(alias).filter(
        Q(slug__contains="%:o")
        | Q(slug__startswith=F("title"))
        | Q(updated_at__gte=datetime(2024, 1, 9, tzinfo=UTC))
    )
    source = DjangoSource(queryset, loc="/a/{id}", name="some")
    body = serve(sitemap_app("wsgi", base_url=BASE, sources=[source]), "/sitemap.xml").body
    assert locs(assert_valid_urlset(body, sitemap_schema)) == [
        f"{BASE}a/{key}" for key in sorted(queryset.values_list("id", flat=True))
    ]
    assert sorted(queryset.values_list("id", flat=True)) == [2, 3, 9]


# --- Django's own connection ---------------------------------------------------------------


def _listed(app: Any, schema: etree.XMLSchema) -> tuple[int, list[str]]:
    """Status of /sitemap.xml and every loc of its pages, served in this thread (as a
    threaded WSGI server would)."""
    from ...adapters import call_wsgi

    index = call_wsgi(app, path="/sitemap.xml")
    if index.status != 200:
        return index.status, []
    if b"<urlset" in index.body:
        return index.status, locs(assert_valid_urlset(index.body, schema))
    found = []
    for loc, _ in assert_valid_index(index.body):
        page = call_wsgi(app, path=loc.removeprefix("https://example.com"))
        found += locs(assert_valid_urlset(page.body, schema))
    return index.status, found


def test_reads_run_in_the_callers_transaction(alias: str, sitemap_schema: etree.XMLSchema) -> None:
    """Rows written in a transaction not yet committed are listed by a read in it (Django's
    ``TestCase`` works), and are gone once it rolls back; nothing of the read commits."""
    from django.db import transaction

    source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    app = sitemap_app("wsgi", base_url=BASE, sources=[source])
    with transaction.atomic(using=alias):
        fill(alias, 3)
        status, listed = _listed(app, sitemap_schema)
        transaction.set_rollback(True, using=alias)
    assert (status, listed) == (200, [f"{BASE}a/a-{i}" for i in (1, 2, 3)])
    assert _listed(app, sitemap_schema) == (404, [])  # rolled back: the urlset is empty
    assert not Article.objects.using(alias).exists()


def test_a_connection_a_read_opened_is_closed_after_it(alias: str) -> None:
    """A read borrows Django's connection of its thread; one it had to open is closed after
    it when ``CONN_MAX_AGE`` is 0 (reads also run in threads no request ends), and kept
    otherwise; one that was open stays open."""
    import threading

    from django.db import connections

    fill(alias, 3)
    source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    entry = connections[alias].settings_dict
    seen: dict[str, Any] = {}

    def read(label: str, open_first: bool = False) -> None:
        wrapper = connections[alias]
        if open_first:
            wrapper.ensure_connection()
        rows = sum(len(batch) for batch in source.batches())
        seen[label] = (rows, wrapper.connection is not None)
        wrapper.close()

    def in_thread(label: str, open_first: bool = False) -> None:
        thread = threading.Thread(target=read, args=(label, open_first))
        thread.start()
        thread.join()

    saved = entry.get("CONN_MAX_AGE", 0)
    try:
        entry["CONN_MAX_AGE"] = 0
        in_thread("opened")
        in_thread("open before", open_first=True)
        entry["CONN_MAX_AGE"] = 60
        in_thread("persistent")
    finally:
        entry["CONN_MAX_AGE"] = saved
    assert seen == {"opened": (3, False), "open before": (3, True), "persistent": (3, True)}


def test_a_stored_value_django_s_converters_refuse_is_a_bad_field(
    sitemap_schema: etree.XMLSchema,
) -> None:
    """On SQLite Django converts values by declared type, and its converter raises on a
    ``datetime`` column's text that is no date. The read takes the stored text instead:
    the lastmod is a bad field (left out, counted), and the page is served."""
    from django.db import connections

    database("default")
    Article.objects.using("default").all().delete()
    fill("default", 3)
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "UPDATE shop_article SET updated_at = %s WHERE id = 2", ["2024-02-30 10:00:00"]
        )
    with pytest.raises(ValueError):  # Django's own read of the row fails
        list(Article.objects.using("default").values_list("updated_at", flat=True))
    source = DjangoSource(Article.objects.all(), loc="/a/{slug}", lastmod="updated_at")
    source_app = sitemap_app("wsgi", base_url=BASE, sources=[source])
    exchange = serve(source_app, "/sitemap.xml")
    assert exchange.status == 200
    urls = assert_valid_urlset(exchange.body, sitemap_schema)
    lastmods = [
        url.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}lastmod") for url in urls
    ]
    assert locs(urls) == [f"{BASE}a/a-{i}" for i in (1, 2, 3)]
    assert lastmods == ["2024-01-01T12:00:00+00:00", None, "2024-01-03T12:00:00+00:00"]
    assert source.bad_rows.rows_with_fields_dropped >= 1


@pytest.mark.parametrize("kind", [AsyncDjangoSource, DjangoSource])
def test_async_reads_run_in_django_s_thread_for_sync_work(alias: str, kind: type) -> None:
    """Under ASGI both kinds read where Django's async ORM runs its queries: the thread
    ``sync_to_async(thread_sensitive=True)`` gives, on that thread's connection (a
    ``DjangoSource`` renders each chunk there too)."""
    import threading

    from asgiref.sync import sync_to_async
    from django.db import connections

    fill(alias, 3)
    source = kind(Article.objects.using(alias), loc="/a/{slug}")
    threads: set[int] = set()
    engine = source.engine if isinstance(source, DjangoSource) else source.sync.engine

    @event.listens_for(engine, "before_cursor_execute")
    def record(*args: Any) -> None:
        threads.add(threading.get_ident())
        assert connections[alias].connection is not None  # Django's connection is the one used

    async def run() -> tuple[int, int]:
        reply = await call(sitemap_app("asgi", base_url=BASE, sources=[source]))
        django_thread = await sync_to_async(threading.get_ident, thread_sensitive=True)()
        return reply.status, django_thread

    try:
        status, django_thread = anyio.run(run)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert status == 200
    assert threads == {django_thread}


def test_a_broken_kept_connection_is_replaced() -> None:
    """A connection kept between reads (``CONN_MAX_AGE``) in a thread no request ends
    breaks: the read on it fails (a 503, never a short document), and the next read
    checks it, as Django checks a request's, and opens a new one. (PostgreSQL: Django
    deems a SQLite connection always usable.)"""
    import threading

    from django.db import connections

    alias = database("postgres")
    Article.objects.using(alias).all().delete()
    fill(alias, 3)
    source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    app = sitemap_app("wsgi", base_url=BASE, sources=[source])
    entry = connections[alias].settings_dict
    statuses: list[int] = []

    def reads() -> None:
        from ...adapters import call_wsgi

        try:
            statuses.append(call_wsgi(app, path="/sitemap.xml").status)
            connections[alias].connection.close()  # broken under Django's feet
            statuses.append(call_wsgi(app, path="/sitemap.xml").status)
            statuses.append(call_wsgi(app, path="/sitemap.xml").status)
        finally:
            connections[alias].close()

    saved = entry.get("CONN_MAX_AGE", 0)
    entry["CONN_MAX_AGE"] = 60
    try:
        thread = threading.Thread(target=reads)
        thread.start()
        thread.join()
    finally:
        entry["CONN_MAX_AGE"] = saved
    assert statuses == [200, 503, 200]


@pytest.mark.parametrize("adapter", ["wsgi", "django-wsgi"])
def test_a_background_job_closes_the_connections_it_kept(adapter: str) -> None:
    """Under WSGI pages are kept current by a thread of its own, which ends with its job:
    the connections its reads kept for ``CONN_MAX_AGE`` are closed then, not left for the
    garbage collector (psycopg warns of a connection deleted while open)."""
    import threading

    from django.db import connections
    from django.db.backends.signals import connection_created

    from ...clock import Clock, drive

    alias = database("postgres")
    Article.objects.using(alias).all().delete()
    fill(alias, 3)
    source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    freshness = Freshness(refresh_interval=0, exact_rows=0)
    app = drive(sitemap_app(adapter, base_url=BASE, sources=[source], freshness=freshness), Clock())
    jobs: list[Any] = []  # the connections the jobs opened, held: the collector keeps off
    requests: list[Any] = []  # the requests' (their thread keeps them: a server's reuses them)

    def opened(sender: Any, connection: Any, **kwargs: Any) -> None:
        in_job = threading.current_thread().name == "sitemap-pages"
        (jobs if in_job else requests).append(connection.connection)

    entry = connections[alias].settings_dict
    saved = entry.get("CONN_MAX_AGE", 0)
    entry["CONN_MAX_AGE"] = 60
    connection_created.connect(opened)
    try:
        for round_ in range(3):
            assert serve(app, "/sitemap.xml").status == 200
            Article.objects.using(alias).filter(id=1).update(
                updated_at=datetime(2024, 2, 1 + round_, tzinfo=UTC)
            )
            join_job_threads(10)
    finally:
        connection_created.disconnect(opened)
        entry["CONN_MAX_AGE"] = saved
        app.close()
        job_closed = [connection.closed for connection in jobs]
        for connection in requests:
            connection.close()
    assert job_closed and job_closed == [True] * len(job_closed)  # the jobs read, and closed


@pytest.mark.parametrize("kind", ["queryset", "adopted"])
def test_a_client_gone_mid_body_closes_the_rows_in_django_s_thread(alias: str, kind: str) -> None:
    """Under ASGI a thread-bound source's rows are read a chunk at a time in Django's thread
    for sync work; when the client leaves mid-body the step under way ends, and the rows
    are closed there, before the next request reads."""
    import threading

    from asgiref.sync import sync_to_async
    from django.contrib.sitemaps import Sitemap

    from sitemap_middleware.contrib.django import DjangoSitemapSource

    moment = datetime(2024, 1, 1, tzinfo=UTC)
    Article.objects.using(alias).bulk_create(
        Article(id=i, slug=f"a-{i}", updated_at=moment) for i in range(1, 301)
    )
    closed: list[int] = []

    def watched(rows: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from rows
        finally:
            closed.append(threading.get_ident())

    class Articles(Sitemap):  # type: ignore[type-arg]
        def items(self) -> Any:
            return Article.objects.using(alias).order_by("id")

    source: Any
    if kind == "queryset":
        source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    else:
        source = DjangoSitemapSource(Articles, name="article")
    read = source.batches
    source.batches = lambda keys, size: watched(read(keys, size))
    app = sitemap_app(
        "asgi", base_url=BASE, sources=[source], limits=Limits(chunk_bytes=512, batch_size=10)
    )

    async def run() -> tuple[Any, Any, int]:
        gone = await call(app, path="/sitemap.xml", disconnect_after=1)
        whole = await call(app, path="/sitemap.xml")
        django_thread = await sync_to_async(threading.get_ident, thread_sensitive=True)()
        return gone, whole, django_thread

    gone, whole, django_thread = anyio.run(run)
    assert gone.status == 200 and not gone.complete
    assert whole.status == 200 and whole.complete
    assert closed == [django_thread, django_thread]


@pytest.mark.parametrize("kind", ["queryset", "adopted"])
def test_concurrent_bodies_take_turns_in_django_s_thread(alias: str, kind: str) -> None:
    """Under ASGI the chunks of concurrent requests are read in turns in Django's one
    thread for sync work, on its one connection: the request that ends first leaves the
    connection to the others (with ``CONN_MAX_AGE`` 0 it is closed after the last)."""
    from django.contrib.sitemaps import Sitemap
    from django.db import connections

    from sitemap_middleware.contrib.django import DjangoSitemapSource

    moment = datetime(2024, 1, 1, tzinfo=UTC)
    Article.objects.using(alias).bulk_create(
        Article(id=i, slug=f"a-{i}", updated_at=moment) for i in range(1, 401)
    )

    class Articles(Sitemap):  # type: ignore[type-arg]
        def items(self) -> Any:
            return Article.objects.using(alias).order_by("id")

    source: Any
    if kind == "queryset":
        source = DjangoSource(Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at")
    else:
        source = DjangoSitemapSource(Articles, name="article")
    app = sitemap_app(
        "asgi", base_url=BASE, sources=[source], limits=Limits(chunk_bytes=512, batch_size=10)
    )

    async def run() -> tuple[list[Any], bool]:
        from asgiref.sync import sync_to_async

        async def one(paths: list[Any], n: int) -> None:
            paths.append(await call(app, path="/sitemap.xml", disconnect_after=n))

        done: list[Any] = []
        async with anyio.create_task_group() as group:
            for n in (3, None, 40, None):
                group.start_soon(one, done, n)
        still_open = await sync_to_async(lambda: connections[alias].connection is not None)()
        return done, still_open

    done, still_open = anyio.run(run)
    assert [exchange.status for exchange in done] == [200] * 4
    assert sum(exchange.complete for exchange in done) == 2
    assert all(exchange.body.count(b"<url>") == 400 for exchange in done if exchange.complete)
    assert not still_open


@pytest.mark.parametrize("adapter", ["asgi", "wsgi"])
def test_a_save_within_the_second_moves_the_etag(alias: str, adapter: str) -> None:
    """``auto_now`` saves a millisecond apart: the lastmod served (whole seconds) stays, the
    slug changes, and so does the ETag; a rename that leaves the lastmod alone too. An edit
    of a field shown nowhere (``title``) keeps the ETag: its 304 still answers."""
    fill(alias, 3)
    saved = datetime(2024, 1, 2, 12, 0, 0, 250_000, tzinfo=UTC)
    Article.objects.using(alias).filter(id=2).update(updated_at=saved)
    source = DjangoSource(
        Article.objects.using(alias), loc="/a/{slug}", lastmod="updated_at", name="a"
    )
    app = sitemap_app(adapter, base_url=BASE, sources=[source])
    wsgi = adapter == "wsgi"

    def get(etag: str | None = None) -> Any:
        headers = {"if-none-match": etag} if etag else None
        return anyio.run(lambda: call(app, path="/sitemap.xml", headers=headers, wsgi=wsgi))

    first = get()
    later = saved + timedelta(milliseconds=1)
    Article.objects.using(alias).filter(id=2).update(slug="renamed", updated_at=later)
    second = get()
    assert b"/a/renamed" in second.body and second.body != first.body
    assert second.headers["last-modified"] == first.headers["last-modified"]
    assert second.headers["etag"] != first.headers["etag"]
    Article.objects.using(alias).filter(id=2).update(slug="again")
    third = get()
    assert b"/a/again" in third.body
    assert third.headers["etag"] not in (first.headers["etag"], second.headers["etag"])
    Article.objects.using(alias).filter(id=2).update(title="Not in the sitemap")
    assert get(third.headers["etag"]).status == 304
