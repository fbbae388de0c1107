"""With ``CONN_MAX_AGE = 0`` no connection is left open after a request or a background read,
as Django closes its own: the test project (:mod:`tests.django_connections_site`) on
PostgreSQL, served by real servers on 127.0.0.1 (Django's ASGI handler under uvicorn, its
WSGI handler under gunicorn's sync worker, Django inside the library's ASGI middleware
under uvicorn), is crawled while its rows change and its pages are kept current by
background reads; then its connections are counted in ``pg_stat_activity`` by their
``application_name``, while the server still runs."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from ...django_setup import database, setup
from ...postgres import server_url
from ...support import assert_valid_index, free_port
from ...uvicorn_process import serving

setup()

from django.conf import settings  # noqa: E402

from ...django_site.shop.models import Article, Page  # noqa: E402

pytestmark = pytest.mark.e2e
SITE = "tests.django_connections_site"
UVICORN = ["-m", "uvicorn", "--host", "127.0.0.1", "--log-level", "warning", "--lifespan", "off"]
SERVERS = {
    "uvicorn": [*UVICORN, f"{SITE}:asgi", "--port"],
    "uvicorn-wrapped": [*UVICORN, f"{SITE}:wrapped", "--port"],
    "gunicorn-sync": [
        "-m",
        "gunicorn",
        f"{SITE}:wsgi",
        "--worker-class",
        "sync",
        "--workers",
        "1",
        "--bind",
    ],
}


@pytest.fixture
def alias() -> Iterator[str]:
    name = database("postgres")
    for model in (Article, Page):
        model.objects.using(name).all().delete()
    yield name
    for model in (Article, Page):
        model.objects.using(name).all().delete()


def write(alias: str, first: int, count: int) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    Article.objects.using(alias).bulk_create(
        Article(id=i, slug=f"a-{i}", updated_at=now) for i in range(first, first + count)
    )


def connections_of(application_name: str) -> list[tuple[Any, ...]]:
    """``(pid, state, backend_start)`` of the server's connections."""
    import psycopg

    url = server_url()
    params = {"host": url.host, "port": url.port, "user": url.username}
    params |= {"password": url.password, "dbname": url.database, "autocommit": True}
    with psycopg.connect(**params) as conn:  # type: ignore[arg-type]
        query = (
            "SELECT pid, state, backend_start FROM pg_stat_activity "
            "WHERE application_name = %s ORDER BY pid"
        )
        return list(conn.execute(query, [application_name]).fetchall())


def settled(application_name: str, bound: float = 15.0) -> list[tuple[Any, ...]]:
    """The server's connections once none is left, or those still open after ``bound``
    seconds (a background read may be running when the crawl ends)."""
    deadline = time.monotonic() + bound
    while (found := connections_of(application_name)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@pytest.mark.parametrize("server", list(SERVERS))
def test_no_connection_is_left_open(server: str, alias: str, tmp_path: Path) -> None:
    write(alias, 1, 40)
    Page.objects.using(alias).bulk_create(Page(path=f"p{i}") for i in range(7))
    application_name = f"sitemap-connections-{uuid.uuid4().hex[:10]}"
    env = {
        "CONNECTIONS_APP": application_name,
        "CONNECTIONS_SCHEMA": settings.POSTGRES_SCHEMA,
        "SITEMAP_TEST_POSTGRES": str(server_url().render_as_string(hide_password=False)),
    }
    port = free_port()
    command = [sys.executable, *SERVERS[server], f"127.0.0.1:{port}"]
    if server.startswith("uvicorn"):
        command[-1] = str(port)
    log = tmp_path / "server.log"
    with serving(command, port, log, env, "/_state") as url, httpx.Client(base_url=url) as client:
        index = client.get("/sitemap.xml")
        assert index.status_code == 200, log.read_text()
        paths = ["/sitemap.xml"] + [
            loc.removeprefix("https://example.com") for loc, _ in assert_valid_index(index.content)
        ]
        assert len(paths) > 8  # every source, several pages of the adopted classes
        for round_ in range(5):
            for path in paths:
                answer = client.get(path)
                assert answer.status_code == 200, (path, log.read_text())
                etree.fromstring(answer.content)
                again = client.get(path, headers={"if-none-match": answer.headers["etag"]})
                assert again.status_code in (200, 304), path
            write(alias, 100 + round_ * 10, 3)  # new rows: the background reads find them
            time.sleep(0.3)  # a refresh is due at the next request
        state = client.get("/_state").json()
        left = settled(application_name)
        assert state["refreshes"] + state["recounts"] >= 2, state  # background reads ran
        assert left == [], (left, log.read_text())
