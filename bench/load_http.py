"""Load: requests/s of 304s and full pages through uvicorn, against a bare endpoint.

One uvicorn process on 127.0.0.1 serves ``http_app`` (the example site, its sitemap and a
bare constant endpoint); ``wrk`` (one thread) drives it. Runs of every measure are
interleaved and repeated, and the medians printed, so the machine's noise falls on all of
them alike. The 304 runs send ``If-None-Match`` with the document's current ETag; every
response's status is counted, so a run that measured the wrong thing shows it.

Usage: ``python bench/load_http.py [--seconds 5] [--repeat 3] [--connections 64]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field

from http_server import Run, Server, machine_load, server, wrk

GZIP = {"Accept-Encoding": "gzip"}


@dataclass
class Measure:
    label: str
    path: str
    status: int
    connections: int
    headers: dict[str, str] = field(default_factory=dict)
    conditional: bool = False
    urls: int = 0
    runs: list[Run] = field(default_factory=list)

    def prepare(self, site: Server) -> None:
        """Send the current ETag in a conditional run."""
        if self.conditional:
            self.headers["If-None-Match"] = site.head(self.path, self.headers)["etag"]

    @property
    def rate(self) -> float:
        return statistics.median(run.rate for run in self.runs)


def measures(connections: int, page_connections: int) -> list[Measure]:
    page = "/sitemap-articles-1.xml"  # a full page: 4,225 keys, every 50th a draft
    urls = 4_225 - 4_225 // 50  # locs in that page
    return [
        Measure("bare endpoint, 200 (2 bytes)", "/bare", 200, connections),
        Measure("304 index (AsyncEngine)", "/sitemap.xml", 304, connections, conditional=True),
        Measure("304 page (AsyncEngine)", page, 304, connections, conditional=True),
        Measure("304 page, gzip (AsyncEngine)", page, 304, connections, dict(GZIP), True),
        Measure("304 page (sync Engine)", "/sync" + page, 304, connections, conditional=True),
        Measure(
            "304 page (AsyncEngine, freshness.summary_ttl=2)",
            "/ttl" + page,
            304,
            connections,
            conditional=True,
        ),
        Measure(
            "304 page (sync, ChangeCounter)",
            "/counted" + page,
            304,
            connections,
            conditional=True,
        ),
        Measure(
            "304 page (sync, version= in memory)",
            "/versioned" + page,
            304,
            connections,
            conditional=True,
        ),
        Measure("200 full page (AsyncEngine)", page, 200, page_connections, urls=urls),
        Measure("200 full page, gzip", page, 200, page_connections, dict(GZIP), urls=urls),
        Measure("200 full page (sync Engine)", "/sync" + page, 200, page_connections, urls=urls),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5, help="length of one wrk run")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure")
    parser.add_argument("--connections", type=int, default=64, help="for bare and 304 runs")
    parser.add_argument("--page-connections", type=int, default=8, help="for full pages")
    parser.add_argument("--rows", type=int, default=9_000, help="articles in the database")
    args = parser.parse_args()

    began = time.monotonic()
    print(f"load average before: {machine_load()} (2 cores, shared)")
    with server(args.rows) as site:
        table = measures(args.connections, args.page_connections)
        for measure in table:
            measure.prepare(site)
            wrk(site.url + measure.path, 1, measure.connections, measure.headers)  # warm-up
        for _ in range(args.repeat):
            for measure in table:
                run = wrk(
                    site.url + measure.path, args.seconds, measure.connections, measure.headers
                )
                measure.runs.append(run)
    print(f"load average after:  {machine_load()}")

    bare = table[0].rate
    print(
        f"\nmedian of {args.repeat} runs of {args.seconds:g} s; wrk -t1; uvicorn, 1 process, "
        "no access log"
    )
    header = (
        f"{'measure':38s} {'conns':>5s} {'req/s':>8s} {'of bare':>8s} {'p50 ms':>7s} "
        f"{'p99 ms':>7s} {'URLs/s':>9s} {'MB/s':>7s}  statuses"
    )
    print(header)
    print("-" * len(header))
    for measure in table:
        runs = measure.runs
        p50 = statistics.median(run.p50_ms for run in runs)
        p99 = statistics.median(run.p99_ms for run in runs)
        megabytes = statistics.median(run.bytes / run.seconds / 1e6 for run in runs)
        statuses: dict[int, int] = {}
        for run in runs:
            for status, count in run.statuses.items():
                statuses[status] = statuses.get(status, 0) + count
        wrong = sum(count for status, count in statuses.items() if status != measure.status)
        wrong += sum(run.socket_errors for run in runs)
        check = f"all {measure.status}" if not wrong else f"{wrong} unexpected: {statuses}"
        urls = f"{measure.rate * measure.urls:9,.0f}" if measure.urls else f"{'':9s}"
        print(
            f"{measure.label:38s} {measure.connections:5d} {measure.rate:8,.0f} "
            f"{measure.rate / bare:8.0%} {p50:7.1f} {p99:7.1f} {urls} {megabytes:7.1f}  {check}"
        )
    spread = {m.label: [round(run.rate) for run in m.runs] for m in table}
    print("\nreq/s of each run:")
    for label, rates in spread.items():
        print(f"  {label:38s} {rates}")
    target = next(m for m in table if m.label.startswith("304 page (AsyncEngine)"))
    print(
        f"\n304 page (the example's AsyncEngine) / bare: {target.rate / bare:.0%} (target >= 50%)"
    )
    print(f"total {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
