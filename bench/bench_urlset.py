"""Benchmark: one streamed urlset from SQLite through the ASGI app, against a hand-written baseline.

Prints a table and asserts nothing. In one run it measures

* URLs/s for the whole ``/sitemap.xml`` driven straight into the ASGI app (no
  server), with a sync ``Engine`` and with an ``AsyncEngine`` (aiosqlite),
  against plain ``sqlite3`` + f-strings writing the same bytes (compared once,
  byte for byte), for two sources: "slim" (slug and lastmod columns, a constant
  changefreq) and "full" (changefreq and priority columns too, a third of each
  NULL), plain and gzip-coded (the baseline gzipping its chunks with the same zlib
  settings); and the same rates without the summary statement that precedes a 200;
* peak RSS of fresh processes serving 5,000 and 50,000 rows, library and baseline;
* the time of a 304 (``If-None-Match``, ``If-Modified-Since``) against a full
  200, and the SQL statements a 304 and a 200 run.

Usage: ``python bench/bench_urlset.py [--rows 50000] [--repeat 5] [--quick] [--profile |
--stages] [--shape slim|full]``
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import math
import os
import platform
import pstats
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

import aiosqlite
import anyio.to_thread
import sqlalchemy
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Float,
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

from sitemap_middleware import AsyncSQLAlchemySource, Limits, SitemapApp, SQLAlchemySource
from sitemap_middleware.sources.sqlalchemy.sqlite_hash import ROW_HASH, row_hash
from sitemap_middleware.testing import asgi_exchange, asgi_scope

BASE = "https://example.com/"
MAX_ROWS = 50_000  # one urlset holds at most 50,000 URLs; bench_index.py covers more
RSS_ROWS = (5_000, 50_000)
START = datetime(2020, 1, 1)

Message = MutableMapping[str, Any]
ASGIApp = Callable[[Message, Any, Any], Awaitable[None]]

metadata = MetaData()
articles = Table(
    "articles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime, nullable=False, index=True),
    Column("changefreq", String),
    Column("priority", Float),
)
# The shapes of source measured: "slim" selects the slug and lastmod alone (a constant
# changefreq); "full" also selects the changefreq and priority columns (a third NULL each).
SHAPES = ("slim", "full")

# With the default max_loc_length (2,047) a page holds only 4,225 rows (every loc is assumed
# 2,047 characters, each escaped to 6 bytes), so /sitemap.xml of 5,000+ rows would be a
# sitemapindex. The locs here are under 60 characters; declaring 150 makes one page hold
# 50,000 rows, so /sitemap.xml is the whole table as one urlset.
ONE_PAGE: dict[str, Any] = {"limits": Limits(max_loc_length=150)}


# --- data -------------------------------------------------------------------------------


def slug_for(i: int) -> str:
    if i % 100 == 0:
        return f"café-{i}"  # non-ASCII: percent-encoded (1%)
    if i % 100 == 50:
        return f"summer sale {i}"  # spaces: percent-encoded (1%)
    if i % 100 == 1:
        return f"fish&chips-{i}"  # '&' -> '&amp;' (1%)
    if i % 200 == 3:
        return f"o'brien-{i}"  # "'" -> '&apos;' (0.5%)
    return f"article-{i}-some-title"


def updated_for(i: int) -> datetime:
    """Naive UTC, increasing with the id, with fractions of a second (which the XML drops)."""
    return START + timedelta(seconds=37 * i, microseconds=(i * 7919) % 1_000_000)


CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


def changefreq_for(i: int) -> str | None:
    """A third NULL, the others every value in turn."""
    return None if i % 3 == 0 else CHANGEFREQS[i % 7]


def priority_for(i: int) -> float | None:
    """A third NULL (not the same third), the others 0.0 to 1.0 in tenths."""
    return None if i % 3 == 1 else (i * 7 % 11) / 10


def seed(path: Path, rows: int) -> None:
    """``rows`` articles (ids 1..rows), inserted with executemany in one transaction."""
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    with engine.begin() as conn:
        for start in range(1, rows + 1, 10_000):
            conn.execute(
                insert(articles),
                [
                    {
                        "id": i,
                        "slug": slug_for(i),
                        "updated_at": updated_for(i),
                        "changefreq": changefreq_for(i),
                        "priority": priority_for(i),
                    }
                    for i in range(start, min(start + 10_000, rows + 1))
                ],
            )
    engine.dispose()


# --- the library --------------------------------------------------------------------------


def article_source(engine: Engine | AsyncEngine, shape: str = "full", **options: Any) -> Any:
    """The benchmarked source, on a sync Engine or an AsyncEngine, of one of ``SHAPES``."""
    kind = AsyncSQLAlchemySource if isinstance(engine, AsyncEngine) else SQLAlchemySource
    columns = [articles.c.id, articles.c.slug, articles.c.updated_at]
    if shape == "full":
        columns += [articles.c.changefreq, articles.c.priority]
        options = {"changefreq_column": "changefreq", "priority_column": "priority", **options}
    else:
        options = {"changefreq": "weekly", **options}
    return kind(
        select(*columns),
        engine,
        name="articles",
        loc="/articles/{slug}",
        lastmod="updated_at",
        **options,
    )


def make_app(engine: Engine | AsyncEngine, shape: str = "full") -> SitemapApp:
    return SitemapApp(sources=[article_source(engine, shape)], base_url=BASE, **ONE_PAGE)


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes  # empty unless keep=True
    messages: int  # http.response.body messages
    size: int  # body bytes


async def get(
    app: ASGIApp,
    headers: dict[str, str] | None = None,
    keep: bool = False,
    path: str = "/sitemap.xml",
) -> Reply:
    """One GET straight into the ASGI app, through the in-process client the CLI uses.

    It counts body messages and bytes and drops the chunks (as a server writing to a
    socket would) unless ``keep``.
    """
    status = 0
    response_headers: dict[str, str] = {}
    parts: list[bytes] = []
    messages = size = 0

    def observe(message: Message) -> None:
        nonlocal status, response_headers, messages, size
        if message["type"] == "http.response.start":
            status = message["status"]
            response_headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            chunk: bytes = message.get("body", b"")
            messages += 1
            size += len(chunk)
            if keep:
                parts.append(chunk)

    lines = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    scope = asgi_scope("GET", path.encode("ascii"), lines, "https", ("example.com", 443))
    await asgi_exchange(app, scope, observe)
    return Reply(status, response_headers, b"".join(parts), messages, size)


# --- the baseline -------------------------------------------------------------------------

HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)
TAIL = b"</urlset>\n"
# Characters a URI path holds as they are; anything else means the slug must be quoted.
_NEEDS_QUOTING = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/]").search
_SAFE = "!$&'()*+,;=:@/~"


def written_slug(slug: str) -> str:
    """A slug as the baseline writes it in a loc: percent-encoded when it must be, then
    entity-escaped (this data holds no other character XML escapes). Written by hand, not
    with the library's ``xml.escape``: the baseline shares no code with what it measures."""
    if _NEEDS_QUOTING(slug):
        slug = quote(slug, safe=_SAFE)
    if "&" in slug:
        slug = slug.replace("&", "&amp;")
    if "'" in slug:
        slug = slug.replace("'", "&apos;")
    return slug


def baseline_columns(shape: str) -> str:
    return "id, slug, updated_at" + (", changefreq, priority" if shape == "full" else "")


def baseline_rows(rows: list[Any], full: bool) -> bytes:
    """Rows as the baseline writes them: f-strings, the library's bytes for this data.

    Same output for this data: slugs without ``%``, ``?`` or ``#`` (the library keeps valid
    ``%XX`` escapes and encodes ``?``/``#``), priorities in tenths (the library writes up
    to four decimals). Checks nothing else.
    """
    prefix = BASE + "articles/"
    lines = []
    for row in rows:
        slug, updated = written_slug(row[1]), row[2]
        if full:
            changefreq, priority = row[3], row[4]
            tail = "" if changefreq is None else f"<changefreq>{changefreq}</changefreq>"
            if priority is not None:
                tail += f"<priority>{priority:.1f}</priority>"
        else:
            tail = "<changefreq>weekly</changefreq>"
        lines.append(
            f"<url><loc>{prefix}{slug}</loc>"
            f"<lastmod>{updated[:10]}T{updated[11:19]}+00:00</lastmod>{tail}</url>\n"
        )
    return "".join(lines).encode()


def baseline_chunks(
    path: Path,
    keys: tuple[int, int] | None = None,
    connection: sqlite3.Connection | None = None,
    shape: str = "full",
) -> Iterator[bytes]:
    """Plain sqlite3 and f-strings (:func:`baseline_rows`), the same bytes as the library
    (``keys``: low <= id < high)."""
    conn = connection or sqlite3.connect(path)
    columns = baseline_columns(shape)
    try:
        if keys is None:
            cursor = conn.execute(f"SELECT {columns} FROM articles ORDER BY id")
        else:
            cursor = conn.execute(
                f"SELECT {columns} FROM articles WHERE id >= ? AND id < ? ORDER BY id", keys
            )
        yield HEAD
        while rows := cursor.fetchmany(500):
            yield baseline_rows(rows, shape == "full")
        yield TAIL
    finally:
        if connection is None:
            conn.close()


async def aiosqlite_baseline(connection: aiosqlite.Connection, shape: str) -> list[bytes]:
    """What a hand-written async view would do: aiosqlite, 2,000 rows a trip to its thread
    (as the library's AsyncEngine sources fetch), the rows written by :func:`baseline_rows`
    on the event loop, 500 at a time. For the async rows' driver cost: not the target's
    baseline."""
    chunks = [HEAD]
    query = f"SELECT {baseline_columns(shape)} FROM articles ORDER BY id"
    async with connection.execute(query) as cursor:
        while rows := list(await cursor.fetchmany(2_000)):
            for start in range(0, len(rows), 500):
                chunks.append(baseline_rows(rows[start : start + 500], shape == "full"))
    chunks.append(TAIL)
    return chunks


def baseline(path: Path, shape: str = "full") -> list[bytes]:
    """The whole document as a list of chunks."""
    return list(baseline_chunks(path, shape=shape))


def baseline_gzip(path: Path, shape: str = "full") -> list[bytes]:
    """The whole document gzip-coded as it is written (zlib's gzip wrapper, level 6, as
    the library's): the coded chunks."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31, 9)
    coded = [compressor.compress(chunk) for chunk in baseline_chunks(path, shape=shape)]
    coded.append(compressor.flush())
    return coded


GZIP = {"accept-encoding": "gzip"}
CODINGS = ("", "+gzip")  # the suffix of a run's name: plain, gzip-coded


# --- measuring ----------------------------------------------------------------------------
#
# Every request of a run is awaited inside ONE root task, as under a server. anyio keeps its
# worker threads for the life of the root task, so a fresh ``asyncio.run`` (or
# ``Runner.run``) per request would start a new worker thread each time: about 0.25 ms, a
# third of a 304.

Run = Callable[[], Awaitable[object]]


async def timed(run: Run, collect: bool = True) -> float:
    """Wall time of one run; ``collect`` first runs the GC, so no collection lands inside.

    Not for sub-millisecond runs: a full collection just before makes the next request
    about 0.5 ms slower (a 304 measures 1.2 ms instead of 0.7 ms).
    """
    if collect:
        gc.collect()
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def interleaved(runs: dict[str, Run], repeat: int) -> dict[str, list[float]]:
    """One warm-up each, then ``repeat`` rounds of every run in turn (drift hits all alike)."""
    for run in runs.values():
        await run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            times[name].append(await timed(run))
    return times


def first_difference(expected: bytes, got: bytes) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(expected, got, strict=False)) if x != y),
        min(len(expected), len(got)),
    )
    low = max(0, at - 60)
    return (
        f"DIFFERENT from byte {at:,} (lengths {len(expected):,} / {len(got):,}):\n"
        f"  baseline {expected[low : at + 60]!r}\n  library  {got[low : at + 60]!r}"
    )


@dataclass
class Figures:
    times: dict[str, dict[str, list[float]]]  # by shape, then baseline, sync, async (each
    # also +gzip): seconds per document
    per_200: int  # SQL statements
    per_304: float
    t_304: dict[str, float]  # median seconds, by conditional header
    statuses_304: dict[str, set[int]]
    conditional_runs: int
    t_summary_sql: float  # the 304's statement alone, in plain sqlite3
    t_before_body: dict[str, float]  # by shape: what a warm 200 runs before its rows (nan: none)


async def same_bytes(
    path: Path, rows: int, shape: str, app: ASGIApp, async_app: ASGIApp
) -> tuple[str, str]:
    """Serve the document once through both apps and compare it with the baseline's, byte
    for byte; the validators of the 200."""
    reply = await get(app, keep=True)
    async_reply = await get(async_app, keep=True)
    expected = b"".join(baseline(path, shape))
    kind = "urlset" if b"<urlset" in reply.body[:200] else "NOT a urlset"
    print(
        f"{shape}: library sync:  status {reply.status}, {reply.size:,} bytes in "
        f"{reply.messages} body messages, {reply.body.count(b'<url>'):,} <url> of {rows:,} "
        f"rows ({kind})"
    )
    same = "same bytes as sync" if async_reply.body == reply.body else "DIFFERENT bytes"
    print(
        f"{shape}: library async: status {async_reply.status}, {async_reply.size:,} bytes in "
        f"{async_reply.messages} body messages; {same}"
    )
    identical = expected == reply.body
    print(
        f"{shape}: baseline:      {len(expected):,} bytes; against the library: "
        + ("identical" if identical else first_difference(expected, reply.body))
    )
    coded = [await get(app, GZIP, keep=True), await get(async_app, GZIP, keep=True)]
    inflate = [zlib.decompress(c.body, 31) == reply.body for c in coded]
    print(
        f"{shape}: gzip-coded:    {coded[0].size:,} bytes (baseline "
        f"{len(b''.join(baseline_gzip(path, shape))):,}); sync and async inflate to the plain "
        f"body: {'yes' if all(inflate) else 'NO'}"
    )
    return reply.headers.get("etag", ""), reply.headers.get("last-modified", "")


async def measure(path: Path, rows: int, repeat: int) -> Figures:
    engine = create_engine(f"sqlite:///{path}")
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    apps = {shape: (make_app(engine, shape), make_app(async_engine, shape)) for shape in SHAPES}
    app = apps["full"][0]
    driver = await aiosqlite.connect(path)
    try:
        validators = {}
        for shape, (sync_app, async_app) in apps.items():
            validators[shape] = await same_bytes(path, rows, shape, sync_app, async_app)
            same = b"".join(await aiosqlite_baseline(driver, shape)) == b"".join(
                baseline(path, shape)
            )
            print(f"{shape}: aiosqlite baseline: {'identical' if same else 'DIFFERENT'} bytes")
        runs_by_shape: dict[str, Run] = {}
        for shape, (sync_app, async_app) in apps.items():

            async def run_baseline(shape: str = shape) -> None:
                baseline(path, shape)  # sync: blocks the loop, which has nothing else to do

            async def run_baseline_gzip(shape: str = shape) -> None:
                baseline_gzip(path, shape)

            runs_by_shape[f"{shape} baseline"] = run_baseline
            runs_by_shape[f"{shape} sync"] = lambda a=sync_app: get(a)
            runs_by_shape[f"{shape} async"] = lambda a=async_app: get(a)
            runs_by_shape[f"{shape} baseline+gzip"] = run_baseline_gzip
            runs_by_shape[f"{shape} sync+gzip"] = lambda a=sync_app: get(a, GZIP)
            runs_by_shape[f"{shape} async+gzip"] = lambda a=async_app: get(a, GZIP)
            runs_by_shape[f"{shape} aiosqlite"] = lambda s=shape: aiosqlite_baseline(driver, s)
        flat = await interleaved(runs_by_shape, repeat)
        times: dict[str, dict[str, list[float]]] = {shape: {} for shape in SHAPES}
        for label, samples in flat.items():
            shape, name = label.split()
            times[shape][name] = samples

        # SQL statements per request (sync engine, every column), and the first 304 of each.
        statements: list[tuple[str, Any]] = []

        def count(*args: Any) -> None:
            statements.append((args[2], args[3]))  # statement, parameters

        etag, last_modified = validators["full"]
        conditional = {
            "If-None-Match": {"if-none-match": etag},
            "If-Modified-Since": {"if-modified-since": last_modified},
        }
        event.listen(engine, "before_cursor_execute", count)
        before_body: dict[str, list[tuple[str, Any]]] = {}
        for shape, (sync_app, _) in apps.items():
            # Pages kept current first: a recount due now would run beside the request, in
            # the background, and its statements would land here as if the request ran them.
            await sync_app.recount()
            statements.clear()
            await get(sync_app)
            before_body[shape] = statements[:-1]  # the rows statement comes last
        per_200 = len(statements)
        statements.clear()
        first = {label: (await get(app, h)).status for label, h in conditional.items()}
        per_304 = len(statements) / len(conditional)
        summary_sql, summary_params = statements[0] if statements else ("", ())
        event.remove(engine, "before_cursor_execute", count)

        runs = max(30, 20 * repeat)
        t_304: dict[str, float] = {}
        statuses: dict[str, set[int]] = {}
        for label, h in conditional.items():
            seen = {first[label]}
            samples = []
            for _ in range(runs):
                start = time.perf_counter()
                seen.add((await get(app, h)).status)
                samples.append(time.perf_counter() - start)
            t_304[label], statuses[label] = statistics.median(samples), seen
    finally:
        await driver.close()
        await async_engine.dispose()
        engine.dispose()

    t_sql = statement_seconds(path, [(summary_sql, summary_params)] if summary_sql else [], runs)
    t_before = {shape: statement_seconds(path, before_body[shape], runs) for shape in SHAPES}
    return Figures(times, per_200, per_304, t_304, statuses, runs, t_sql, t_before)


def statement_seconds(path: Path, statements: list[tuple[str, Any]], runs: int) -> float:
    """Median seconds of running ``statements`` alone in plain sqlite3 (nan: none)."""
    if not statements:
        return float("nan")
    conn = sqlite3.connect(path)
    # The summary's checksum calls the library's row hash, as the source's connections do.
    conn.create_function(ROW_HASH, -1, row_hash, deterministic=True)
    samples = []
    for at in range(runs + 1):
        start = time.perf_counter()
        for sql, parameters in statements:
            conn.execute(sql, parameters).fetchall()
        if at:  # the first is a warm-up
            samples.append(time.perf_counter() - start)
    conn.close()
    return statistics.median(samples)


# --- peak memory --------------------------------------------------------------------------


def high_water_mb() -> float:
    """Peak RSS of this process image, MB.

    Not ``ru_maxrss``: subprocess starts children with vfork, and Linux carries the parent's
    peak RSS into the child's ``ru_maxrss`` across ``exec``, so every child of a 100 MB
    parent reports at least 100 MB. ``VmHWM`` belongs to the new image only.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_rss(kind: str, path: Path) -> None:
    """Serve the document once in this (fresh) process; print peak RSS as JSON."""
    status, size = 200, 0
    if kind == "library":
        engine = create_engine(f"sqlite:///{path}")
        reply = asyncio.run(get(make_app(engine)))
        status, size = reply.status, reply.size
        engine.dispose()
    else:
        for chunk in baseline_chunks(path):  # streamed: chunks dropped, as the library's are
            size += len(chunk)
    print(
        json.dumps(
            {
                "status": status,
                "bytes": size,
                "vmhwm_mb": high_water_mb(),
                "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def peak_rss(kind: str, path: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--child-rss", kind, "--db", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        print(f"RSS child {kind} {path.name} failed:\n{result.stderr}", file=sys.stderr)
        return {"status": 0, "bytes": 0, "vmhwm_mb": float("nan"), "ru_maxrss_mb": float("nan")}
    data: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


# --- report -------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def report(rows: int, figures: Figures, rss: dict[tuple[str, int], dict[str, float]]) -> None:
    table: list[tuple[str, str, str, str]] = []
    # The statements a 200 runs before its rows (its summary, when not known already): the
    # body's own rate is the request without them.
    for shape in SHAPES:
        before = figures.t_before_body[shape]
        summary = 0.0 if math.isnan(before) else before
        median = {name: statistics.median(t) for name, t in figures.times[shape].items()}
        what = "slug, lastmod" if shape == "slim" else "slug, lastmod, changefreq, priority"
        for coding in CODINGS:
            base = median[f"baseline{coding}"]
            base_rate = rows / base
            table.append(
                (
                    f"{shape} ({what}), {'gzip' if coding else 'plain'}: baseline, URLs/s",
                    f"{base_rate:,.0f} ({base * 1000:.1f} ms)",
                    "",
                    "",
                )
            )
            for engine in ("sync", "async"):
                seconds = median[f"{engine}{coding}"]
                rate = rows / seconds
                share = rate / base_rate
                table.append(
                    (
                        f"  library, {engine} engine, URLs/s",
                        f"{rate:,.0f} ({seconds * 1000:.1f} ms)",
                        ">= 80% of baseline",
                        f"{share:.0%} {verdict(share >= 0.8)}",
                    )
                )
                if engine == "async" and not coding:
                    driver = median["aiosqlite"]
                    table.append(
                        (
                            "    a hand-written aiosqlite view (2,000 rows a trip), URLs/s",
                            f"{rows / driver:,.0f} ({driver * 1000:.1f} ms)",
                            "(the driver's cost)",
                            f"{base / driver:.0%}; the library {driver / seconds:.0%} of it",
                        )
                    )
                if coding or not summary:
                    continue
                body = rows / (seconds - summary)
                table.append(
                    (
                        f"    without the statements before the rows ({summary * 1000:.1f} ms)",
                        f"{body:,.0f}",
                        "",
                        f"{body / base_rate:.0%}",
                    )
                )
    for kind in ("library", "baseline"):
        small, large = (rss[(kind, n)]["vmhwm_mb"] for n in RSS_ROWS)
        bad = [n for n in RSS_ROWS if rss[(kind, n)]["status"] != 200]
        label = "library, sync, full" if kind == "library" else "baseline, streamed"
        table.append(
            (
                f"peak RSS {label}, 5k / 50k rows (MB)",
                f"{small:.1f} / {large:.1f} (+{large - small:.1f})",
                "50k - 5k <= 5 MB" if kind == "library" else "",
                (verdict(large - small <= 5) if kind == "library" else "")
                + (f" (status != 200 at {bad})" if bad else ""),
            )
        )
    t_200 = statistics.median(figures.times["full"]["sync"])
    table.append(("200, whole document, full, sync (ms)", f"{t_200 * 1000:.2f}", "", ""))
    for label, seconds in figures.t_304.items():
        share = seconds / t_200
        seen = figures.statuses_304[label]
        table.append(
            (
                f"304 via {label} (ms, median of {figures.conditional_runs})",
                f"{seconds * 1000:.3f}",
                "<= 1% of the 200",
                f"{share:.2%} {verdict(share <= 0.01)}"
                + ("" if seen == {304} else f" (statuses {sorted(seen)}, expected 304)"),
            )
        )
    table.append(
        ("SQL statements per 304 / per 200", f"{figures.per_304:g} / {figures.per_200}", "", "")
    )
    table.append(
        (
            "  a 200's statements before its rows, alone in sqlite3, slim / full (ms)",
            " / ".join(f"{figures.t_before_body[s] * 1000:.3f}" for s in SHAPES),
            "",
            "",
        )
    )
    table.append(
        (
            "  the 304's statement alone in sqlite3 (ms)",
            f"{figures.t_summary_sql * 1000:.3f}",
            "",
            "",
        )
    )

    header = ("measure", "value", "target", "verdict")
    widths = [max(len(line[i]) for line in [header, *table]) for i in range(4)]
    print()
    for n, line in enumerate([header, *table]):
        cells = [line[0].ljust(widths[0]), line[1].rjust(widths[1]), line[2].rjust(widths[2])]
        print("  ".join([*cells, line[3]]).rstrip())
        if n == 0:
            print("-" * (sum(widths) + 6))
    spread = ", ".join(
        f"{shape} {name} {min(t) * 1000:.1f}..{max(t) * 1000:.1f}"
        for shape, times in figures.times.items()
        for name, t in times.items()
    )
    print(f"\nrange of the timed runs (ms): {spread}")
    print(
        "ru_maxrss of the same children (MB; inherits the parent's peak across vfork+exec, "
        "so not used): "
        + ", ".join(
            f"{kind} {n // 1000}k {rss[(kind, n)]['ru_maxrss_mb']:.1f}"
            for kind in ("library", "baseline")
            for n in RSS_ROWS
        )
    )


# --- profile ------------------------------------------------------------------------------


async def profiled(request: Run) -> pstats.Stats:
    """cProfile of one request, including the anyio worker threads that read and render.

    cProfile sees only the thread that enables it, so each callable handed to
    ``anyio.to_thread.run_sync`` runs under a profiler of its own (patched here, for this
    request only); the profiles are merged.
    """
    workers: list[cProfile.Profile] = []
    run_sync = anyio.to_thread.run_sync

    async def profiled_run_sync(func: Callable[..., Any], *args: Any) -> Any:
        def run(*inner: Any) -> Any:
            profiler = cProfile.Profile()
            workers.append(profiler)
            profiler.enable()
            try:
                return func(*inner)
            finally:
                profiler.disable()

        return await run_sync(run, *args)

    main = cProfile.Profile()
    anyio.to_thread.run_sync = profiled_run_sync  # type: ignore[assignment]
    try:
        main.enable()
        await request()
        main.disable()
    finally:
        anyio.to_thread.run_sync = run_sync
    stats = pstats.Stats(main)
    for worker in workers:
        stats.add(worker)
    return stats


def print_top(stats: pstats.Stats, top: int) -> None:
    """pstats' table by own time, in milliseconds (its seconds round a 304 to zeros)."""
    stats.strip_dirs().sort_stats("tottime")
    print(f"{'ncalls':>8s} {'tottime ms':>11s} {'cumtime ms':>11s}  function")
    for func in stats.fcn_list[:top]:  # type: ignore[attr-defined]
        primitive, calls, own, cumulative, _ = stats.stats[func]  # type: ignore[attr-defined]
        ncalls = str(calls) if calls == primitive else f"{calls}/{primitive}"
        print(
            f"{ncalls:>8s} {own * 1000:11.3f} {cumulative * 1000:11.3f}  "
            f"{pstats.func_std_string(func)}"
        )
    print()


async def profile(path: Path, rows: int, shape: str) -> None:
    """Top functions by own time: one whole-document 200 and one 304, sync engine."""
    engine = create_engine(f"sqlite:///{path}")
    app = make_app(engine, shape)
    etag = (await get(app)).headers.get("etag", "")  # also the warm-up
    for label, headers, runs, top in (
        ("200", None, 5, 25),
        ("304", {"if-none-match": etag}, 21, 15),
    ):
        samples = [await timed(lambda h=headers: get(app, h), headers is None) for _ in range(runs)]
        stats = await profiled(lambda h=headers: get(app, h))
        print(
            f"=== one {label}, sync engine, {shape} source, {rows:,} rows: "
            f"{statistics.median(samples) * 1000:.2f}"
            f" ms unprofiled (median of {runs}), {stats.total_tt * 1000:.1f} ms under cProfile"  # type: ignore[attr-defined]
            " (main thread + worker threads; epoll.poll is the loop waiting for a worker)"
        )
        print_top(stats, top)
    engine.dispose()


# --- stages -------------------------------------------------------------------------------


async def stages(path: Path, rows: int, shape: str, repeat: int) -> None:
    """Where one document's time goes, stage by stage, sync engine (each run in this thread,
    unprofiled): the baseline; the library's statement fetched with plain sqlite3; the
    source's batches; rendering batches read beforehand; reading and rendering together;
    the whole request through the ASGI app (read and rendered in a worker thread)."""
    from sitemap_middleware.output.body import Body, Urlset
    from sitemap_middleware.sources.base import ALL

    engine = create_engine(f"sqlite:///{path}")
    app = make_app(engine, shape)
    sitemap = app.sitemap
    source = sitemap.sources[0]
    compiled = source.statements.rows_stmt(ALL).compile(
        engine, compile_kwargs={"literal_binds": True}
    )
    connection = sqlite3.connect(path)

    def fetch() -> None:
        cursor = connection.execute(str(compiled))
        while cursor.fetchmany(500):
            pass

    def read() -> None:
        for _ in source.batches(ALL, 500):
            pass

    def render(batches: Any) -> None:
        listed_until_values = {source.name: datetime.now(UTC) + timedelta(minutes=1)}
        shapes = {source.name: source.shape}
        renderer = sitemap.hosts.default.renderer
        body = Body(
            Urlset(renderer, sitemap.settings, shapes, None, listed_until_values),
            sitemap.settings,
        )
        for batch in batches:
            body.feed(source.name, batch)
        body.close()

    kept = list(source.batches(ALL, 500))

    def median_ms(run: Callable[[], Any]) -> float:
        times = []
        for _ in range(repeat):
            gc.collect()
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    await get(app)  # warm-up
    requests = [await timed(lambda: get(app)) for _ in range(repeat)]
    base = median_ms(lambda: baseline(path, shape))
    print(f"{rows:,} rows, {shape} source, sync engine, medians of {repeat} (ms)")
    for label, ms in (
        ("baseline: sqlite3 + f-strings", base),
        ("the library's statement, fetched with sqlite3", median_ms(fetch)),
        ("the source's batches (fetch and row mapping)", median_ms(read)),
        ("rendering batches read beforehand", median_ms(lambda: render(kept))),
        (
            "reading and rendering, in one thread",
            median_ms(lambda: render(source.batches(ALL, 500))),
        ),
        ("the whole request through the ASGI app", statistics.median(requests) * 1000),
    ):
        print(f"  {label:<50s} {ms:8.1f}  ({base / ms:4.0%} of the baseline's rate)")
    connection.close()
    engine.dispose()


# --- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, help=f"rows (default 50,000; at most {MAX_ROWS:,})")
    parser.add_argument("--repeat", type=int, help="timed runs after one warm-up (default 5)")
    parser.add_argument("--quick", action="store_true", help="5,000 rows, 3 repeats")
    parser.add_argument("--profile", action="store_true", help="cProfile a 200 and a 304 instead")
    parser.add_argument("--stages", action="store_true", help="time each stage instead")
    parser.add_argument(
        "--shape", choices=SHAPES, default="full", help="the source --profile or --stages uses"
    )
    parser.add_argument("--child-rss", choices=["library", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rss:
        return child_rss(args.child_rss, args.db)
    rows = args.rows or (5_000 if args.quick else 50_000)
    repeat = args.repeat or (3 if args.quick else 5)
    if not 1 <= rows <= MAX_ROWS:
        parser.error(f"--rows must be 1..{MAX_ROWS:,}: one urlset holds at most 50,000 URLs")
    if repeat < 1:
        parser.error("--repeat must be at least 1")

    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        if args.profile or args.stages:
            path = Path(folder) / "articles.sqlite3"
            seed(path, rows)
            if args.stages:
                return asyncio.run(stages(path, rows, args.shape, max(repeat, 9)))
            return asyncio.run(profile(path, rows, args.shape))
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
        print(
            f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
            f"SQLAlchemy {sqlalchemy.__version__}, aiosqlite {aiosqlite.__version__}; "
            f"{os.cpu_count()} CPUs ({usable} usable); {rows:,} rows, "
            f"median of {repeat} after one warm-up"
        )
        dbs = {n: Path(folder) / f"articles-{n}.sqlite3" for n in sorted({rows, *RSS_ROWS})}
        for n, path in dbs.items():
            seed(path, n)
        figures = asyncio.run(measure(dbs[rows], rows, repeat))
        rss = {
            (kind, n): peak_rss(kind, dbs[n]) for n in RSS_ROWS for kind in ("library", "baseline")
        }
    report(rows, figures, rss)
    print(f"total {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
