"""The README's quick start, as written, on a clean copy of the tree.

The three commands of its "Quick start" section are read from README.md (never retyped
here) and run in one shell session each, as a user would type them: the first makes a
fresh virtualenv with pip and starts the example site; the Flask and Django variants run
in that virtualenv. Each server is asked for ``/sitemap.xml`` over a real socket, then
stopped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ..installs import ROOT, environment, fetch, locs_of, serving, tracked_tree
from ..support import assert_valid_index, check_served, free_port

pytestmark = pytest.mark.install


def quick_start_commands(readme: str) -> list[str]:
    """The ``sh`` blocks of the README's "Quick start" section, in order, up to the suite's
    own command."""
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    commands = []
    for block in blocks:
        if ".ci/run" in block:
            break  # the suite's own commands follow
        commands.append(block.strip())
    return commands


def test_the_commands_are_read_from_the_readme() -> None:
    commands = quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 3, commands
    first, flask, django = commands
    assert first.startswith("python3 -m venv .venv") and "python -m example_app" in first
    assert flask.endswith("python -m example_app.flask_app")
    assert django.endswith("python -m example_app.django_app")
    sample = (
        "# T\n## Quick start\n```sh\nrun\n```\n```sh\nbash .ci/run\n```\n```sh\npytest\n```\n"
        "## Use\n```sh\nno\n```"
    )
    assert quick_start_commands(sample) == ["run"]


def test_quick_start_as_written(tmp_path: Path) -> None:
    first, flask, django = quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    tree = tracked_tree(tmp_path / "tree")
    # `python3` is the Python running the suite (3.11, 3.12, 3.13 in CI), first on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    for variant, command, wait in (
        ("starlette", first, 600),  # pip installs the example's extra first
        ("flask", f". .venv/bin/activate && {flask}", 120),
        ("django", f". .venv/bin/activate && {django}", 600),
    ):
        port = free_port()
        env = environment({"PORT": str(port)}, [bin_dir])  # a port of its own
        with serving(["bash", "-c", command], port, tree, env, wait=wait):
            index = fetch(port, "/sitemap.xml")
            assert index.status == 200, (variant, index.body)
            assert index.headers["Content-Type"].startswith("text/xml")
            assert_valid_index(index.body)
            children = locs_of(index.body, "sitemap")
            assert len(children) >= 2, (variant, children)  # pages, articles
            base = f"http://127.0.0.1:{port}/"
            for loc in children:
                assert loc.startswith(base), (variant, loc)
                page = fetch(port, "/" + loc.removeprefix(base))
                assert page.status == 200, (variant, loc)
                check_served(page.status, page.headers["Content-Type"], page.body)
    assert (tree / ".venv").is_dir()  # the commands made it, in the copy
