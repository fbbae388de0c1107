"""The indexability audit of every URL of a big site (``check --audit-indexable all``):
its time, and memory that does not grow with the URLs.

The site is ``tests/indexable_scale_site.py``: a Starlette application whose
middleware serves sitemaps (5,000 URLs each) of two generated sources, ``en`` and
``de``, each URL listing its counterpart as an hreflang alternate, and whose pages
answer ``200`` with their own canonical, but for a few planted faults (one ``404``,
one ``noindex`` and one one-way hreflang alternate in each 10,000 URLs). For each
size (10,000 URLs, then ``--urls``, default 100,000), fresh processes run, in
process through ``sitemap_middleware.cli.main``::

    check --json --no-conditional --audit-delay 0 --audit-concurrency 4 \\
        --app tests.indexable_scale_site:app --audit-indexable all http://site.test/sitemap.xml

once timed (wall time, URLs/s, the process's peak RSS: ``ru_maxrss``, beside the
RSS after a first small check has imported everything), once under tracemalloc (its
peak: what the check allocated at most at once; tracemalloc slows it several times).
The JSON report goes to a temporary file, read once the measure is taken. Asserts
nothing; the smaller size is the baseline: the figures of the larger should not
grow with it, bar the digests (16 to 32 bytes a URL and a link).

    python bench/bench_audit_indexable.py                 # 10,000 and 100,000 URLs
    python bench/bench_audit_indexable.py --urls 50000 --no-tracemalloc
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APP = "tests.indexable_scale_site:app"
URL = "http://site.test/sitemap.xml"
SMALL = 10_000


def rss_mb() -> float:
    """The process's peak resident set so far (``ru_maxrss``, kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000


def one(urls: int, traced: bool) -> dict[str, Any]:
    """One measure, in this process (a fresh one): the audit of ``urls`` URLs."""
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    from sitemap_middleware.cli import main

    os.environ["INDEXABLE_URLS"] = str(urls)
    options = ["--json", "--no-conditional", "--audit-delay", "0", "--audit-concurrency", "4"]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        with redirect_stdout(out):  # everything imported, the app's code loaded once
            main(["check", *options, "--app", APP, "--audit-indexable", "1", URL])
        out.seek(0)
        out.truncate()
        base = rss_mb()
        if traced:
            tracemalloc.start()
        started = time.perf_counter()
        with redirect_stdout(out):
            status = main(["check", *options, "--app", APP, "--audit-indexable", "all", URL])
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] if traced else 0
        tracemalloc.stop()
        rss = rss_mb()
        out.seek(0)
        report = json.load(out)["indexable"]
    return {
        "urls": urls,
        "status": status,
        "audited": report["pages"],
        "requests": report["requests"],
        "findings": report["findings"],
        "seconds": seconds,
        "audit_seconds": report["seconds"],
        "tracemalloc_mb": peak / 1e6,
        "base_rss_mb": base,
        "rss_mb": rss,
    }


def measure(urls: int, traced: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", str(urls)] + (["--traced"] if traced else [])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run(sizes: list[int], traced: bool) -> None:
    print("check --audit-indexable all, in process (--app), --audit-concurrency 4, delay 0\n")
    print(
        f"{'URLs':>8} {'audited':>8} {'findings':>8} {'wall s':>8} {'URLs/s':>7} "
        f"{'RSS MB':>7} {'base MB':>8} {'traced s':>9} {'tracemalloc MB':>15}"
    )
    for urls in sizes:
        timed = measure(urls, False)
        line = (
            f"{urls:>8,} {timed['audited']:>8,} {timed['findings']:>8} {timed['seconds']:>8.1f} "
            f"{timed['audited'] / timed['seconds']:>7.0f} {timed['rss_mb']:>7.0f} "
            f"{timed['base_rss_mb']:>8.0f}"
        )
        if traced:
            peak = measure(urls, True)
            line += f" {peak['seconds']:>9.1f} {peak['tracemalloc_mb']:>15.1f}"
        print(line, flush=True)
    print(
        "\nwall s: the whole check (sitemaps and audit); RSS MB: the process's peak RSS; "
        "base MB:\nits RSS after a first check of 1 URL a source (everything imported); "
        "tracemalloc MB:\nthe most the check allocated at once, in a run under tracemalloc "
        "(traced s)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=100_000, help="the larger size")
    parser.add_argument(
        "--no-tracemalloc", dest="traced", action="store_false", help="skip the traced runs"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--traced", dest="trace_one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.trace_one)))
    else:
        run(sorted({SMALL, args.urls}), args.traced)
