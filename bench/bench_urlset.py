"""Benchmark: one streamed urlset from SQLite through the ASGI app, against a hand-written baseline.

Prints a table; asserts nothing. In one run it measures

* URLs/s for the whole document through the ASGI app (sync engine and
  AsyncEngine/aiosqlite), against plain ``sqlite3`` + f-strings writing the
  same bytes (checked byte for byte);
* peak RSS after serving N = 5,000 and N = 50,000 rows (fresh processes);
* the cost of a 304 (If-None-Match and If-Modified-Since) against a 200, and
  how many SQL statements a 304 runs.

Usage: ``python bench/bench_urlset.py [--rows 50000] [--repeat 5] [--quick]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy
from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from sitemap_middleware import AsyncSQLAlchemySource, SitemapApp, SQLAlchemySource

BASE = "https://example.com/"
metadata = MetaData()
articles = Table(
    "articles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False, index=True),
)
START = datetime(2020, 1, 1)
Message = MutableMapping[str, Any]


def slug_for(i: int) -> str:
    if i % 50 == 0:
        return f"café crème {i}"  # needs percent-encoding (about 2%)
    if i % 100 == 1:
        return f"fish&chips-{i}"  # needs entity-escaping (about 1%)
    return f"article-{i}-some-title"


def seed(path: Path, rows: int) -> None:
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    with engine.begin() as conn:
        for start in range(1, rows + 1, 20_000):
            conn.execute(
                insert(articles),
                [
                    {"id": i, "slug": slug_for(i), "updated_at": START + timedelta(seconds=37 * i)}
                    for i in range(start, min(start + 20_000, rows + 1))
                ],
            )
    engine.dispose()


# Locs here are short; declaring it lets one page hold all 50,000 rows (see page_rows).
ONE_PAGE = {"max_loc_length": 150}


def article_source(engine: Any, **options: Any) -> Any:
    """The benchmarked source, on a sync Engine or an AsyncEngine."""
    kind = AsyncSQLAlchemySource if isinstance(engine, AsyncEngine) else SQLAlchemySource
    return kind(
        select(articles.c.id, articles.c.slug, articles.c.updated_at),
        engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
        changefreq="weekly",
        **options,
    )


def sync_app(path: Path, **settings: Any) -> tuple[Any, sqlalchemy.Engine]:
    engine = create_engine(f"sqlite:///{path}")
    app = SitemapApp(sources=[article_source(engine)], base_url=BASE, **(settings or ONE_PAGE))
    return app, engine


def async_app(path: Path, **settings: Any) -> tuple[Any, Any]:
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    app = SitemapApp(sources=[article_source(engine)], base_url=BASE, **(settings or ONE_PAGE))
    return app, engine


async def get(
    app: Callable[..., Awaitable[None]],
    headers: dict[str, str] | None = None,
    keep: bool = True,
    path: str = "/sitemap.xml",
) -> tuple[int, dict[str, str], bytes, int]:
    """One request straight into the ASGI app: status, headers, body, body messages.

    ``keep=False`` drops each chunk once received, as a server writing to a socket would.
    """
    status, response_headers, parts = 0, {}, []
    done = asyncio.Event()
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, response_headers
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            parts.append(message.get("body", b"") if keep else b"")
            if not message.get("more_body"):
                done.set()

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "http_version": "1.1",
        "scheme": "https",
        "server": ("example.com", 443),
        "asgi": {"version": "3.0"},
        "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    await app(scope, receive, send)
    return status, response_headers, b"".join(parts), len(parts)


def baseline(path: Path) -> bytes:
    return b"".join(baseline_chunks(path))


def baseline_chunks(
    path: Path, keys: tuple[int, int] = (0, 2**62), connection: sqlite3.Connection | None = None
) -> Iterator[bytes]:
    """Plain sqlite3 and f-strings, writing the same bytes as the library (keys low..high-1)."""
    own = connection is None
    connection = connection or sqlite3.connect(path)
    cursor = connection.execute(
        "SELECT id, slug, updated_at FROM articles WHERE id >= ? AND id < ? ORDER BY id", keys
    )
    prefix = BASE + "articles/"
    yield (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    )
    while rows := cursor.fetchmany(500):
        lines = []
        for _, slug, updated in rows:
            if not slug.isascii() or " " in slug:
                slug = quote(slug, safe="!$&'()*+,;=:@/~")
            if "&" in slug:
                slug = slug.replace("&", "&amp;")
            lines.append(
                f"<url><loc>{prefix}{slug}</loc><lastmod>{updated[:10]}T{updated[11:19]}+00:00"
                "</lastmod><changefreq>weekly</changefreq></url>\n"
            )
        yield "".join(lines).encode()
    yield b"</urlset>\n"
    if own:
        connection.close()


def median_time(run: Callable[[], object], repeat: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mb(kind: str, path: Path) -> float:
    """Serve the document once in a fresh process (the database already seeded); peak RSS, MB."""
    result = subprocess.run(
        [sys.executable, __file__, "--child-rss", kind, "--db", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


def child_rss(kind: str, path: Path) -> None:
    if kind == "library":
        app, _ = sync_app(path)
        status, _, _, messages = asyncio.run(get(app, keep=False))
        assert status == 200 and messages > 1
    else:
        for _ in baseline_chunks(path):
            pass
    print(high_water_mb())


def high_water_mb() -> float:
    """Peak RSS of this process image. ``ru_maxrss`` would also count the parent's RSS
    at fork time, which Linux carries across ``exec``; ``VmHWM`` starts afresh."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def first_difference(a: bytes, b: bytes) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"first difference at byte {at}: {a[at - 40 : at + 40]!r} vs {b[at - 40 : at + 40]!r}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5,000 rows, 3 repeats")
    parser.add_argument("--child-rss", choices=["library", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rss:
        return child_rss(args.child_rss, args.db)
    rows, repeat = (5_000, 3) if args.quick else (args.rows, args.repeat)

    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"SQLAlchemy {sqlalchemy.__version__}, {os.cpu_count()} CPUs; {rows:,} rows, "
        f"median of {repeat}"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        seed(path, rows)
        app, engine = sync_app(path)
        a_app, a_engine = async_app(path)
        loop = asyncio.new_event_loop()

        status, headers, body, messages = loop.run_until_complete(get(app))
        assert status == 200
        reference = baseline(path)
        same = "identical" if reference == body else first_difference(reference, body)

        t_base = median_time(lambda: baseline(path), repeat)
        t_sync = median_time(lambda: loop.run_until_complete(get(app)), repeat)
        t_async = median_time(lambda: loop.run_until_complete(get(a_app)), repeat)

        statements: list[str] = []
        event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        conditional = [
            ("If-None-Match", {"if-none-match": headers["etag"]}),
            ("If-Modified-Since", {"if-modified-since": headers["last-modified"]}),
        ]
        t_304: dict[str, float] = {}
        for label, request_headers in conditional:
            statements.clear()
            status_304 = loop.run_until_complete(get(app, request_headers))[0]
            assert status_304 == 304, status_304
            per_304 = len(statements)
            t_304[label] = median_time(
                lambda h=request_headers: loop.run_until_complete(get(app, h)), max(repeat, 21)
            )
        loop.run_until_complete(a_engine.dispose())
        loop.close()
        engine.dispose()

    rss: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for n in (5_000, 50_000):
            path = Path(folder) / f"rss-{n}.sqlite3"
            seed(path, n)
            for kind in ("library", "baseline"):
                rss[(kind, n)] = peak_rss_mb(kind, path)

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    rate = {
        name: rows / t for name, t in (("baseline", t_base), ("sync", t_sync), ("async", t_async))
    }
    print(f"\nbytes: {len(body):,} in {messages} body messages; baseline output {same}\n")
    print(f"{'measure':44s} {'value':>16s}  {'target':>16s}  verdict")
    print("-" * 90)
    print(f"{'baseline sqlite3 + f-string, URLs/s':44s} {rate['baseline']:16,.0f}")
    for name in ("sync", "async"):
        share = rate[name] / rate["baseline"]
        print(
            f"{'library, ' + name + ' engine, URLs/s':44s} {rate[name]:16,.0f}  "
            f"{'>= 50% baseline':>16s}  {share:.0%} {verdict(share >= 0.5)}"
        )
    for kind in ("library", "baseline"):
        small, large = rss[(kind, 5_000)], rss[(kind, 50_000)]
        print(
            f"{'peak RSS ' + kind + ', 5k / 50k rows (MB)':44s} {small:7.1f} / {large:6.1f}  "
            f"{'50k - 5k <= 5 MB' if kind == 'library' else '':>16s}  "
            + (
                f"+{large - small:.1f} MB {verdict(large - small <= 5)}"
                if kind == "library"
                else f"+{large - small:.1f} MB"
            )
        )
    print(f"{'200, full document (ms)':44s} {t_sync * 1000:16.2f}")
    for label, seconds in t_304.items():
        share = seconds / t_sync
        print(
            f"{'304 via ' + label + ' (ms)':44s} {seconds * 1000:16.3f}  "
            f"{'<= 1% of a 200':>16s}  {share:.2%} {verdict(share <= 0.01)}"
        )
    print(f"{'SQL statements per 304':44s} {per_304:16d}  {'aggregates only':>16s}")


if __name__ == "__main__":
    main()
