"""The lastmod audit's time for N pages (``check --audit-lastmod N``) against a local site.

uvicorn serves ``audit_app`` (the middleware's sitemap of 5,000 articles in five
children, and the article pages) on 127.0.0.1. For each setting the script runs
``sitemap-middleware check --no-conditional --audit-lastmod N`` in this process and
prints the audit's time, its requests and the most in flight at once, beside the time of
the same check without the audit (the sitemaps alone) and a baseline: N HEAD requests to
the same pages with a bare httpx client at the same concurrency. Then the same audit
through ``--app`` (in-process, no server). Asserts nothing.

    python bench/bench_audit.py              # N = 1000
    python bench/bench_audit.py --pages 200 --polite  # also the defaults (2 at once, 0.2 s)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from sitemap_middleware.cli import main  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def site(urls: int) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    command = [
        sys.executable, "-m", "uvicorn", "audit_app:app", "--app-dir", str(ROOT / "bench"),
        "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level", "warning",
    ]  # fmt: skip
    env = {**os.environ, "AUDIT_URLS": str(urls), "AUDIT_BASE": base}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        sys.exit(f"uvicorn did not start:\n{log.read().decode()}")
                    time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            process.wait(30)


def check(*args: str) -> tuple[float, dict[str, Any]]:
    out = io.StringIO()
    started = time.perf_counter()
    with redirect_stdout(out):
        main(["check", "--json", "--no-conditional", *args])
    return time.perf_counter() - started, json.loads(out.getvalue())


async def baseline(locs: list[str], concurrency: int, delay: float) -> float:
    """N HEADs with a bare client, ``concurrency`` at once, each pausing ``delay``."""
    pending = iter(locs)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:

        async def worker() -> None:
            for loc in pending:
                (await client.head(loc)).raise_for_status()
                await anyio.sleep(delay)

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(worker)
        return time.perf_counter() - started


def sampled(report: dict[str, Any]) -> list[str]:
    return [p["loc"] for d in report["documents"] if "audit" in d for p in d["audit"]["pages"]]


def row(label: str, seconds: float, report: dict[str, Any], base: float, alone: float) -> None:
    audit = report["audit"]
    print(
        f"{label:<34} {seconds:8.2f} {audit['seconds']:8.2f} {audit['requests']:6} "
        f"{audit['peak_concurrency']:5} {audit['requests'] / audit['seconds']:8.0f} "
        f"{base:9.2f} {alone:8.2f}"
    )


def run(pages: int, urls: int, polite: bool) -> None:
    settings = [(1, 0.0), (4, 0.0), (8, 0.0), (4, 0.05)] + ([(2, 0.2)] if polite else [])
    print(f"lastmod audit of {pages} pages of a {urls}-URL site (uvicorn, 127.0.0.1)\n")
    print(
        f"{'setting':<34} {'total s':>8} {'audit s':>8} {'reqs':>6} {'peak':>5} {'req/s':>8} "
        f"{'baseline':>9} {'no audit':>8}"
    )
    with site(urls) as base:
        url = base + "sitemap.xml"
        alone, _ = check(url)
        for concurrency, delay in settings:
            options = ["--audit-concurrency", str(concurrency), "--audit-delay", str(delay)]
            seconds, report = check("--audit-lastmod", str(pages), *options, url)
            reference = anyio.run(baseline, sampled(report), concurrency, delay)
            row(f"HTTP, {concurrency} at once, delay {delay:g}", seconds, report, reference, alone)
    os.environ.update(AUDIT_URLS=str(urls), AUDIT_BASE="http://site.test/")
    options = ["--audit-concurrency", "4", "--audit-delay", "0", "--app", "audit_app:app"]
    seconds, report = check("--audit-lastmod", str(pages), *options, "http://site.test/sitemap.xml")
    row("--app in-process, 4 at once", seconds, report, float("nan"), float("nan"))
    older = [
        f"{f['verdict']} {f['count']} of {f['of']}"
        for d in report["documents"]
        if "audit" in d
        for f in d["audit"]["findings"]
        if f["code"] == "audit.older"
    ]
    print(f"\naudit.older per sitemap (every tenth page edited after its lastmod): {older}")
    print("total s: the whole check; audit s: the page requests alone; baseline: the same HEADs")
    print("with a bare httpx client, same concurrency and delay; no audit: the check without it")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--urls", type=int, default=5000)
    parser.add_argument("--polite", action="store_true", help="also the default settings")
    args = parser.parse_args()
    run(args.pages, args.urls, args.polite)
