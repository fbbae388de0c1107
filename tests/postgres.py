"""The PostgreSQL server the PostgreSQL tests run against, or a clear reason to skip them.

The server is named by ``SITEMAP_TEST_POSTGRES`` (a ``postgresql://`` URL; default: the
one ``.ci/postgres`` starts). The tests skip only when nothing answers at that address
or the drivers are not installed; with ``SITEMAP_REQUIRE_POSTGRES=1`` (set by ``.ci/run``)
that is a failure instead. A server that answers but refuses the login fails the tests.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import uuid
from collections.abc import Mapping

import pytest
from sqlalchemy import URL, make_url

URL_VARIABLE = "SITEMAP_TEST_POSTGRES"
REQUIRE_VARIABLE = "SITEMAP_REQUIRE_POSTGRES"
DEFAULT_URL = "postgresql://sitemap:sitemap@127.0.0.1:54329/sitemap_test"  # .ci/postgres
DRIVERS = ("psycopg", "asyncpg")


def _unavailable(problem: str, environ: Mapping[str, str]) -> None:
    if environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"PostgreSQL is required ({REQUIRE_VARIABLE}=1): {problem}", pytrace=False)
    pytest.skip(f"PostgreSQL tests skipped: {problem}")


def require_drivers(environ: Mapping[str, str] = os.environ) -> None:
    """psycopg and asyncpg are installed (the ``postgres`` extra), or skip."""
    missing = [name for name in DRIVERS if importlib.util.find_spec(name) is None]
    if missing:
        _unavailable(f"drivers {missing} are not installed: pip install -e '.[postgres]'", environ)


def server_url(environ: Mapping[str, str] = os.environ) -> URL:
    """The server's URL (plain ``postgresql://``), once it accepts TCP connections."""
    require_drivers(environ)
    url = make_url(environ.get(URL_VARIABLE) or DEFAULT_URL)
    address = (url.host or "127.0.0.1", url.port or 5432)
    try:
        socket.create_connection(address, timeout=3).close()
    except OSError as exc:
        _unavailable(
            f"no PostgreSQL server answers at {address[0]}:{address[1]} ({exc}); start one "
            f"with `.ci/postgres` and set {URL_VARIABLE} to the URL it prints",
            environ,
        )
    return url.set(drivername="postgresql")


def driver_url(url: URL, driver: str) -> URL:
    return url.set(drivername=f"postgresql+{driver}")


def schema_name() -> str:
    """A schema of its own for each test: runs sharing one database never meet."""
    return f"sitemap_{uuid.uuid4().hex[:12]}"
