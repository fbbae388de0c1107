"""Shared fixtures (the official schema, SQLite databases, an app per adapter), the test
profiles and tiers; the helpers are in :mod:`tests.support`."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from lxml import etree
from sqlalchemy import (
    Engine,
    create_engine,
    event,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

import sitemap_middleware

from .adapters import ADAPTERS, sitemap_app
from .support import _schema, adispose, dispose, seed

# SITEMAP_REQUIRE_INSTALLED=1 (.ci/run, which installs the wheel it built): the suite tests
# the installed package, never the checkout's src/ — in this process and in every process a
# test starts (a PYTHONPATH or a working directory in src/ would import the checkout there).
CHECKOUT_SRC = Path(__file__).resolve().parents[1] / "src"


def _in_checkout_src(path: str | os.PathLike[str]) -> bool:
    return Path(path).resolve().is_relative_to(CHECKOUT_SRC)


def _child_imports_installed(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook: a process started with the checkout's src/ on its import path fails to
    start (``subprocess.Popen`` raises), so the test that starts it fails."""
    if event != "subprocess.Popen":
        return
    _, _, cwd, env = args
    pythonpath = (os.environ if env is None else env).get("PYTHONPATH", "")
    entries = [entry for entry in pythonpath.split(os.pathsep) if entry]
    if cwd is not None:
        entries.append(os.fsdecode(cwd))
    if any(_in_checkout_src(entry) for entry in entries):
        raise RuntimeError(
            f"SITEMAP_REQUIRE_INSTALLED=1: a process started with {CHECKOUT_SRC} on its import "
            "path would test the checkout, not the installed package"
        )


if os.environ.get("SITEMAP_REQUIRE_INSTALLED") == "1":
    if _in_checkout_src(sitemap_middleware.__file__ or ""):
        raise pytest.UsageError(
            f"SITEMAP_REQUIRE_INSTALLED=1, yet sitemap_middleware is imported from "
            f"{sitemap_middleware.__file__}: install the built wheel, not the checkout"
        )
    if any(_in_checkout_src(entry or os.getcwd()) for entry in sys.path):
        raise pytest.UsageError(f"SITEMAP_REQUIRE_INSTALLED=1, yet {CHECKOUT_SRC} is on sys.path")
    sys.addaudithook(_child_imports_installed)

# Property tests scale with the profile's max_examples (see tests/hostile.py: budget).
# "dev" (default): a quick random run. "ci" (HYPOTHESIS_PROFILE=ci, set by .ci/run; also
# hypothesis's choice whenever CI is set): three times more, derandomized so a run is
# repeatable; the model test (tests/e2e/test_model.py) runs 1,000 histories there.
# "fast": a quarter of dev, the fast tier's (-m "not slow") unless a profile is named.
hypothesis_settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile(
    "fast", hypothesis_settings.get_profile("dev"), max_examples=25
)
hypothesis_settings.register_profile("ci", hypothesis_settings.get_profile("ci"), max_examples=300)
DEFAULT_PROFILE = "ci" if os.environ.get("CI") else "dev"
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", DEFAULT_PROFILE))


def examples(count: int) -> int:
    """A property's own example count, kept at the dev profile's size and above, cut in
    proportion in the fast one (read at collection, after ``pytest_configure``)."""
    current = hypothesis_settings.default.max_examples if hypothesis_settings.default else 100
    return count if current >= 100 else max(10, count * current // 100)


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier's property tests at the fast profile's size (a profile named in
    HYPOTHESIS_PROFILE, or CI's, wins)."""
    fast_tier = (config.getoption("markexpr", "") or "").replace(" ", "") == "notslow"
    if fast_tier and "HYPOTHESIS_PROFILE" not in os.environ and DEFAULT_PROFILE == "dev":
        hypothesis_settings.load_profile("fast")


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the imports and the collection made (modules, classes, SQLAlchemy's and
    hypothesis's tables: they live as long as the run) is moved out of the cyclic garbage
    collector's sight once collected: it walked them at each full collection, a tenth of
    the fast tier's CPU (11.7 s of 107; 7.1 s frozen). What the tests make is collected as
    before, their resources left open reported as before."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def sitemap_schema() -> etree.XMLSchema:
    return _schema("sitemap.xsd")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "site.sqlite3"


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file of ``tables.articles`` with 1,200 rows, written once per process: each
    test's ``engine`` reads a copy of it (seeding each test's took 17 ms of CPU)."""
    path = tmp_path_factory.mktemp("seeded") / "site.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    seed(engine, 1200)
    engine.dispose()
    return path


@pytest.fixture
def engine(db_path: Path, seeded_file: Path) -> Iterator[Engine]:
    shutil.copyfile(seeded_file, db_path)
    engine = create_engine(f"sqlite:///{db_path}")
    yield engine
    dispose(engine)


@pytest.fixture
def failing_engine(db_path: Path) -> Iterator[Callable[[int], Engine]]:
    """``failing_engine(fail_at_id)``: a real SQLite engine on the test database whose
    ``boom(id)`` SQL function raises on one row; disposed at the end of the test (its pool
    closes every connection it kept)."""
    made: list[Engine] = []

    def make(fail_at_id: int) -> Engine:
        def boom(value: int) -> int:
            if value == fail_at_id:
                raise RuntimeError("disk I/O error")
            return value

        engine = create_engine(f"sqlite:///{db_path}")
        event.listen(
            engine,
            "connect",
            lambda dbapi_connection, _: dbapi_connection.create_function("boom", 1, boom),
        )
        made.append(engine)
        return engine

    yield make
    for engine in made:
        dispose(engine)


ENGINE_FIXTURES = {"engine", "failing_engine"}
"""The fixtures of sync engines an app may read (an async one is disposed of on the loop)."""


@pytest.fixture(params=list(ADAPTERS))
async def make_app(
    request: pytest.FixtureRequest, anyio_backend: str
) -> AsyncIterator[Callable[..., Any]]:
    """``make_app(sources=..., base_url=..., ...)``: a standalone app, once per adapter
    (:data:`tests.adapters.ADAPTERS`).

    Its freshness intervals are counted on a clock that stands still (``clock=``: another
    :class:`tests.clock.Clock`, or ``"real"``): a job a test does not start never runs
    because a loaded machine made the test slow. A test of time advances the clock."""
    from .clock import Clock, drive

    # The test's engines are set up first, so that they are disposed of after its apps are
    # closed: a refresh an app starts between the two would open a connection on a pool
    # nobody closes (CPython 3.13 warns of the database left open when it is collected).
    for name in ENGINE_FIXTURES & set(request.fixturenames):
        request.getfixturevalue(name)
    made: list[Any] = []

    def make(*, clock: Clock | str | None = None, **settings: Any) -> Any:
        made.append(sitemap_app(request.param, **settings))
        if clock != "real":
            drive(made[-1], clock if isinstance(clock, Clock) else Clock())
        return made[-1]

    yield make
    # Closed as a server's shutdown closes them, on the test's event loop: an ASGI app's
    # background refreshes end (and their connections close) before that loop does.
    for app in made:
        if hasattr(app, "aclose"):
            await app.aclose()
        elif hasattr(app, "close"):
            app.close()


@pytest.fixture
async def async_engine(db_path: Path, engine: Engine) -> AsyncIterator[AsyncEngine]:
    """An AsyncEngine (aiosqlite) on the seeded test database."""
    async_engine = create_async_engine(f"sqlite+aiosqlite:///{db_path}")
    yield async_engine
    await adispose(async_engine)


# The fast tier (``python -m pytest -m "not slow" -n 2``, the inner loop) leaves out what
# takes minutes: real servers and processes, the model test's histories, the PostgreSQL-heavy
# modules and fresh virtualenvs. Tests of these markers are slow wherever they are:
SLOW_MARKERS = ("e2e", "nginx", "varnish", "install")
# and these modules, whole (the first two start real servers: end-to-end, though unmarked;
# the docs tests run every block of the README and docs/, commands included).
SERVER_MODULES = {"test_date_header_servers", "test_indexnow"}
SLOW_MODULES = {
    *SERVER_MODULES,
    "test_model",
    "test_postgres",
    "test_django_commands",
    "test_docs",
}
# and these tests: each 20-40 s of one core (a minute of the fast tier's two), or seconds of
# waiting for a clock or a process, several times over:
SLOW_TESTS = {
    ("test_cli_audit", "test_the_sample_is_spread_bounded_and_deterministic"),
    ("test_indexnow_sites", "test_the_command_line_pushes_every_site_or_those_named"),
    ("test_settings", "test_a_wrong_group_is_a_type_checkers_error"),
    ("test_render", "test_changefreq_and_priority_columns_give_the_bytes_of_the_rules"),
    ("test_live_pages", "test_refreshed_pages_equal_a_recount"),
    ("test_freshness_bounds", "test_histories_keep_the_bounds"),
    ("test_example_app", "test_two_replicas_seeding_a_new_file_at_once"),
    ("test_wsgi", "test_a_process_serving_async_sources_under_wsgi_can_exit"),
    ("test_cli_render", "test_the_installed_command"),
    # 3 s of sleep for each of 16 cases
    (
        "test_validators_follow_bytes",
        "test_a_remembered_summary_expires_when_the_clock_reaches_a_future_lastmod",
    ),
}


# Under coverage (pytest --cov, .ci/run): the model test's histories run untraced. They
# repeat paths the rest of the suite covers, and tracing makes them cost 1.8 times the CPU.
# So do three property modules of hostile input and the import checks: every line and branch
# they reach, the rest of the suite reaches too (coverage's per-test contexts, the ci
# profile: its examples are derandomized), and traced the property modules cost 48 s of CPU
# instead of 27, the import checks 6 instead of 2.
UNTRACED_MODULES = {
    "test_model",
    "test_hostile_requests",
    "test_hostile_core",
    "test_checksums",
    "test_imports",
}


@contextlib.contextmanager
def _coverage_stopped(untraced: bool) -> Iterator[None]:
    """Coverage stopped meanwhile (``untraced``, under pytest --cov), then started again.

    Stopped, not paused around the test's call as pytest-cov's ``no_cover`` marker does: a
    thread keeps the tracer of the moment it started, and the threads of an untraced test
    (its module fixtures' event loops, worker threads) start before its call. Every running
    measurement is stopped: a pytest-xdist worker runs two, and stopping the one on top
    resumes the other."""
    stopped = []
    if untraced and "coverage" in sys.modules:
        import coverage

        while (current := coverage.Coverage.current()) is not None:
            current.stop()
            stopped.append(current)
    try:
        yield
    finally:
        for measurement in reversed(stopped):
            measurement.start()


@pytest.fixture(scope="module", autouse=True)
def _untraced_module(request: pytest.FixtureRequest) -> Iterator[None]:
    with _coverage_stopped(request.path.stem in UNTRACED_MODULES):
        yield


# The longest modules (half a minute of one core or more), longest first: pytest-xdist
# (--dist worksteal, .ci/run) hands each worker its share of the tests in this order and
# an idle worker takes the tests another has not started, so the long ones start early and
# the short ones fill the cores at the end instead of one core working alone.
FIRST_MODULES = (
    "test_model",
    "test_install",
    "test_indexable_scale",
    "test_indexnow",
    "test_django_commands",
    "test_date_header_servers",
    "test_e2e",
    "test_quick_start",
    "test_docs",
    "test_hostile_rows",
    "test_dirty_sources",
    "test_validators_follow_bytes",
    "test_hostile_requests",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the slow tier (above) and puts the longest modules first. Django 4.2's ASGI
    handler does not listen for the client's disconnect (Django 5.0 does): a document is
    generated to its end for a client that left (README, Django)."""
    rank = {module: place for place, module in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(FIRST_MODULES)))
    for item in items:
        module = item.path.stem
        name = (module, getattr(item, "originalname", item.name))
        if module in SERVER_MODULES:
            item.add_marker(pytest.mark.e2e)
        if (
            module in SLOW_MODULES
            or name in SLOW_TESTS
            or any(item.get_closest_marker(marker) for marker in SLOW_MARKERS)
        ):
            item.add_marker(pytest.mark.slow)
    import django

    if django.VERSION >= (5, 0):
        return
    reason = "Django 4.2's ASGI handler does not notice a client's disconnect"
    for item in items:
        if "disconnect" in item.name and "django-asgi" in item.name:
            item.add_marker(pytest.mark.skip(reason=reason))
