"""What the HTTP load scripts share: one uvicorn process on 127.0.0.1, and wrk runs against it.

Every request goes to 127.0.0.1 only, and every wrk run is bounded by its duration.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LUA = Path(__file__).resolve().parent / "wrk" / "statuses.lua"


@dataclass
class Server:
    url: str
    pid: int

    def rss_kb(self) -> int:
        """Resident set size of the server process now (``VmRSS``)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def head(self, path: str, headers: dict[str, str] | None = None) -> dict[str, str]:
        request = urllib.request.Request(self.url + path, headers=headers or {}, method="HEAD")
        with urllib.request.urlopen(request, timeout=30) as response:
            return {k.lower(): v for k, v in response.headers.items()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server(rows: int) -> Iterator[Server]:
    """uvicorn (one process, no access log) serving ``http_app`` on a fresh SQLite file."""
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        log = Path(tmp) / "uvicorn.log"
        command = [
            sys.executable, "-m", "uvicorn", "http_app:app", "--app-dir", str(ROOT / "bench"),
            "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip
        env = {**os.environ, "LOAD_DB": str(Path(tmp) / "site.sqlite3"), "LOAD_ROWS": str(rows)}
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"uvicorn did not start:\n{log.read_text()}")
                    time.sleep(0.1)
            yield Server(f"http://127.0.0.1:{port}", process.pid)
        finally:
            process.terminate()
            process.wait(30)
            errors = log.read_text()
            if errors.strip():
                print(f"\nserver log (its end):\n{errors[-4000:]}", file=sys.stderr)


@dataclass
class Run:
    requests: int
    seconds: float
    bytes: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    statuses: dict[int, int]

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def unexpected(self, allowed: set[int]) -> int:
        return sum(n for status, n in self.statuses.items() if status not in allowed)


def wrk_command(
    url: str,
    seconds: float,
    connections: int,
    headers: dict[str, str] | None = None,
    requests: list[str] | None = None,
) -> list[str]:
    """A bounded wrk run (one thread) on ``url``, or on the ``requests`` in turn."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "30s"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    command += ["-s", str(LUA), url]
    if requests:
        command += ["--", "|".join(requests)]
    return command


def parse(output: str) -> Run:
    """The ``RESULT`` line that ``statuses.lua`` prints."""
    line = next(line for line in output.splitlines() if line.startswith("RESULT "))
    values = dict(field.split("=") for field in line.split()[1:])
    return Run(
        requests=int(values["requests"]),
        seconds=int(values["duration_us"]) / 1e6,
        bytes=int(values["bytes"]),
        socket_errors=sum(int(values[k]) for k in ("connect", "read", "write", "timeout")),
        p50_ms=int(values["p50_us"]) / 1000,
        p99_ms=int(values["p99_us"]) / 1000,
        statuses={int(k[7:]): int(v) for k, v in values.items() if re.fullmatch(r"status_\d+", k)},
    )


def wrk(
    url: str,
    seconds: float,
    connections: int,
    headers: dict[str, str] | None = None,
    requests: list[str] | None = None,
) -> Run:
    command = wrk_command(url, seconds, connections, headers, requests)
    return parse(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def machine_load() -> str:
    """The 1/5/15-minute load averages (this benchmark's own processes included)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
