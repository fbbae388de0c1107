"""The example site with ``INDEXNOW_KEY``: ``uvicorn example_app.asgi:app`` serves the key
file, and ``sitemap-middleware indexnow --app example_app.asgi:app --once`` pushes the
articles that changed to the test's endpoint, which checks the key against that server;
``render`` works on the same application."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from ...indexnow_endpoint import Endpoint, running
from ...support import free_port
from ...uvicorn_process import pythonpath, serving

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[3]
KEY = "example-key-42"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitemap_middleware.cli", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_example_site_pushes_its_changed_articles(tmp_path: Path) -> None:
    port = free_port()
    with running(Endpoint()) as endpoint:
        env = {
            "EXAMPLE_DB": str(tmp_path / "site.sqlite3"),
            "EXAMPLE_ROWS": "200",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "INDEXNOW_KEY": KEY,
            "INDEXNOW_ENDPOINT": endpoint.url,
            "PYTHONPATH": pythonpath(),
        }
        command = [sys.executable, "-m", "uvicorn", "example_app.asgi:app", "--port", str(port)]
        with serving(command, port, tmp_path / "server.log", env, "/sitemap.xml") as url:
            key_file = httpx.get(f"{url}/{KEY}.txt")
            assert (key_file.status_code, key_file.text) == (200, KEY)
            assert key_file.headers["content-type"] == "text/plain; charset=utf-8"
            first = cli(env, "indexnow", "--app", "example_app.asgi:app", "--once")
            assert first.returncode == 0, first.stderr
            assert "articles: first run: starts from now" in first.stdout
            with closing(sqlite3.connect(tmp_path / "site.sqlite3")) as db, db:  # closed, committed
                now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
                db.execute("UPDATE articles SET updated_at = ? WHERE id IN (2, 3)", (now,))
            pushed = cli(env, "indexnow", "--app", "example_app.asgi:app", "--once")
            assert pushed.returncode == 0, pushed.stderr
            assert "articles: pushed 2 URLs (2 rows) in 1 post" in pushed.stdout
            assert [r.status for r in endpoint.received] == [200]  # the key checked
            assert all(u.startswith(f"{url}/articles/") for u in endpoint.accepted_urls)
            rendered = cli(
                env, "render", "--app", "example_app.asgi:app", "--out", str(tmp_path / "out")
            )
            assert rendered.returncode == 0, rendered.stderr
            assert (tmp_path / "out" / "sitemap.xml").exists()
