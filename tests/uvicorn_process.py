"""Run a server in a subprocess on 127.0.0.1 for the end-to-end tests (uvicorn, werkzeug,
the example site)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def serving(
    command: list[str], port: int, log: Path, env: dict[str, str], ready_path: str = "/"
) -> Iterator[str]:
    """Start ``command`` (which listens on ``port``) and yield its base URL once it answers."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        try:
            while True:
                try:
                    httpx.get(url + ready_path, timeout=2)
                    break
                except httpx.TransportError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"the server did not start:\n{log.read_text()}")
                    time.sleep(0.1)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def uvicorn(app: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]


def pythonpath() -> str:
    """A child's PYTHONPATH: the checkout's root (for ``tests`` and ``example_app``; the package
    itself comes from the environment), then the caller's own."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
