"""``render`` logs each bad row once, however the application configures logging as it
loads or starts: not at all (the command's own stderr handler), ``basicConfig``, or
``dictConfig`` (whose ``disable_existing_loggers`` would silence the library's logger,
which the command created first). Each run is a process of its own, as logging is
configured once per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

APP = """
import logging
import logging.config
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from sitemap_middleware import SitemapMiddleware

FORMAT = "APP %(levelname)s %(name)s: %(message)s"


def configure():
    if "{how}" == "basicConfig":
        logging.basicConfig(level=logging.WARNING, format=FORMAT)
    elif "{how}" == "dictConfig":
        logging.config.dictConfig({{
            "version": 1,
            "formatters": {{"plain": {{"format": FORMAT}}}},
            "handlers": {{"err": {{
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "plain",
            }}}},
            "root": {{"handlers": ["err"], "level": "WARNING"}},
        }})


if "{when}" == "import":
    configure()


@asynccontextmanager
async def lifespan(app):
    if "{when}" == "startup":
        configure()
    yield


app = SitemapMiddleware(
    Starlette(lifespan=lifespan),
    base_url="https://example.com/",
    sources={{"pages": ["/a", "https://elsewhere.example/b", "/c\\x01", "/d"]}},
)
"""
BAD_ROWS = ("row 1: row skipped: loc is not on", "row 2: row skipped: loc contains")


@pytest.mark.parametrize(
    ("how", "when"),
    [
        ("nothing", "import"),
        ("basicConfig", "import"),
        ("dictConfig", "import"),
        ("basicConfig", "startup"),
        ("dictConfig", "startup"),
    ],
)
def test_each_bad_row_is_logged_once(tmp_path: Path, how: str, when: str) -> None:
    (tmp_path / "shop.py").write_text(textwrap.dedent(APP.format(how=how, when=when)))
    command = [sys.executable, "-m", "sitemap_middleware.cli", "render", "--app", "shop:app"]
    result = subprocess.run(
        [*command, "--app-dir", str(tmp_path), "--out", str(tmp_path / "out"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    for bad_row in BAD_ROWS:
        logged = [line for line in lines if bad_row in line]
        assert len(logged) == 1, result.stderr
        # Through the application's handler when it has one, else the command's.
        assert logged[0].startswith("WARNING" if how == "nothing" else "APP WARNING")
    assert (tmp_path / "out" / "sitemap.xml").is_file()
