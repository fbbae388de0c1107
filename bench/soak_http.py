"""Soak: minutes of mixed traffic through uvicorn; errors counted, server RSS sampled.

One uvicorn process on 127.0.0.1 serves ``http_app``. ``wrk`` sends GETs in turn on each
connection: 304s (index and pages, plain and gzip), full pages (plain, gzip-coded and
``.xml.gz``), HTML pages and 404s. wrk cannot read the answer to a HEAD (it waits for the
chunked body a HEAD never has), so a thread beside it sends HEADs over a keep-alive
``http.client`` connection at a bounded rate. After a warm-up run, the server's RSS
(``VmRSS``) is sampled every few seconds.

The warm-up sends the same traffic. An error is any status other than 200, 304 and 404,
any socket error, or a failed HEAD.
Targets: zero errors; RSS drift (last sample minus first) <= 5 MB.

Usage: ``python bench/soak_http.py [--minutes 10] [--warmup 30] [--connections 8]``
"""

from __future__ import annotations

import argparse
import http.client
import subprocess
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

from http_server import Server, machine_load, parse, server, wrk, wrk_command

ALLOWED = {200, 304, 404}


def mix(site: Server) -> list[str]:
    """The GET requests wrk sends in turn: 'METHOD PATH Header: value;Header: value'."""

    def etag(path: str, gzip: bool = False) -> str:
        return site.head(path, {"Accept-Encoding": "gzip"} if gzip else {})["etag"]

    return [
        f"GET /sitemap.xml If-None-Match: {etag('/sitemap.xml')}",
        f"GET /sitemap-articles-1.xml If-None-Match: {etag('/sitemap-articles-1.xml')}",
        "GET /sitemap-articles-2.xml Accept-Encoding: gzip;"
        f"If-None-Match: {etag('/sitemap-articles-2.xml', gzip=True)}",
        f"GET /sync/sitemap-articles-1.xml If-None-Match: {etag('/sync/sitemap-articles-1.xml')}",
        "GET /sitemap.xml",
        "GET /sitemap-articles-3.xml",
        "GET /sitemap-articles-2.xml Accept-Encoding: gzip",
        "GET /sitemap-articles-1.xml.gz",
        "GET /sitemap-pages-1.xml",
        "GET /sitemap-articles-9.xml",
        "GET /sitemap-nothing-1.xml",
        "GET /articles/article-9",
        "GET /no-such-page",
        "GET /about",
    ]


class Heads(threading.Thread):
    """HEAD requests on one keep-alive connection, at most ``rate`` a second, until ``stop``."""

    PATHS = ("/sitemap.xml", "/sitemap-articles-1.xml", "/sitemap-articles-2.xml.gz", "/nope.xml")

    def __init__(self, url: str, rate: float, stop: float) -> None:
        super().__init__(daemon=True)
        self.address = urlsplit(url)
        self.interval = 1 / rate
        self.stop = stop
        self.statuses: Counter[int] = Counter()
        self.failures: Counter[str] = Counter()

    def run(self) -> None:
        connection = http.client.HTTPConnection(
            self.address.hostname, self.address.port, timeout=30
        )
        turn = 0
        while (now := time.monotonic()) < self.stop:
            path = self.PATHS[turn % len(self.PATHS)]
            turn += 1
            try:
                connection.request("HEAD", path)
                response = connection.getresponse()
                response.read()
                self.statuses[response.status] += 1
            except (OSError, http.client.HTTPException) as exc:
                self.failures[type(exc).__name__] += 1
                connection.close()
            time.sleep(max(0.0, now + self.interval - time.monotonic()))
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10, help="length of the soak")
    parser.add_argument("--warmup", type=float, default=30, help="seconds before sampling RSS")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections")
    parser.add_argument("--head-rate", type=float, default=50, help="HEADs per second")
    parser.add_argument("--sample", type=float, default=5, help="seconds between RSS samples")
    parser.add_argument("--rows", type=int, default=9_000, help="articles in the database")
    args = parser.parse_args()

    seconds = args.minutes * 60
    began = time.monotonic()
    load_before = machine_load()
    with server(args.rows) as site:
        requests = mix(site)
        rss_at_start = site.rss_kb()
        # The warm-up is the same traffic, HEADs included, so that pools and threads have
        # grown to their working size before the first sample.
        warm_heads = Heads(site.url, args.head_rate, time.monotonic() + args.warmup)
        warm_heads.start()
        warm = wrk(site.url, args.warmup, args.connections, requests=requests)
        warm_heads.join(60)
        cpu_before = site.cpu_seconds()
        stop = time.monotonic() + seconds
        heads = Heads(site.url, args.head_rate, stop)
        heads.start()
        command = wrk_command(site.url, seconds, args.connections, requests=requests)
        soak = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        samples: list[tuple[float, int]] = []
        start = time.monotonic()
        while soak.poll() is None:
            samples.append((time.monotonic() - start, site.rss_kb()))
            time.sleep(args.sample)
        output, _ = soak.communicate()
        samples.append((time.monotonic() - start, site.rss_kb()))
        heads.join(60)
        cpu = site.cpu_seconds() - cpu_before
        load_after = machine_load()
    run = parse(output)

    print(
        f"soak: {args.minutes:g} min after a {args.warmup:g} s warm-up; wrk -t1 "
        f"-c{args.connections} over {len(requests)} GETs in turn; HEADs <= {args.head_rate:g}/s"
    )
    print(
        f"load average before {load_before}, after {load_after} (2 shared cores; this "
        f"soak's server used {cpu / run.seconds:.0%} of one core, wrk and HEADs come on top)"
    )
    print(f"\nRSS of the server before the warm-up: {rss_at_start / 1024:.1f} MB; by minute:")
    every = max(1, round(60 / args.sample))
    for number, (elapsed, kb) in enumerate(samples):
        if number % every == 0 or number == len(samples) - 1:
            print(f"  {elapsed / 60:5.1f} min  {kb / 1024:7.1f}")
    rss = [kb for _, kb in samples]
    drift = (rss[-1] - rss[0]) / 1024
    print(f"\n{'':24s} {'requests':>10s} {'req/s':>8s}  statuses")
    for label, stats in (("warm-up (wrk)", warm), ("soak GETs (wrk)", run)):
        statuses = dict(sorted(stats.statuses.items()))
        print(f"{label:24s} {stats.requests:10,d} {stats.rate:8,.0f}  {statuses}")
    head_total = sum(heads.statuses.values())
    print(
        f"{'soak HEADs':24s} {head_total:10,d} {head_total / seconds:8,.0f}  "
        f"{dict(sorted(heads.statuses.items()))}"
    )
    errors = run.unexpected(ALLOWED) + run.socket_errors
    errors += sum(n for status, n in heads.statuses.items() if status not in ALLOWED)
    errors += sum(heads.failures.values()) + sum(warm_heads.failures.values())
    print(
        f"\nerrors: {errors} (statuses outside 200/304/404: {run.unexpected(ALLOWED)}, "
        f"socket errors: {run.socket_errors}, HEAD failures: {dict(heads.failures)})"
    )
    print(f"latency of the GETs: p50 {run.p50_ms:.1f} ms, p99 {run.p99_ms:.1f} ms")
    print(
        f"RSS: first {rss[0] / 1024:.1f} MB, last {rss[-1] / 1024:.1f} MB, "
        f"max {max(rss) / 1024:.1f} MB, drift {drift:+.1f} MB ({len(rss)} samples)"
    )
    verdict = "met" if errors == 0 and drift <= 5 else "NOT met"
    print(f"targets (zero errors, drift <= 5 MB): {verdict}")
    print(f"total {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
