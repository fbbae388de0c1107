"""The suite tests what users install: processes the tests start import the same package and
the same Django as the suite (tests/conftest.py refuses the checkout's src/ when
SITEMAP_REQUIRE_INSTALLED=1, as .ci/run sets it)."""

from __future__ import annotations

import os
import subprocess
import sys

import django
import pytest

import sitemap_middleware

from ..conftest import CHECKOUT_SRC, _child_imports_installed
from ..uvicorn_process import ROOT, pythonpath


def popen(cwd: object, env: dict[str, str] | None) -> None:
    _child_imports_installed("subprocess.Popen", (sys.executable, [], cwd, env))


def test_a_process_with_the_checkouts_src_on_its_path_does_not_start() -> None:
    for cwd, env in (
        (None, {"PYTHONPATH": os.pathsep.join([str(ROOT), str(CHECKOUT_SRC)])}),
        (None, {"PYTHONPATH": str(CHECKOUT_SRC / "sitemap_middleware")}),
        (CHECKOUT_SRC, {}),
        (os.fsencode(CHECKOUT_SRC), None),
    ):
        with pytest.raises(RuntimeError, match="installed package"):
            popen(cwd, env)
    popen(ROOT, {"PYTHONPATH": pythonpath()})
    popen(None, None)  # the suite's own environment passes the same check at its start


def test_a_child_process_imports_the_suites_package_and_django() -> None:
    """A test's child (a server, ``manage.py``) on ``pythonpath()`` runs the package and the
    Django the suite runs: the installed wheel and, in the Django 4.2 run, Django 4.2."""
    code = (
        "import os, django, sitemap_middleware\n"
        "for module in (sitemap_middleware, django): print(os.path.realpath(module.__file__))"
    )
    child = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": pythonpath()},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert child.stdout.splitlines() == [
        os.path.realpath(module.__file__ or "") for module in (sitemap_middleware, django)
    ]
