"""Existing ``django.contrib.sitemaps`` classes, unchanged, through ``DjangoSitemapSource``:
the same URLs, lastmods, changefreqs, priorities and alternates as Django's own ``index`` and
``sitemap`` views list for the same classes and data (tests/django_site)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemap_middleware import SitemapWSGIApp
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.settings import ConfigurationError, ConfigurationTypeError
from sitemap_middleware.sources.base import ALL

from ...adapters import call_wsgi
from ...django_setup import database, setup
from ...support import NS, assert_valid_index, assert_valid_urlset

setup()

from django.contrib.sitemaps import Sitemap  # noqa: E402
from django.db.models import Max  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils.http import http_date  # noqa: E402

from sitemap_middleware import Freshness, Limits  # noqa: E402
from sitemap_middleware.contrib.django import DjangoSitemapSource, django_sitemap_sources  # noqa: E402

from ...django_site.shop.models import Article, Page  # noqa: E402
from ...django_site.shop.sitemaps import LATEST_SITEMAPS, SITEMAPS, ArticleSitemap  # noqa: E402

BASE = "https://example.com/"
XHTML = "{http://www.w3.org/1999/xhtml}"
Listed = dict[str, tuple[Any, ...]]


def urls_of(body: bytes) -> Listed:
    """loc -> (lastmod's day, changefreq, priority, alternates) of a urlset. Django writes
    the day of a lastmod (in TIME_ZONE, UTC here); this library the second: days compared."""
    listed: Listed = {}
    for url in etree.fromstring(body).iter(f"{NS}url"):
        lastmod = url.findtext(f"{NS}lastmod")
        priority = url.findtext(f"{NS}priority")
        alternates = frozenset(
            (link.get("hreflang"), link.get("href")) for link in url.iter(f"{XHTML}link")
        )
        loc = url.findtext(f"{NS}loc") or ""
        assert loc not in listed, f"{loc} listed twice"
        listed[loc] = (
            _day(lastmod),
            url.findtext(f"{NS}changefreq"),
            float(priority) if priority else None,
            alternates,
        )
    return listed


def _day(text: str | None) -> date | None:
    if text is None:
        return None
    if len(text) == 10:
        return date.fromisoformat(text)
    return datetime.fromisoformat(text).astimezone(UTC).date()


def django_listing() -> Listed:
    """Every URL Django's own views list: the index, then every page it names."""
    client = Client(HTTP_HOST="example.com")
    index = client.get("/django/sitemap.xml", secure=True)
    assert index.status_code == 200
    listed: Listed = {}
    for loc, _ in assert_valid_index(index.content):
        page = client.get(loc.removeprefix("https://example.com"), secure=True)
        assert page.status_code == 200, loc
        listed |= urls_of(page.content)
    return listed


def our_listing(app: Callable[..., Any], sitemap_schema: etree.XMLSchema) -> Listed:
    index = call_wsgi(app, path="/sitemap.xml")
    assert index.status == 200
    listed: Listed = {}
    for loc, _ in assert_valid_index(index.body):
        page = call_wsgi(app, path=loc.removeprefix("https://example.com"))
        assert page.status == 200, loc
        assert_valid_urlset(page.body, sitemap_schema)
        found = urls_of(page.body)
        assert not set(found) & set(listed), "a URL listed on two pages"
        listed |= found
    return listed


# Past lastmods: a future one is dropped here (the bad-row rule), listed by Django.
MOMENTS = st.one_of(
    st.none(),
    st.datetimes(datetime(2000, 1, 1), datetime(2025, 1, 1), timezones=st.just(UTC)).map(
        lambda moment: moment.replace(microsecond=0)
    ),
)
ARTICLES = st.lists(
    st.tuples(st.text("abcxyz-", min_size=1, max_size=6), MOMENTS, st.booleans(), st.booleans()),
    max_size=14,
)
PAGES = st.lists(st.tuples(st.text("abcdef", min_size=1, max_size=5), MOMENTS), max_size=8)


@pytest.fixture(scope="module")
def tables() -> Iterator[None]:
    database()
    yield
    Article.objects.all().delete()
    Page.objects.all().delete()


def fill(articles: list[tuple[str, Any, bool, bool]], pages: list[tuple[str, Any]]) -> None:
    Article.objects.all().delete()
    Page.objects.all().delete()
    Article.objects.bulk_create(
        Article(slug=f"{slug}{i}", updated_at=moment, published=published, priority=None)
        for i, (slug, moment, published, _) in enumerate(articles)
    )
    Page.objects.bulk_create(
        Page(path=path, updated_at=moment) for path, moment in dict(pages).items()
    )


def test_the_same_urls_as_django_views(tables: None, sitemap_schema: etree.XMLSchema) -> None:
    @settings(max_examples=25, deadline=None)
    @given(
        articles=ARTICLES,
        pages=PAGES,
        max_urls=st.integers(2, 7),
        # "incremental" with exact_rows=0: pages kept current, however few the rows.
        freshness=st.sampled_from(["exact", "incremental"]),
    )
    def run(articles: Any, pages: Any, max_urls: int, freshness: str) -> None:
        fill(articles, pages)
        app = SitemapWSGIApp(
            base_url=BASE,
            sources=django_sitemap_sources(SITEMAPS, base_url=BASE),
            limits=Limits(max_urls=max_urls),
            freshness=Freshness(mode=freshness, exact_rows=0),
            index="always",
        )
        ours = our_listing(app, sitemap_schema)
        django = django_listing()
        assert ours == django

    run()


def test_an_overriding_get_latest_lastmod_is_each_index_entry_s_lastmod(
    tables: None,
) -> None:
    """As in Django's index: the class's own ``get_latest_lastmod()`` for every page."""

    @settings(max_examples=15, deadline=None)
    @given(articles=ARTICLES, freshness=st.sampled_from(["exact", "incremental"]))
    def run(articles: Any, freshness: str) -> None:
        fill(articles, [])
        app = SitemapWSGIApp(
            base_url=BASE,
            sources=django_sitemap_sources(LATEST_SITEMAPS, base_url=BASE),
            limits=Limits(max_urls=5),
            freshness=Freshness(mode=freshness, exact_rows=0),
            index="always",
        )
        index = call_wsgi(app, path="/sitemap.xml")
        published = any(published for _, _, published, _ in articles)
        if not published:  # Django names page 1 of an empty section; no page here
            assert index.status == 404
            return
        ours = {_moment(lastmod) for _, lastmod in assert_valid_index(index.body)}
        client = Client(HTTP_HOST="example.com")
        theirs = client.get("/django/latest.xml", secure=True)
        listed = {_moment(lastmod) for _, lastmod in assert_valid_index(theirs.content)}
        assert ours == listed
        latest = Article.objects.aggregate(latest=Max("updated_at"))["latest"]
        if ours and latest is not None:
            assert index.headers["last-modified"] == http_date(latest.timestamp())

    run()


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def test_a_queryset_is_paged_by_key_and_streamed(
    tables: None, sitemap_schema: etree.XMLSchema
) -> None:
    """Pages are primary-key ranges: the deep page's query asks for its keys, no OFFSET."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    fill([(f"s{i}", datetime(2024, 1, 1, tzinfo=UTC), True, False) for i in range(12)], [])
    source = DjangoSitemapSource(ArticleSitemap, name="articles", base_url=BASE)
    app = SitemapWSGIApp(base_url=BASE, sources=[source], limits=Limits(max_urls=5))
    pages = [loc for loc, _ in assert_valid_index(call_wsgi(app, path="/sitemap.xml").body)]
    keys = sorted(Article.objects.values_list("pk", flat=True))
    assert len(pages) == len({key // 5 for key in keys})  # fixed ranges of 5 keys
    with CaptureQueriesContext(connection) as queries:
        page = call_wsgi(app, path=pages[-1].removeprefix("https://example.com"))
    assert page.status == 200
    assert len(assert_valid_urlset(page.body, sitemap_schema)) == len(
        [key for key in keys if key // 5 == keys[-1] // 5]
    )
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert "OFFSET" not in sql.upper() and "COUNT(" not in sql.upper()
    assert f'"shop_article"."id" > {keys[-1] // 5 * 5 - 1}' in sql


@pytest.mark.parametrize("freshness", ["exact", "incremental"])
def test_keys_below_zero_are_cut(
    tables: None, sitemap_schema: etree.XMLSchema, freshness: str
) -> None:
    fill([], [])
    Article.objects.bulk_create(
        Article(id=key, slug=f"k{key}", updated_at=datetime(2024, 1, 1, tzinfo=UTC))
        for key in (-7, -2, -1, 1, 2, 3, 8, 9)
    )
    source = DjangoSitemapSource(ArticleSitemap, name="articles", base_url=BASE)
    app = SitemapWSGIApp(
        base_url=BASE,
        sources=[source],
        limits=Limits(max_urls=3),
        freshness=Freshness(mode=freshness, exact_rows=0),
    )
    listed = our_listing(app, sitemap_schema)
    assert sorted(listed) == sorted(f"{BASE}articles/k{key}" for key in (-7, -2, -1, 1, 2, 3, 8, 9))


def test_version_spares_the_read(tables: None) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    fill([("a", datetime(2024, 1, 1, tzinfo=UTC), True, False)], [])
    source = DjangoSitemapSource(ArticleSitemap, name="articles", version=lambda: "v1")
    app = SitemapWSGIApp(base_url=BASE, sources=[source])
    first = call_wsgi(app, path="/sitemap.xml")
    with CaptureQueriesContext(connection) as queries:
        again = call_wsgi(
            app, path="/sitemap.xml", headers={"if-none-match": first.headers["etag"]}
        )
    assert again.status == 304
    assert queries.captured_queries == []


def test_pages_kept_current_by_recounts(tables: None) -> None:
    """freshness="incremental": a page's 304 reads nothing; a recount sees any change."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    fill([(f"s{i}", datetime(2024, 1, 1, tzinfo=UTC), True, False) for i in range(6)], [])
    source = DjangoSitemapSource(ArticleSitemap, name="articles", base_url=BASE)
    assert source.live
    app = SitemapWSGIApp(  # exact_rows=0: kept current however small
        base_url=BASE,
        sources=[source],
        limits=Limits(max_urls=5),
        freshness=Freshness(mode="incremental", exact_rows=0),
    )
    page = assert_valid_index(call_wsgi(app, path="/sitemap.xml").body)[-1][0]
    path = page.removeprefix("https://example.com")
    etag = call_wsgi(app, path=path).headers["etag"]
    with CaptureQueriesContext(connection) as queries:
        again = call_wsgi(app, path=path, headers={"if-none-match": etag})
    assert again.status == 304 and queries.captured_queries == []
    last = Article.objects.order_by("pk").last()
    assert last is not None
    last.slug = "renamed"  # a loc-only edit: the recount's digest of the URLs sees it
    last.save()
    app.recount()
    moved = call_wsgi(app, path=path, headers={"if-none-match": etag})
    assert moved.status == 200 and b"/articles/renamed" in moved.body
    assert moved.headers["etag"] != etag


def test_limit_bounds_the_pages() -> None:
    class Few(ArticleSitemap):
        limit = 3

    source = DjangoSitemapSource(Few, name="few")
    assert source.shape.page_size(50_000, 52_428_800, 2048) == 3


def test_misconfiguration_names_the_setting() -> None:
    with pytest.raises(ConfigurationTypeError, match="sitemap: source 'x'"):
        DjangoSitemapSource(object, name="x")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="base_url"):
        DjangoSitemapSource(ArticleSitemap, name="x", base_url="/relative/")
    with pytest.raises(ConfigurationTypeError, match="sitemaps"):
        django_sitemap_sources([ArticleSitemap])  # type: ignore[arg-type]


def test_served_under_asgi(tables: None, sitemap_schema: etree.XMLSchema) -> None:
    """Under ASGI the class's ORM calls run in Django's thread for sync work (Django refuses
    them on the event loop's thread): the same URLs as under WSGI."""
    import anyio

    from sitemap_middleware import SitemapApp

    from ...adapters import call

    fill([(f"s{i}", datetime(2024, 1, 1, tzinfo=UTC), True, False) for i in range(8)], [])
    options: dict[str, Any] = {"base_url": BASE, "limits": Limits(max_urls=3), "index": "always"}
    asgi = SitemapApp(sources=django_sitemap_sources(SITEMAPS, base_url=BASE), **options)
    wsgi = SitemapWSGIApp(sources=django_sitemap_sources(SITEMAPS, base_url=BASE), **options)

    async def every_document() -> list[bytes]:
        index = (await call(asgi, path="/sitemap.xml")).body
        paths = [loc.removeprefix("https://example.com") for loc, _ in assert_valid_index(index)]
        return [index] + [(await call(asgi, path=path)).body for path in paths]

    served = anyio.run(every_document)
    assert served[0] == call_wsgi(wsgi, path="/sitemap.xml").body
    for body, (loc, _) in zip(served[1:], assert_valid_index(served[0]), strict=True):
        assert_valid_urlset(body, sitemap_schema)
        assert body == call_wsgi(wsgi, path=loc.removeprefix("https://example.com")).body


class _Recorded(ArticleSitemap):
    """Records the thread each item is read in (``items()`` itself is lazy: no query)."""

    threads: ClassVar[set[int]] = set()

    def lastmod(self, item: Article) -> datetime | None:
        self.threads.add(threading.get_ident())
        return item.updated_at

    def location(self, item: Article) -> str:
        self.threads.add(threading.get_ident())
        return f"/a/{item.slug}"


def test_under_asgi_every_read_runs_in_django_s_thread_for_sync_work(tables: None) -> None:
    """Items, locations and lastmods are read where Django's async ORM runs its queries
    (``sync_to_async(thread_sensitive=True)``): the summaries, the pages and each chunk of a
    body, so a request's reads see the connection (and a test's transaction) of that
    thread, whatever chunk they are at."""
    import anyio
    from asgiref.sync import sync_to_async

    from sitemap_middleware import SitemapApp

    from ...adapters import call

    fill([(f"s{i}", datetime(2024, 1, 1, tzinfo=UTC), True, False) for i in range(40)], [])
    source = DjangoSitemapSource(_Recorded, name="articles")
    limits = Limits(max_urls=10, batch_size=3, chunk_bytes=256)
    app = SitemapApp(sources=[source], base_url=BASE, limits=limits)
    _Recorded.threads.clear()

    async def run() -> tuple[list[int], int]:
        index = await call(app, path="/sitemap.xml")
        paths = [
            loc.removeprefix("https://example.com") for loc, _ in assert_valid_index(index.body)
        ]
        statuses = [(await call(app, path=path)).status for path in paths]
        statuses.append((await call(app, path=paths[0], headers={"if-none-match": "x"})).status)
        django_thread = await sync_to_async(threading.get_ident, thread_sensitive=True)()
        return statuses, django_thread

    statuses, django_thread = anyio.run(run)
    assert len(statuses) > 3
    assert set(statuses) == {200}
    assert _Recorded.threads == {django_thread}


def test_a_connection_a_read_opened_is_closed_after_it() -> None:
    """A connection a read had to open is closed after it when ``CONN_MAX_AGE`` is 0 (reads
    also run in threads no request ends), kept otherwise; one that was open, or is in a
    transaction, stays open."""
    from django.db import connections, transaction

    database()
    fill([(f"s{i}", None, True, False) for i in range(3)], [])
    source = DjangoSitemapSource(ArticleSitemap, name="articles")
    entry = connections["default"].settings_dict
    seen: dict[str, tuple[int, bool]] = {}

    def read(label: str, open_first: bool = False, atomic: bool = False) -> None:
        wrapper = connections["default"]
        try:
            if open_first:
                wrapper.ensure_connection()
            with transaction.atomic() if atomic else contextlib.nullcontext():
                rows = sum(len(batch) for batch in source.batches())
                rows += source.summarize(ALL, AsOf.now()).count or 0
                seen[label] = (rows, wrapper.connection is not None)
        finally:
            wrapper.close()

    def in_thread(label: str, **options: bool) -> None:
        thread = threading.Thread(target=read, args=(label,), kwargs=options)
        thread.start()
        thread.join()

    saved = entry.get("CONN_MAX_AGE", 0)
    try:
        entry["CONN_MAX_AGE"] = 0
        in_thread("opened")
        in_thread("open before", open_first=True)
        in_thread("in a transaction", atomic=True)
        entry["CONN_MAX_AGE"] = 60
        in_thread("persistent")
    finally:
        entry["CONN_MAX_AGE"] = saved
    assert seen == {
        "opened": (6, False),
        "open before": (6, True),
        "in a transaction": (6, True),
        "persistent": (6, True),
    }


class _PlainPages(Sitemap):  # type: ignore[type-arg]
    """Pages (a text key: cut) without languages: read a chunk of items at a time."""

    def items(self) -> Any:
        return Page.objects.order_by("path")

    def location(self, item: Page) -> str:
        return f"/p/{item.path}"

    def lastmod(self, item: Page) -> datetime | None:
        return item.updated_at


@pytest.mark.parametrize("sitemap", [ArticleSitemap, SITEMAPS["pages"], _PlainPages])
def test_each_page_listed_carries_its_own_summary(
    tables: None, monkeypatch: pytest.MonkeyPatch, sitemap: Any
) -> None:
    """What ``pages()`` gives each page (read a chunk of items at a time: fixed ranges of
    the key, cuts of any other, an ``i18n`` class's items with their languages) is what the
    page's own summary gives: its newest lastmod and checksum (and count)."""
    from sitemap_middleware.contrib.django import adopted
    from sitemap_middleware.sources.base import KeyRange

    monkeypatch.setattr(adopted, "_CHUNK", 2)  # pages and cuts cross chunks

    @settings(max_examples=25, deadline=None)
    @given(
        ARTICLES,
        PAGES,
        st.integers(min_value=1, max_value=5),
    )
    def check(articles: Any, pages: Any, page_size: int) -> None:
        fill(articles, pages)
        source = DjangoSitemapSource(sitemap, name="s", base_url=BASE)
        listed_until = datetime(2030, 1, 1, tzinfo=UTC)
        listed = source.pages(page_size, AsOf(UTC, listed_until))
        assert sum(page.count for page in listed) == len(list(sitemap().items()))
        lower = None
        for page in listed:
            if page.last is None:  # fixed ranges of the key
                low, high = page.index * page_size, (page.index + 1) * page_size - 1
                keys = KeyRange((low - 1,), (high,))
            else:  # a cut: after the previous page's last key, up to its own
                keys = KeyRange(lower, page.last)
                lower = page.last
                # runs of width items (the last one up to width)
                assert page.count == page_size or (page is listed[-1] and page.count < page_size)
            summary = source.summarize(keys, AsOf(UTC, listed_until))
            assert (page.newest, page.checksum) == (summary.newest, summary.checksum)
            if not source.sitemap.i18n:  # (a summary counts URLs; a page, its items)
                assert page.count == summary.count

    check()
