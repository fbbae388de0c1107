"""Benchmark: a sitemap index and all its pages, against a hand-written baseline.

In one run it prints

* for N rows (default 500,000): URLs/s over the index and every page through
  the ASGI app, plain and gzip-coded, for the "slim" and "full" sources of
  ``bench_urlset.py``, with a sync ``Engine`` and an ``AsyncEngine`` (aiosqlite),
  against plain ``sqlite3`` + f-strings writing the same bytes (and gzipping
  them with the same zlib settings), and the same rates without the time the
  app spends executing aggregate statements (the summaries a 200 reads first);
  peak RSS of a fresh process serving every page, against the same for 50,000;
* for a table of ``--deep`` rows (default 2,000,000): the time of the last page
  over the first, and of a 304 on the last page over its 200: by the default
  range aggregate, with a :class:`ChangeCounter` (triggers) and with an
  application's ``version=`` token; the aggregate statement alone; and what the
  counter's triggers add to writes.

Usage: ``python bench/bench_index.py [--rows 500000] [--deep 2000000] [--repeat 3]``
(``--deep 0`` leaves the deep table out).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_urlset import (
    BASE,
    SHAPES,
    article_source,
    articles,
    baseline_chunks,
    first_difference,
    get,
    high_water_mb,
    seed,
    timed,
)
from sqlalchemy import create_engine, event, update
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware import Limits, SitemapApp
from sitemap_middleware.core.spec import MAX_BYTES, MAX_URLS
from sitemap_middleware.output.xml import page_size_for
from sitemap_middleware.sources.sqlalchemy.change_counter import ChangeCounter

PAGE_SIZE = page_size_for(MAX_URLS, MAX_BYTES, 2047)
# The deep table declares its short locs, so that a page holds the full 50,000 rows.
DEEP_LOC_LENGTH = 150
DEEP = {"limits": Limits(max_loc_length=DEEP_LOC_LENGTH)}
DEEP_PAGE_SIZE = page_size_for(MAX_URLS, MAX_BYTES, DEEP_LOC_LENGTH)


# Every pass runs in this one event loop: an AsyncEngine's connections belong to the loop
# that opened them.
RUNNER = asyncio.Runner()
ENGINES = ("sync", "async")


def app_for(
    path: Path,
    settings: dict[str, Any] | None = None,
    shape: str = "full",
    engine: str = "sync",
    **options: Any,
) -> SitemapApp:
    bound = (
        create_async_engine(f"sqlite+aiosqlite:///{path}")
        if engine == "async"
        else create_engine(f"sqlite:///{path}")
    )
    source = article_source(bound, shape, **options)
    return SitemapApp(sources=[source], base_url=BASE, index="always", **(settings or {}))


def sync_engine_of(app: SitemapApp) -> Any:
    """The engine whose cursor events the app's statements fire."""
    engine = app.sitemap.sources[0].engine  # type: ignore[union-attr]
    return getattr(engine, "sync_engine", engine)


def pages(path: Path, page_size: int = PAGE_SIZE) -> list[int]:
    connection = sqlite3.connect(path)
    rows = connection.execute(
        f"SELECT DISTINCT id / {page_size} FROM articles ORDER BY 1"
    ).fetchall()
    connection.close()
    return [page + 1 for (page,) in rows]


def library_all(app: SitemapApp, numbers: list[int], coded: bool) -> int:
    headers = {"accept-encoding": "gzip"} if coded else {}

    async def run() -> int:
        total = 0
        for path in ["/sitemap.xml"] + [f"/sitemap-articles-{n}.xml" for n in numbers]:
            status, *_ = await get(app, headers, keep=False, path=path)
            assert status == 200, (path, status)
            total += 1
        return total

    return RUNNER.run(run())


INDEX_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)


def baseline_documents(
    connection: sqlite3.Connection, path: Path, numbers: list[int], shape: str
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """The index and every page as the baseline writes them: (path, chunks)."""
    # The index: one aggregate, as the library reads it.
    rows = connection.execute(
        f"SELECT id / {PAGE_SIZE}, max(updated_at) FROM articles GROUP BY 1 ORDER BY 1"
    ).fetchall()
    index = "".join(
        f"<sitemap><loc>{BASE}sitemap-articles-{b + 1}.xml</loc>"
        f"<lastmod>{m[:10]}T{m[11:19]}+00:00</lastmod></sitemap>\n"
        for b, m in rows
    ).encode()
    yield "/sitemap.xml", iter([INDEX_HEAD + index + b"</sitemapindex>\n"])
    for n in numbers:
        keys = ((n - 1) * PAGE_SIZE, n * PAGE_SIZE)
        yield f"/sitemap-articles-{n}.xml", baseline_chunks(path, keys, connection, shape)


def baseline_all(path: Path, numbers: list[int], coded: bool, shape: str = "full") -> int:
    connection = sqlite3.connect(path)
    served = 0
    for _, chunks in baseline_documents(connection, path, numbers, shape):
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31, 9) if coded else None
        for chunk in chunks:
            if compressor is not None:
                compressor.compress(chunk)
        if compressor is not None:
            compressor.flush()
        served += 1
    connection.close()
    return served


def same_bytes(app: SitemapApp, path: Path, numbers: list[int], shape: str) -> str:
    """Every document of the library against the baseline's, byte for byte."""
    connection = sqlite3.connect(path)

    async def compare() -> str:
        for name, chunks in baseline_documents(connection, path, numbers, shape):
            expected = b"".join(chunks)
            got = (await get(app, keep=True, path=name)).body
            if got != expected:
                return f"{name} {first_difference(expected, got)}"
        return f"identical (the index and {len(numbers)} pages)"

    try:
        return RUNNER.run(compare())
    finally:
        connection.close()


def aggregate_seconds(app: SitemapApp, numbers: list[int], coded: bool) -> float:
    """Seconds one pass over the index and every page spends executing aggregate statements
    (the summaries read before a 200, the index's pages): client-side, SQLAlchemy's cursor
    events. The rows statements are left out (their rows are read after the event)."""
    engine = sync_engine_of(app)
    spent = [0.0]
    started: list[float] = []

    def before(*args: Any) -> None:
        started.append(time.perf_counter() if "count(" in args[2] else 0.0)

    def after(*args: Any) -> None:
        start = started.pop()
        if start:
            spent[0] += time.perf_counter() - start

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        library_all(app, numbers, coded)
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)
    return spent[0]


def median(run: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def child_rss(path: Path) -> None:
    library_all(app_for(path), pages(path), coded=False)
    print(high_water_mb())


def rss_of(path: Path) -> float:
    result = subprocess.run(
        [sys.executable, __file__, "--child-rss", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


async def deep_figures(
    app: SitemapApp, first: int, last: int, repeat: int
) -> tuple[float, float, float, tuple[str, Any] | None]:
    """Median seconds of page ``first`` and page ``last`` (interleaved), of a 304 on
    ``last``, and the statement that 304 runs (None when it runs none).

    All in one root task, as under a server: anyio keeps its worker threads for the
    life of the root task (a new event loop task per request would start threads).
    """

    async def fetch(n: int, headers: dict[str, str] | None = None) -> Any:
        return await get(app, headers, keep=False, path=f"/sitemap-articles-{n}.xml")

    await fetch(first)  # warm-up: statements compiled, summaries read
    await fetch(last)
    firsts, lasts = [], []
    for _ in range(repeat):
        firsts.append(await timed(lambda: fetch(first)))
        lasts.append(await timed(lambda: fetch(last)))
    conditional = {"if-none-match": (await fetch(last)).headers["etag"]}
    assert (await fetch(last, conditional)).status == 304
    samples = []
    for _ in range(41):
        start = time.perf_counter()
        await fetch(last, conditional)
        samples.append(time.perf_counter() - start)
    engine = app.sitemap.sources[0].engine  # type: ignore[union-attr]
    seen: list[tuple[str, Any]] = []

    def record(*args: Any) -> None:
        seen.append((args[2], args[3]))

    event.listen(engine, "before_cursor_execute", record)
    await fetch(last, conditional)
    event.remove(engine, "before_cursor_execute", record)
    return (
        statistics.median(firsts),
        statistics.median(lasts),
        statistics.median(samples),
        seen[-1] if seen else None,
    )


def statement_ms(path: Path, sql: str, parameters: Any) -> float:
    connection = sqlite3.connect(path)
    connection.execute(sql, parameters).fetchall()
    times = []
    for _ in range(21):
        start = time.perf_counter()
        connection.execute(sql, parameters).fetchall()
        times.append(time.perf_counter() - start)
    connection.close()
    return statistics.median(times) * 1000


def write_cost(path: Path, counter: ChangeCounter) -> tuple[float, float]:
    """One UPDATE of 10,000 rows (in its own transaction), without and with the triggers."""
    engine = create_engine(f"sqlite:///{path}")
    # Each run really changes the rows (SQLite skips nothing, but be sure).
    statement = update(articles).where(articles.c.id <= 10_000).values(slug=articles.c.slug + "-")

    def timed() -> float:
        times = []
        for _ in range(5):
            start = time.perf_counter()
            with engine.begin() as conn:
                conn.execute(statement)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    without = timed()
    with engine.begin() as conn:
        counter.install(conn)
    with_triggers = timed()
    with engine.begin() as conn:
        counter.uninstall(conn)
    engine.dispose()
    return without, with_triggers


def deep_rows(deep: Path, small: Path, size: int, repeat: int, row: Any) -> None:
    """The deep table's rows of the report: last page against the first, 304s, writes."""
    seed(deep, size)
    deep_pages = pages(deep, DEEP_PAGE_SIZE)
    # The last page holds only the remainder (keys are 1..N): compare the deepest full one.
    first, last = deep_pages[0], deep_pages[-2]
    counter = ChangeCounter(articles)  # groups of 1,000 keys: 50 per page
    installer = create_engine(f"sqlite:///{deep}")
    with installer.begin() as conn:
        counter.install(conn)
    installer.dispose()
    for label, options in (
        ("range aggregate (default)", {}),
        ("ChangeCounter triggers", {"version": counter}),
        ("application version token", {"version": lambda: "v1"}),
    ):
        app = app_for(deep, DEEP, **options)
        figures = asyncio.run(deep_figures(app, first, last, max(repeat, 5)))
        t_first, t_last, t_304, sql = figures
        if not options:
            ratio = t_last / t_first
            row(
                f"page {last} / page {first} (ms)",
                f"{t_last * 1000:.1f} / {t_first * 1000:.1f}",
                "<= 1.2",
                f"{ratio:.2f} {'met' if ratio <= 1.2 else 'MISSED'}",
            )
        share = t_304 / t_last
        row(
            f"304 / 200 on page {last}, {label} (ms)",
            f"{t_304 * 1000:.2f} / {t_last * 1000:.1f}",
            "<= 1%",
            f"{share:.2%} {'met' if share <= 0.01 else 'MISSED'}",
        )
        if sql is not None:
            row("  the 304's statement alone in sqlite3 (ms)", f"{statement_ms(deep, *sql):.3f}")
    without, with_triggers = write_cost(small, counter)
    row(
        "UPDATE of 10,000 rows, without / with triggers (ms)",
        f"{without:.1f} / {with_triggers:.1f}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--deep", type=int, default=2_000_000, help="0: no deep table")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child-rss", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rss:
        return child_rss(args.child_rss)

    print(
        f"{args.rows:,} rows in pages of {PAGE_SIZE:,} (locs up to 2,047 characters); "
        f"deep table of {args.deep:,} rows in pages of {DEEP_PAGE_SIZE:,} (locs up to 150)"
    )
    rows: list[tuple[str, str, str, str]] = []

    def row(measure: str, value: str, target: str = "", verdict: str = "") -> None:
        rows.append((measure, value, target, verdict))

    with tempfile.TemporaryDirectory() as folder:
        big, small, deep = (Path(folder) / f"{n}.sqlite3" for n in ("big", "small", "deep"))
        seed(big, args.rows)
        seed(small, 50_000)
        numbers = pages(big)
        for shape, engine in ((shape, engine) for shape in SHAPES for engine in ENGINES):
            verdict = same_bytes(app_for(big, shape=shape, engine=engine), big, numbers, shape)
            print(f"{shape}, {engine} engine: library against baseline: {verdict}")
            for coded in (False, True):
                app = app_for(big, shape=shape, engine=engine)
                library_all(app, numbers, coded)  # warm-up, reads the index's pages once
                t_lib = median(lambda app=app, c=coded: library_all(app, numbers, c), args.repeat)
                t_base = median(
                    lambda c=coded, s=shape: baseline_all(big, numbers, c, s), args.repeat
                )
                t_aggregates = statistics.median(
                    aggregate_seconds(app, numbers, coded) for _ in range(args.repeat)
                )
                label = f"{shape}, {engine}, {'gzip' if coded else 'plain'}"
                share = t_base / t_lib
                row(f"baseline, all pages + index, {label}, URLs/s", f"{args.rows / t_base:,.0f}")
                row(
                    f"library, all pages + index, {label}, URLs/s",
                    f"{args.rows / t_lib:,.0f}",
                    ">= 80% baseline",
                    f"{share:.0%} {'met' if share >= 0.8 else 'MISSED'}",
                )
                body = t_lib - t_aggregates
                row(
                    f"  without its aggregates ({t_aggregates * 1000:.0f} ms of "
                    f"{t_lib * 1000:.0f})",
                    f"{args.rows / body:,.0f}",
                    "",
                    f"{t_base / body:.0%}",
                )
        rss_big, rss_small = rss_of(big), rss_of(small)
        row(
            f"peak RSS, every page of 50k / {args.rows // 1000}k rows (MB)",
            f"{rss_small:.1f} / {rss_big:.1f}",
            "within 5 MB",
            f"+{rss_big - rss_small:.1f} MB {'met' if rss_big - rss_small <= 5 else 'MISSED'}",
        )

        if args.deep:
            deep_rows(deep, small, args.deep, args.repeat, row)

    print(f"\n{'measure':60s} {'value':>22s}  {'target':>16s}  verdict")
    print("-" * 112)
    for measure, value, target, verdict in rows:
        print(f"{measure:60s} {value:>22s}  {target:>16s}  {verdict}")


if __name__ == "__main__":
    main()
