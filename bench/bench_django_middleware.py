"""Benchmark: what Django's handlers add around the sitemap, in-process, one run.

One page of a 50,000-row SQLite table served by ``SitemapWSGIApp`` and ``SitemapApp`` (the
baselines), and by Django's WSGI and ASGI handlers around
``sitemap_middleware.contrib.django.SitemapMiddleware`` (sync and async mode), on the tests' Django
project: URLs/s of a whole page
(``Accept-Encoding: identity``), and the time of a ``304`` against a ``200``. Prints a
table and asserts nothing.

Usage: ``python bench/bench_django_middleware.py [--rows 50000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine

from sitemap_middleware import Freshness
from tests.adapters import DRIVERS, RawHeaders, Reply
from tests.support import article_source, seed

PATH = b"/sitemap-articles-1.xml"


def timed(work: Callable[[], Reply], repeat: int) -> tuple[float, Reply]:
    times, reply = [], work()
    for _ in range(repeat):
        start = time.perf_counter()
        reply = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-django-"))
    engine = create_engine(f"sqlite:///{folder / 'site.sqlite3'}")
    seed(engine, args.rows)
    options: dict[str, Any] = {
        "base_url": "https://example.com/",
        "freshness": Freshness(mode="exact"),
    }
    drivers: dict[str, Any] = {
        "wsgi adapter": DRIVERS["wsgi"](),
        "django wsgi": DRIVERS["django-wsgi"](),
        "asgi adapter": DRIVERS["asgi"](),
        "django asgi": DRIVERS["django-asgi"](),
    }
    identity: RawHeaders = [(b"host", b"example.com"), (b"accept-encoding", b"identity")]
    print(f"{args.rows:,} rows, page {PATH.decode()}, median of {args.repeat}")
    print(f"{'':14} {'200 ms':>9} {'URLs/s':>10} {'304 ms':>8} {'304/200':>8}")
    bodies = set()
    for name, driver in drivers.items():
        app = driver.make([article_source(engine)], **options)
        full, reply = timed(partial(driver.request, app, "GET", PATH, identity), args.repeat)
        if reply.status != 200 or not reply.complete:
            sys.exit(f"{name}: {reply.status}, complete: {reply.complete}")
        bodies.add(reply.body)
        urls = reply.body.count(b"<url>")
        etag = (reply.header("etag") or "").encode()
        conditional = [*identity, (b"if-none-match", etag)]
        cached, reply = timed(partial(driver.request, app, "GET", PATH, conditional), args.repeat)
        if reply.status != 304:
            sys.exit(f"{name}: a conditional GET got {reply.status}")
        print(
            f"{name:14} {full * 1000:9.1f} {urls / full:10,.0f} {cached * 1000:8.2f}"
            f" {cached / full:8.2%}"
        )
        driver.discard(app)
        driver.close()
    print(f"{urls:,} URLs a page; the same bytes through each: {len(bodies) == 1}")
    engine.dispose()


if __name__ == "__main__":
    main()
