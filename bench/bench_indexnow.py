"""IndexNow: rows found and pushed per second from a large PostgreSQL table with recent changes.

    python bench/bench_indexnow.py [--rows 10000000] [--changes 1000] [--url postgresql://...]

Builds (once, then kept) ``indexnow_bench.articles_{rows}`` and a 100,000-row twin with
``generate_series`` (ids 1..n, one ``updated_at`` every 3 s from 2020, an index on it), as
``bench_scale.py`` does. For each table and driver (psycopg, asyncpg): the watermark
starts at now (the first round), ``--changes`` random rows get a new lastmod, and one
round finds them and posts them to a local endpoint on 127.0.0.1 (it answers 200 at
once, so the figure is the library's and the database's). Printed per table:

* the round: rows found and pushed per second, posts;
* the marks query alone (median of 20), with its plan's first line: an index range on
  ``updated_at`` that reads about ``--changes`` rows, whatever the table's size;
* baseline, in the same run: the same query with index scans off (the whole table read),
  which grows with the table.

PostgreSQL: ``--url``, else ``$SITEMAP_TEST_POSTGRES``, else the one ``.ci/postgres`` starts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
from bench_postgres import conninfo, make_table
from sqlalchemy import (
    URL,
    BigInteger,
    Column,
    DateTime,
    MetaData,
    String,
    Table,
    create_engine,
    make_url,
    select,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_middleware import AsyncSQLAlchemySource, IndexNowSettings, SitemapApp, SQLAlchemySource
from sitemap_middleware.contrib.indexnow import IndexNow, install
from sitemap_middleware.sources.base import Mark

DEFAULT_URL = "postgresql://sitemap:sitemap@127.0.0.1:54329/sitemap_test"
SCHEMA = "indexnow_bench"
SEED = """
CREATE TABLE {table} (id bigint NOT NULL, slug text NOT NULL, updated_at timestamptz NOT NULL);
INSERT INTO {table}
SELECT g, 'article-' || g, timestamptz '2020-01-01 00:00:00+00' + make_interval(secs => 3 * g)
  FROM generate_series(1::bigint, {rows}::bigint) AS g;
ALTER TABLE {table} ADD PRIMARY KEY (id);
CREATE INDEX ON {table} (updated_at);
"""


class Endpoint:
    """Answers 200 to every post and counts the URLs."""

    def __init__(self) -> None:
        self.urls = 0
        self.posts = 0
        self.url = ""


@contextmanager
def endpoint() -> Iterator[Endpoint]:
    found = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            found.posts += 1
            found.urls += body.count(b'"https://')
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    found.url = f"http://127.0.0.1:{server.server_address[1]}/indexnow"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


def table_of(rows: int) -> Table:
    return Table(
        f"articles_{rows}",
        MetaData(schema=SCHEMA),
        Column("id", BigInteger, primary_key=True),
        Column("slug", String, nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False, index=True),
    )


def seed(url: URL, rows: int) -> float:
    began = time.perf_counter()
    made = make_table(url, SCHEMA, f"{SCHEMA}.articles_{rows}", rows, SEED)
    return time.perf_counter() - began if made else 0.0


def change(url: URL, rows: int, changes: int) -> None:
    """``changes`` random rows get a lastmod of now (a microsecond apart)."""
    with psycopg.connect(conninfo(url), autocommit=True) as conn:
        conn.execute(
            f"UPDATE {SCHEMA}.articles_{rows} AS a SET updated_at = now() + g.n * interval "
            "'1 microsecond' FROM (SELECT DISTINCT ON (id) id, row_number() OVER () AS n FROM "
            "(SELECT 1 + floor(random() * %s)::bigint AS id FROM generate_series(1, %s)) r) g "
            "WHERE a.id = g.id",
            (rows, changes),
        )


def engine_url(url: URL, driver: str) -> str:
    return url.set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)


def make_pusher(url: URL, driver: str, rows: int, target: str) -> tuple[IndexNow, Any]:
    stmt = select(table_of(rows))
    options = {"name": "articles", "loc": "/articles/{slug}", "lastmod": "updated_at"}
    if driver == "asyncpg":
        settings = {"server_settings": {"search_path": SCHEMA}}
        engine: Any = create_async_engine(engine_url(url, driver), connect_args=settings)
        source: Any = AsyncSQLAlchemySource(stmt, engine, **options)
    else:
        engine = create_engine(
            engine_url(url, driver), connect_args={"options": f"-c search_path={SCHEMA}"}
        )
        source = SQLAlchemySource(stmt, engine, **options)
    app = SitemapApp(
        sources=[source],
        base_url="https://example.com/",
        indexnow=IndexNowSettings(key="bench-key-0001", endpoint=target),
    )
    return IndexNow(app), engine


def timed_query(url: URL, sql: str, index: bool, repeat: int = 20) -> tuple[float, str]:
    """Median seconds of ``sql`` and the first line of its plan."""
    with psycopg.connect(conninfo(url), autocommit=True) as conn:
        if not index:
            conn.execute("SET enable_indexscan = off; SET enable_bitmapscan = off")
        plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql).fetchall()
        times = []
        for _ in range(repeat if index else 3):
            began = time.perf_counter()
            conn.execute(sql).fetchall()
            times.append(time.perf_counter() - began)
    lines = [row[0].strip() for row in plan]
    scan = next((line for line in lines if "Scan" in line), lines[0])
    buffers = next((line for line in lines if line.startswith("Buffers")), "")
    return statistics.median(times), f"{scan[:90]} | {buffers}"


def marks_sql(pusher: IndexNow, mark: Mark, changes: int) -> str:
    """The library's marks query after ``mark``, with its values written in."""
    push = pusher.sources[0].push  # type: ignore[union-attr]
    bounds = push.marks_bounds(mark, datetime.now(UTC), UTC, changes)
    stmt = push.marks_after.params(**bounds)
    return str(stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


def start_mark(url: URL) -> Mark:
    with psycopg.connect(conninfo(url), autocommit=True) as conn:
        row = conn.execute(
            f"SELECT lastmod, row_key FROM {SCHEMA}.sitemap_indexnow WHERE feed LIKE '%articles'"
        ).fetchone()
    assert row is not None
    return Mark(row[0], row[1])


async def round_of(url: URL, driver: str, rows: int, changes: int) -> dict[str, Any]:
    with endpoint() as target:
        pusher, engine = make_pusher(url, driver, rows, target.url)
        if driver == "asyncpg":
            async with engine.begin() as conn:
                await conn.run_sync(install)
        else:
            install(engine)
        with psycopg.connect(conninfo(url), autocommit=True) as conn:
            conn.execute(f"DELETE FROM {SCHEMA}.sitemap_indexnow WHERE feed LIKE '%articles'")
        began = time.perf_counter()
        await pusher.push()  # first round: the mark starts at now
        start_seconds = time.perf_counter() - began
        mark = start_mark(url)
        change(url, rows, changes)
        began = time.perf_counter()
        result = await pusher.push()
        seconds = time.perf_counter() - began
        report = result.reports[0]
        sql = marks_sql(pusher, mark, changes)
        if driver == "asyncpg":
            await engine.dispose()
        else:
            engine.dispose()
    return {
        "rows": report.rows,
        "posts": report.posts,
        "seconds": seconds,
        "start": start_seconds,
        "sql": sql,
        "received": target.urls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--url", help="postgresql:// URL (default $SITEMAP_TEST_POSTGRES)")
    args = parser.parse_args()
    url = make_url(args.url or os.environ.get("SITEMAP_TEST_POSTGRES") or DEFAULT_URL)
    sizes = sorted({100_000, args.rows})
    for rows in sizes:
        made = seed(url, rows)
        print(f"table of {rows:,} rows: {f'built in {made:.1f} s' if made else 'kept'}")
    print(f"\n{args.changes:,} changed rows per table, one round each\n")
    header = f"{'table':>12} {'driver':>8} {'rows':>6} {'posts':>5} {'round':>9} {'rows/s':>9}"
    print(header + f" {'first':>8} {'marks q':>9} {'whole-table baseline':>21}")
    for rows in sizes:
        for driver in ("psycopg", "asyncpg"):
            figures = asyncio.run(round_of(url, driver, rows, args.changes))
            indexed, plan = timed_query(url, figures["sql"], index=True)
            whole, whole_plan = timed_query(url, figures["sql"], index=False)
            rate = figures["rows"] / figures["seconds"]
            print(
                f"{rows:>12,} {driver:>8} {figures['rows']:>6} {figures['posts']:>5} "
                f"{figures['seconds'] * 1000:>7.0f}ms {rate:>9,.0f} "
                f"{figures['start'] * 1000:>6.0f}ms {indexed * 1000:>7.1f}ms "
                f"{whole * 1000:>19.0f}ms"
            )
            if driver == "psycopg":
                print(f"{'':>12} marks query plan: {plan}")
                print(f"{'':>12} baseline plan:    {whole_plan}")


if __name__ == "__main__":
    main()
