"""``check --audit-indexable all`` at scale: memory that does not grow with the URLs
audited (:mod:`tests.indexable_scale_site`), the progress bar on a terminal, and the
pieces that bound the memory (digest tables, files of records, the streamed JSON)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from typing import Any

import anyio
import pytest

from sitemap_middleware.cli.digests import DigestMap, DigestSet, digest
from sitemap_middleware.cli.indexable_report import Streamed
from sitemap_middleware.cli.main import build_parser, check_command
from sitemap_middleware.cli.progress import Progress
from sitemap_middleware.cli.report import _write_array
from sitemap_middleware.cli.spill import Spill

from .. import indexable_scale_site

IN_PROCESS = "http://site.test/sitemap.xml"
SCALE_APP = "tests.indexable_scale_site:app"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# --- The progress bar ------------------------------------------------------------------------


def test_the_bar_counts_rates_and_ends_its_line() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, label="indexability audit", interval=0.5, clock=clock)
    clock.now += 2
    progress.count(500, 2000, "URLs", "3 findings")
    assert stream.getvalue() == (
        "\rindexability audit: [#####...............] 500/2,000 URLs, 250/s, 3 findings\x1b[K"
    )
    clock.now += 0.1  # too soon after the last: not drawn
    progress.count(600, 2000, "URLs", "3 findings")
    assert stream.getvalue().count("\r") == 1
    clock.now += 0.1  # the last one is always drawn
    progress.count(2000, 2000, "URLs")
    assert stream.getvalue().endswith(
        "\rindexability audit: [####################] 2,000/2,000 URLs, 909/s\x1b[K"
    )
    progress.close()
    assert stream.getvalue().endswith("\x1b[K\n")


def test_render_s_line_is_unchanged() -> None:
    stream = Terminal()
    progress = Progress(stream)
    progress.update(3, 10, 2_500_000)
    progress.update(4, 10, 3_000_000)
    progress.close()
    assert stream.getvalue() == (
        "\rrender: 3/10 documents, 2.5 MB\x1b[K\rrender: 4/10 documents, 3.0 MB\x1b[K\n"
    )


def test_nothing_is_shown_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(stream, label="indexability audit")
    assert not progress.due()
    progress.count(1, 2, "URLs", "0 findings")
    progress.update(1, 2, 10)
    progress.close()
    assert stream.getvalue() == ""


def _check(stderr: io.StringIO, *args: str) -> tuple[int, str]:
    parser = build_parser()
    arguments = ["check", "--json", "--no-conditional", "--audit-delay", "0", *args]
    stdout = io.StringIO()
    status = check_command(parser.parse_args(arguments), stdout, stderr)
    return status, stdout.getvalue()


def test_the_audit_shows_its_bar_on_a_terminal_only() -> None:
    app = ("--app", "tests.indexable_site:starlette", "--audit-indexable", "all", IN_PROCESS)
    terminal = Terminal()
    status, out = _check(terminal, *app)
    assert status == 3
    shown = terminal.getvalue()
    # 13 URLs, then the one alternate no entry lists back: 14 in all, 7 findings.
    last = shown.rstrip("\n").rsplit("\r", 1)[1]
    assert re.fullmatch(
        r"indexability audit: \[#{20}\] 14/14 URLs, [\d,]+/s, 7 findings\x1b\[K", last
    ), last
    assert shown.startswith("\rindexability audit: [") and shown.endswith("\n")
    assert json.loads(out)["indexable"]["findings"] == 7
    plain = io.StringIO()
    assert _check(plain, *app)[0] == 3
    assert plain.getvalue() == ""


# --- Memory ----------------------------------------------------------------------------------


# The audit measured in a process of its own, as a user runs it: in a test worker, what
# earlier tests leave behind (a logger's level that lets pytest keep every request's
# record, a server's thread) would be measured with it.
_MEASURE = """
import contextlib, gc, io, json, os, sys, tracemalloc
from sitemap_middleware.cli import main

app, url, urls = sys.argv[1:]
os.environ["INDEXABLE_URLS"] = urls
# Everything imported once, outside the measure: what is left is the check itself.
with contextlib.redirect_stdout(io.StringIO()):
    main(["check", "--app", app, "--audit-indexable", "1", url])
out = io.StringIO()
gc.collect()
tracemalloc.start()
try:
    with contextlib.redirect_stdout(out):
        status = main(["check", "--json", "--no-conditional", "--audit-delay", "0",
                       "--audit-concurrency", "4", "--app", app,
                       "--audit-indexable", "all", url])
    peak = tracemalloc.get_traced_memory()[1]
finally:
    tracemalloc.stop()
print(json.dumps({"status": status, "peak": peak, "report": json.loads(out.getvalue())}))
"""


def _audit_peak(urls: int) -> int:
    """The audit of a site of ``urls`` URLs in a fresh process: its report checked, and the
    peak of the Python heap while it ran (tracemalloc)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("COV_")}
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, SCALE_APP, IN_PROCESS, str(urls)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    audit = json.loads(result.stdout)
    _check_report(urls, audit["report"]["indexable"], audit["status"])
    peak: int = audit["peak"]
    return peak


def _check_report(urls: int, report: dict[str, Any], status: int) -> None:
    """The audit of a site of ``urls`` URLs checked against the faults planted in it."""
    assert status == 3
    assert report["sampled"] == urls and report["pages"] == urls
    # The German URLs that list no English one back were requested as listed URLs, and
    # their answers kept for the hreflang rule: no alternate requested again.
    assert (report["requests"], report["alternates"]) == (urls + 1, 0)
    expected = indexable_scale_site.findings(urls)
    assert report["findings"] == sum(expected.values()) == len(report["found"])
    counted: dict[str, int] = {}
    for source in report["sources"]:
        assert len(source["pages"]) == source["sampled"] == urls // 2
        for kind in source["findings"]:
            counted[kind["code"]] = counted.get(kind["code"], 0) + kind["count"]
    assert counted == expected


@pytest.mark.slow
def test_memory_does_not_grow_with_the_urls_audited() -> None:
    peak = _audit_peak(20_000)
    # Keeping every URL, its page's answer and a digest of every link took 45 MB here;
    # the digests, a few hundred kB, and one sitemap at a time take 6 MB
    # (bench/bench_audit_indexable.py measures the growth up to 100,000 URLs).
    assert peak < 20_000_000, f"{peak:,} bytes at most"


# --- What bounds it --------------------------------------------------------------------------


def test_digest_tables_grow_and_hold_every_key() -> None:
    keys = [digest(f"https://example.com/{i}") for i in range(5000)]
    found = DigestSet()
    assert all(found.add(key) for key in keys)
    assert not any(found.add(key) for key in keys[::7])
    assert len(found) == 5000 and all(key in found for key in keys)
    assert digest("https://example.com/other") not in found
    assert 16 * 5000 <= found.nbytes <= 32 * 5000
    positions = DigestMap()
    for i, key in enumerate(keys):
        assert positions.setdefault(key, i) == i
    assert positions.setdefault(keys[3], 99) == 3
    positions[keys[3]] = 1
    assert positions.setdefault(keys[3], 99) == 1
    assert len(positions) == 5000


def test_spilled_records_come_back_in_runs() -> None:
    spill = Spill()
    assert list(spill.read(0, 0)) == []
    starts = []
    for i in range(10):
        starts.append(spill.end)
        spill.append({"n": i, "url": f"https://example.com/é/{i}"})
    evens = spill.read(starts[2], 3)
    assert next(evens) == {"n": 2, "url": "https://example.com/é/2"}
    spill.append(["written between two reads"])
    assert [r["n"] for r in evens] == [3, 4]
    assert list(spill.read(starts[9], 2))[1] == ["written between two reads"]
    spill.close()


@pytest.mark.parametrize("items", [[], [{"a": [1, 2]}, "x", {"b": {}}]])
def test_a_streamed_array_is_written_as_json_dumps_would(items: list[Any]) -> None:
    out = io.StringIO()
    _write_array(out, Streamed(lambda: iter(items)).items(), 2)
    assert json.dumps({"k": items}, indent=2) == '{\n  "k": ' + out.getvalue() + "\n}"


def test_pace_hands_results_on_in_order() -> None:
    from sitemap_middleware.cli.pace import Pace

    handed: list[int] = []

    async def work(item: int) -> int:
        await anyio.sleep(0.001 * (item % 3))  # later items often finish first
        return item * 10

    async def run() -> Pace:
        pace = Pace(None, 4, 0)  # type: ignore[arg-type]  # work sends no request
        await pace.stream(iter(range(50)), work, lambda item, result: handed.append(result))
        return pace

    anyio.run(run)
    assert handed == [i * 10 for i in range(50)]


def test_the_env_sized_site_has_its_planted_faults() -> None:
    assert indexable_scale_site.findings(20_000) == {
        "indexable.hreflang": 2,
        "indexable.status": 2,
        "indexable.noindex": 2,
    }
