"""Last-Modified <= Date, and If-Modified-Since gets its 304, through real servers.

What each server does with the application's ``Date`` (found with these tests):
uvicorn and gunicorn's uvicorn worker send their own Date, refreshed about once a
second, *before* the middleware's (two Date lines); hypercorn sends the middleware's
and then its own, read per response; werkzeug sends its own (per response) and then
the middleware's; waitress keeps the middleware's alone; gunicorn's sync worker
drops it and sends its own, read per response. Every Date line the client receives
must be at least the Last-Modified.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
import pytest

from .uvicorn_process import free_port, serving

SERVERS = {
    "uvicorn": ["-m", "uvicorn", "tests.date_servers_app:asgi_app", "--host", "127.0.0.1"],
    "hypercorn": ["-m", "hypercorn", "tests.date_servers_app:asgi_app"],
    "gunicorn-uvicorn": [
        "-m",
        "gunicorn",
        "tests.date_servers_app:asgi_app",
        "-k",
        "uvicorn_worker.UvicornWorker",
    ],
    "werkzeug": ["-m", "tests.date_servers_app"],
    "waitress": ["-m", "waitress", "--host=127.0.0.1"],
    "gunicorn": ["-m", "gunicorn", "tests.date_servers_app:wsgi_app", "-k", "sync"],
}


def command(server: str, port: int) -> list[str]:
    args = [sys.executable, *SERVERS[server]]
    if server == "uvicorn":
        return [*args, "--port", str(port), "--log-level", "warning"]
    if server == "hypercorn":
        return [*args, "--bind", f"127.0.0.1:{port}"]
    if server.startswith("gunicorn"):
        return [*args, "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    if server == "waitress":  # options before the application
        return [*args, f"--port={port}", "tests.date_servers_app:wsgi_app"]
    return [*args, str(port)]


@pytest.fixture(params=list(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    db = tmp_path / "dates.sqlite3"
    env = {"DATE_DB": str(db)}
    soon = datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=40)
    import os

    os.environ["DATE_DB"] = str(db)  # the seeding import reads it too
    from tests import date_servers_app

    date_servers_app.engine.dispose()
    date_servers_app.engine = date_servers_app.create_engine(f"sqlite:///{db}")
    date_servers_app.seed(soon)
    date_servers_app.engine.dispose()
    port = free_port()
    log = tmp_path / "server.log"
    with serving(command(request.param, port), port, log, env, "/sitemap.xml") as url:
        yield url


def dates(response: httpx.Response) -> list[datetime]:
    return [parsedate_to_datetime(value) for value in response.headers.get_list("date")]


def test_last_modified_never_after_any_date_the_client_receives(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as client:
        for _ in range(14):  # spread over a couple of seconds: a cached Date lags up to ~1 s
            response = client.get("/soon.xml")
            assert response.status_code == 200
            modified = parsedate_to_datetime(response.headers["last-modified"])
            received = dates(response)
            assert received, "no Date"
            assert all(modified <= date for date in received), (modified, received)
            time.sleep(0.13)


def test_if_modified_since_gets_its_304(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as client:
        first = client.get("/sitemap.xml")
        assert first.status_code == 200 and b"9999" not in first.content
        modified = first.headers["last-modified"]
        assert modified == "Wed, 01 May 2024 19:00:00 GMT"  # the newest served, not 9999
        assert all(parsedate_to_datetime(modified) <= date for date in dates(first))
        time.sleep(1.1)
        again = client.get("/sitemap.xml", headers={"if-modified-since": modified})
        assert again.status_code == 304
        assert again.headers["last-modified"] == modified
