"""Benchmark: Django's own sitemap views against this library on the same Django project.

One table of N articles (default 500,000; a SQLite file) and one ``Sitemap`` class
(``bench/django_site``), served three ways through WSGI, in process:

* **django**: ``django.contrib.sitemaps.views.index`` and ``sitemap`` (Paginator pages
  of 50,000, ``?p=N``), through Django's WSGI handler;
* **adopted**: the same class through ``DjangoSitemapSource`` and ``SitemapWSGIApp``;
* **adopted+version**: the same, given ``version=`` (a function the application bumps on
  writes; a constant here), so that summaries read no items;
* **queryset**: the same table through ``DjangoSource`` and ``SitemapWSGIApp``.

It prints, beside each other: URLs/s over the index and every page, the deepest full page
against the first, a ``304`` against a ``200`` on that page (Django sends no validators:
it has no ``304``), and the peak RSS of a fresh process serving everything, for N/10 and
N rows. Targets: adopted >= 10x Django's URLs/s, queryset >= 15x; deep page <= 1.2x the
first; 304 <= 1% of a 200; memory flat (within 5 MB from N/10 to N rows).

Usage: ``python bench/bench_django.py [--rows 500000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench_urlset import high_water_mb

BASE = "https://example.com/"
KINDS = ("django", "adopted", "adopted+version", "queryset")
WSGI = Callable[..., Iterable[bytes]]


def configure(path: Path) -> None:
    import django
    from django.conf import settings

    settings.configure(
        DEBUG=False,
        SECRET_KEY="bench",
        ALLOWED_HOSTS=["*"],
        USE_TZ=True,
        ROOT_URLCONF="django_site.urls",
        MIDDLEWARE=[],
        INSTALLED_APPS=["django.contrib.sitemaps", "django_site"],
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}},
    )
    django.setup()


def seed(path: Path, rows: int) -> None:
    """The table as Django creates it, its lastmods as Django writes them (UTC text)."""
    connection = sqlite3.connect(path)
    connection.executescript(
        'CREATE TABLE "articles" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, '
        '"slug" varchar(200) NOT NULL, "updated_at" datetime NULL);'
        'CREATE INDEX "articles_updated_at" ON "articles" ("updated_at");'
    )
    connection.executemany(
        "INSERT INTO articles (id, slug, updated_at) VALUES (?, ?, ?)",
        (
            (i, f"article-{i}", f"2024-{1 + i % 12:02d}-{1 + i % 28:02d} {i % 24:02d}:00:00")
            for i in range(1, rows + 1)
        ),
    )
    connection.commit()
    connection.close()


def app_of(kind: str) -> WSGI:
    if kind == "django":
        from django.core.wsgi import get_wsgi_application

        return get_wsgi_application()  # type: ignore[no-any-return]
    from django_site.models import Article
    from django_site.sitemaps import ArticleSitemap

    from sitemap_middleware import SitemapWSGIApp
    from sitemap_middleware.contrib.django import DjangoSitemapSource, DjangoSource

    if kind.startswith("adopted"):
        version = (lambda: "v1") if kind == "adopted+version" else None
        source: Any = DjangoSitemapSource(
            ArticleSitemap, name="articles", base_url=BASE, version=version
        )
    else:
        source = DjangoSource(
            Article.objects.all(),
            name="articles",
            loc="/articles/{slug}",
            lastmod="updated_at",
            changefreq="daily",
            priority=0.5,
        )
    return SitemapWSGIApp(base_url=BASE, sources=[source], index="always")


def get(
    app: WSGI, target: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One GET, its body read as a server would; the body kept only for the index."""
    path, _, query = target.partition("?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "example.com",
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "example.com",
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    started: list[Any] = []
    body = app(environ, lambda status, headers, exc_info=None: started.append((status, headers)))
    kept = b""
    try:
        for chunk in body:
            if path.endswith("sitemap.xml"):
                kept += chunk
    finally:
        getattr(body, "close", lambda: None)()
    status, response_headers = started[0]
    return int(status[:3]), {k.lower(): v for k, v in response_headers}, kept


def documents(app: WSGI) -> list[str]:
    """The index and every page it names (paths with their query)."""
    status, _, index = get(app, "/sitemap.xml")
    assert status == 200, status
    locs = re.findall(rb"<loc>https://example\.com(/[^<]*)</loc>", index)
    return ["/sitemap.xml"] + [loc.decode().replace("&amp;", "&") for loc in locs]


def serve_all(app: WSGI, targets: list[str]) -> float:
    start = time.perf_counter()
    for target in targets:
        status, _, _ = get(app, target)
        assert status == 200, (target, status)
    return time.perf_counter() - start


def median_time(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def deep_figures(app: WSGI, targets: list[str], repeat: int) -> tuple[float, float, float | None]:
    """Seconds of the first page, of the deepest full page, and of a 304 on the deep one."""
    first, deep = targets[1], targets[-2] if len(targets) > 2 else targets[1]
    t_first = median_time(lambda: get(app, first), repeat)
    t_deep = median_time(lambda: get(app, deep), repeat)
    etag = get(app, deep)[1].get("etag")
    if etag is None:
        return t_first, t_deep, None
    assert get(app, deep, {"if-none-match": etag})[0] == 304
    return t_first, t_deep, median_time(lambda: get(app, deep, {"if-none-match": etag}), 21)


def child(kind: str, path: Path) -> None:
    """Serve the index and every page once in this fresh process; print the peak RSS."""
    configure(path)
    app = app_of(kind)
    serve_all(app, documents(app))
    print(high_water_mb())


def rss(kind: str, path: Path) -> float:
    command = [sys.executable, __file__, "--child", kind, str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def measure(rows: int, repeat: int, folder: Path) -> list[tuple[str, str, str, str]]:
    big, small = folder / "big.sqlite3", folder / "small.sqlite3"
    seed(big, rows)
    seed(small, max(1, rows // 10))
    configure(big)
    table: list[tuple[str, str, str, str]] = []
    rates: dict[str, float] = {}
    for kind in KINDS:
        app = app_of(kind)
        targets = documents(app)
        serve_all(app, targets)  # warm-up: the index's pages read once, caches filled
        seconds = median_time(lambda app=app, targets=targets: serve_all(app, targets), repeat)
        rates[kind] = rows / seconds
        target, judged = "", ""
        if kind != "django":
            wanted = 15 if kind == "queryset" else 10
            ratio = rates[kind] / rates["django"]
            target, judged = f">= {wanted}x django", f"{ratio:.1f}x {verdict(ratio >= wanted)}"
        table.append(
            (
                f"{kind}: index + {len(targets) - 1} pages, URLs/s",
                f"{rates[kind]:,.0f}",
                target,
                judged,
            )
        )
        t_first, t_deep, t_304 = deep_figures(app, targets, max(repeat, 5))
        ratio = t_deep / t_first
        table.append(
            (
                f"{kind}: deepest full page / first (ms)",
                f"{t_deep * 1000:.1f} / {t_first * 1000:.1f}",
                "<= 1.2",
                f"{ratio:.2f} {verdict(ratio <= 1.2)}",
            )
        )
        if t_304 is None:
            table.append((f"{kind}: 304 / 200 on the deep page", "no validators", "<= 1%", "n/a"))
        else:
            share = t_304 / t_deep
            table.append(
                (
                    f"{kind}: 304 / 200 on the deep page (ms)",
                    f"{t_304 * 1000:.2f} / {t_deep * 1000:.1f}",
                    "<= 1%",
                    f"{share:.2%} {verdict(share <= 0.01)}",
                )
            )
        low, high = rss(kind, small), rss(kind, big)
        flat = f"+{high - low:.1f} MB"
        table.append(
            (
                f"{kind}: peak RSS, {rows // 10:,} / {rows:,} rows (MB)",
                f"{low:.1f} / {high:.1f}",
                "within 5 MB" if kind != "django" else "",
                f"{flat} {verdict(high - low <= 5)}" if kind != "django" else flat,
            )
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.child:
        return child(args.child[0], Path(args.child[1]))
    import django

    print(f"{args.rows:,} rows, Django {django.get_version()}, SQLite file, WSGI in process")
    with tempfile.TemporaryDirectory(
        dir="/dev/shm" if os.path.isdir("/dev/shm") else None
    ) as folder:
        table = measure(args.rows, args.repeat, Path(folder))
    print(f"\n{'measure':52s} {'value':>22s}  {'target':>16s}  verdict")
    print("-" * 104)
    for name, value, target, judged in table:
        print(f"{name:52s} {value:>22s}  {target:>16s}  {judged}")


if __name__ == "__main__":
    main()
