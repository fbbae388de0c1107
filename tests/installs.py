"""Fresh virtualenvs, each with one install, as users make them; and servers run in them.

The package is installed from the wheel built from the tree once per test session (or the
wheel ``SITEMAP_WHEEL`` names, as ``.ci/run`` builds it), never from the checkout, with
``uv`` (seconds a virtualenv where pip takes most of a minute; both keep a cache). Each
test has its own folder, virtualenv and ports: they run in parallel under pytest-xdist.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree
from uv import find_uv_bin

from .support import run_folder

ROOT = Path(__file__).resolve().parents[1]
UV = find_uv_bin()
# What of this process's environment a user's shell would not have: its virtualenv, its
# imports, the suite's settings. The rest (certificates, proxies, pip's and uv's
# configuration and caches) carries over, as it would.
# PYTHONDONTWRITEBYTECODE: a virtualenv's commands write the bytecode of what they import,
# as on a user's machine, so each later command reads it (uv's --compile-bytecode compiles
# every module of Django and SQLAlchemy at install instead: 4 s of CPU for each virtualenv).
LEAKS = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "DJANGO_SETTINGS_MODULE",
    "CONDA_PREFIX",
    "PYTHONDONTWRITEBYTECODE",
)
LEAKING_PREFIXES = ("PYTEST_", "SITEMAP_", "HYPOTHESIS_", "COV_CORE_")


def tracked_tree(dest: Path) -> Path:
    """A copy of the checkout's files that git knows (tracked, or new and not ignored):
    the tree as a clone has it, without a virtualenv, build folders or caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def build_wheel(folder: Path) -> Path:
    """The wheel of the tree, built from a clean copy of it in ``folder``."""
    done = list(folder.glob("dist/*.whl"))
    if done:
        return done[0]
    tree = tracked_tree(folder / "tree")
    subprocess.run(
        [UV, "build", "--wheel", "--quiet", "--out-dir", str(folder / "dist"), str(tree)],
        check=True,
        env=environment(),
        timeout=300,
    )
    (wheel,) = folder.glob("dist/*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel under test: ``$SITEMAP_WHEEL``, or built once for the session (under
    xdist, once for all the workers of the run: the first builds, the others wait)."""
    given = os.environ.get("SITEMAP_WHEEL")
    if given:
        path = Path(given).resolve()
        assert path.is_file() and path.suffix == ".whl", f"SITEMAP_WHEEL={given}: no wheel"
        return path
    with run_folder(tmp_path_factory, "wheel") as folder:
        folder.mkdir(exist_ok=True)
        return build_wheel(folder)


def environment(
    extra: Mapping[str, str] | None = None, path: Sequence[Path] = ()
) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in LEAKS and not name.startswith(LEAKING_PREFIXES)
    }
    system_path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    # This process's own virtualenv is no part of a user's PATH.
    outer = {os.environ.get("VIRTUAL_ENV"), sys.prefix if sys.prefix != sys.base_prefix else None}
    entries = [
        entry
        for entry in system_path.split(os.pathsep)
        if not any(entry.startswith(venv + os.sep) for venv in outer if venv)
    ]
    env["PATH"] = os.pathsep.join([*map(str, path), *entries])
    env.update(extra or {})
    return env


@dataclass
class Venv:
    """A virtualenv and the folder its commands run in."""

    path: Path
    work: Path

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        return environment({"VIRTUAL_ENV": str(self.path), **extra}, [self.bin])

    def run(
        self, *command: str | Path, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """A command in the virtualenv (``python``, ``sitemap-middleware``, ...), in
        ``work``; its status and output, for the test to judge."""
        first, *rest = map(str, command)
        return subprocess.run(
            [str(self.bin / first), *rest],
            cwd=self.work,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def python(
        self, code: str, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return self.run("python", "-c", code, timeout=timeout, **env)

    def installed(self) -> set[str]:
        """The distributions installed, by normalized name."""
        listed = subprocess.run(
            [UV, "pip", "freeze", "--python", str(self.bin / "python")],
            capture_output=True,
            text=True,
            check=True,
            env=environment(),
        ).stdout
        return {
            line.split("==")[0].split(" @ ")[0].lower().replace("_", "-") for line in listed.split()
        }


def fresh_venv(folder: Path, requirement: str) -> Venv:
    """A new virtualenv in ``folder`` on this Python, with ``requirement`` alone
    (``/path/to/wheel.whl[django]``), and an empty folder to work in."""
    path = folder / "venv"
    work = folder / "work"
    work.mkdir(parents=True)
    env = environment()
    subprocess.run(
        [UV, "venv", "--quiet", "--python", sys.executable, str(path)],
        check=True,
        env=env,
        timeout=120,
    )
    subprocess.run(
        [
            UV,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(path / "bin" / "python"),
            requirement,
        ],
        check=True,
        env=env,
        timeout=600,
    )
    return Venv(path, work)


SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def locs_of(body: bytes, element: str) -> list[str]:
    """The ``loc`` texts of a sitemap document's ``element``s (``url`` or ``sitemap``)."""
    found = etree.fromstring(body).findall(f"s:{element}/s:loc", SITEMAP_NS)
    return [loc.text or "" for loc in found]


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def fetch(
    port: int, path: str, method: str = "GET", headers: Mapping[str, str] | None = None
) -> Answer:
    """One request over a real socket to 127.0.0.1."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, headers=dict(headers or {}))
        response = connection.getresponse()
        return Answer(response.status, response.headers, response.read())
    finally:
        connection.close()


@contextmanager
def serving(
    command: Sequence[str], port: int, cwd: Path, env: Mapping[str, str], wait: float = 120
) -> Iterator[subprocess.Popen[str]]:
    """``command`` (a shell command line) running until the block ends; entered once
    ``port`` accepts connections. Stopped with SIGTERM, then SIGKILL, its whole process
    group (a shell's children too)."""
    log = cwd / f"server-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + wait
        while True:
            if process.poll() is not None:
                pytest.fail(f"{command} exited with {process.returncode}:\n{log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{command} did not listen on {port}:\n{log.read_text()}")
                time.sleep(0.2)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM to the process group ``process`` leads, SIGKILL to what is left of it."""
    for signal_number in (15, 9):
        try:
            os.killpg(process.pid, signal_number)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            process.poll()
            try:
                os.killpg(process.pid, 0)  # anyone of the group left?
            except ProcessLookupError:
                return
            time.sleep(0.1)
