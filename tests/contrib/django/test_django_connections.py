"""With ``CONN_MAX_AGE = 0`` no connection is left open after a request or a background read,
as Django closes its own: the test project (:mod:`tests.django_connections_site`) on
PostgreSQL, served by real servers on 127.0.0.1 (Django's ASGI handler under uvicorn, its
WSGI handler under gunicorn's sync worker, Django inside the library's ASGI middleware
under uvicorn), is crawled while its rows change and its pages are kept current by
background reads; then its connections are counted in ``pg_stat_activity`` by their
``application_name``, while the server still runs. With ``CONN_MAX_AGE = 60`` only the
threads that live on keep theirs."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
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


def settled(application_name: str, kept: int = 0, bound: float = 15.0) -> list[tuple[Any, ...]]:
    """The server's connections once at most ``kept`` are left, or those still open after
    ``bound`` seconds (a background read may be running when the crawl ends)."""
    deadline = time.monotonic() + bound
    while len(found := connections_of(application_name)) > kept and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@pytest.mark.parametrize("server", list(SERVERS))
def test_no_connection_is_left_open(server: str, alias: str, tmp_path: Path) -> None:
    application_name = f"sitemap-connections-{uuid.uuid4().hex[:10]}"
    log = tmp_path / "server.log"
    with crawled(server, alias, application_name, log) as state:
        left = settled(application_name)
        assert state["refreshes"] + state["recounts"] >= 2, state  # background reads ran
        assert left == [], (left, log.read_text())


def test_kept_connections_are_only_those_of_threads_that_live_on(
    alias: str, tmp_path: Path
) -> None:
    """With ``CONN_MAX_AGE = 60`` under gunicorn's sync worker, the connections kept are
    those of the worker's thread and of asgiref's thread for sync work (the
    ``AsyncDjangoSource``'s reads), one each: a background job's thread closes its own when
    the job ends, none is left for the garbage collector (psycopg would warn)."""
    application_name = f"sitemap-connections-{uuid.uuid4().hex[:10]}"
    log = tmp_path / "server.log"
    kept = {"CONNECTIONS_MAX_AGE": "60", "PYTHONWARNINGS": "always::ResourceWarning"}
    with crawled("gunicorn-sync", alias, application_name, log, kept) as state:
        left = settled(application_name, kept=2)
        assert state["refreshes"] >= 1, state  # background jobs ran, in threads of their own
        assert len(left) <= 2, (left, log.read_text())
        assert "deleted while still open" not in log.read_text(), log.read_text()


@contextmanager
def crawled(
    server: str, alias: str, application_name: str, log: Path, extra: dict[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """The test project served by ``server``, crawled while its rows change: what
    ``/_state`` tells after the crawl, while the server still runs."""
    write(alias, 1, 40)
    Page.objects.using(alias).bulk_create(Page(path=f"p{i}") for i in range(7))
    env = {
        "CONNECTIONS_APP": application_name,
        "CONNECTIONS_SCHEMA": settings.POSTGRES_SCHEMA,
        "SITEMAP_TEST_POSTGRES": str(server_url().render_as_string(hide_password=False)),
        **(extra or {}),
    }
    port = free_port()
    command = [sys.executable, *SERVERS[server], f"127.0.0.1:{port}"]
    if server.startswith("uvicorn"):
        command[-1] = str(port)
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
        yield client.get("/_state").json()
