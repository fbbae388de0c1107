"""Every install the README names works alone, from the wheel, in a fresh virtualenv.

Each test installs one requirement (the package with no extra, ``[sqlalchemy]``,
``[cli]``, ``[indexnow]``, ``[django]``, ``[django,sqlalchemy]``, ``[example]``,
``[example,django]``) and runs what the README says it enables: the import, a sitemap
served over a real socket, each command it covers (``--help`` and a real run); and what
it does not cover fails where it is used, with an error naming the extra to install.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from ..installs import ROOT, Venv, fetch, fresh_venv, locs_of, serving, wheel
from ..postgres import driver_url, schema_name, server_url
from ..support import assert_valid_index, check_served, free_port

__all__ = ["wheel"]  # the session fixture

pytestmark = pytest.mark.install

BASE = "https://example.com/"
# The distributions of the optional dependencies: none may come with an install that
# does not name the extra bringing it.
OPTIONAL = {
    "sqlalchemy",
    "greenlet",
    "httpx",
    "lxml",
    "protego",
    "django",
    "starlette",
    "uvicorn",
    "flask",
}

# Lists, a generator, an async generator and a custom source: what a site serves without
# any extra.
LISTS_SITE = f"""
import os
from datetime import date

from sitemap_middleware import Entry, SitemapApp, SitemapWSGIApp, Summary, SyncSource
from sitemap_middleware.output.entry import Batch

BASE = os.environ.get("SITE_BASE", {BASE!r})


class Team(SyncSource):
    \"\"\"A custom source: the team's pages, from a tuple it keeps itself.\"\"\"

    name = "team"
    pageable = False  # one page
    members = ("ada", "grace")

    def summarize(self, keys, as_of=None):
        return Summary(newest=None, count=len(self.members), token="team-1")

    def batches(self, keys, size):
        yield Batch.of([(n, f"/team/{{m}}", None, None, None) for n, m in enumerate(self.members)])


def posts():
    return (f"/posts/{{n}}" for n in range(1, 4))


async def events():
    for n in range(1, 3):
        yield Entry(f"/events/{{n}}", lastmod=date(2024, 5, n))


def sources():
    return {{
        "pages": ["/", "/about", Entry("/pricing", lastmod=date(2024, 5, 1), priority=0.8)],
        "posts": posts,
        "events": events,
        "team": Team(),
    }}


asgi = SitemapApp(base_url=BASE, sources=sources())
wsgi = SitemapWSGIApp(base_url=BASE, sources=sources())
"""

# A table through SQLAlchemySource: SQLite by default, or the database SITE_DB names (in
# the schema SITE_SCHEMA); with SITE_ASYNC_DB, also an ASGI app reading it through
# AsyncSQLAlchemySource. IndexNow is configured: the key file is served without the
# indexnow extra; pushing needs it.
SQL_SITE = f"""
import os
from datetime import UTC, datetime

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table
from sqlalchemy import create_engine, func, select

from sitemap_middleware import IndexNowSettings, SitemapApp, SitemapWSGIApp, SQLAlchemySource

BASE = {BASE!r}
metadata = MetaData(schema=os.environ.get("SITE_SCHEMA"))
articles = Table(
    "articles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("slug", String, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
engine = create_engine(os.environ.get("SITE_DB", "sqlite:///site.sqlite3"))
metadata.create_all(engine)
with engine.begin() as connection:
    if not connection.execute(select(func.count()).select_from(articles)).scalar():
        connection.execute(
            articles.insert(),
            [
                {{"slug": f"article-{{n}}", "updated_at": datetime(2024, 5, n, tzinfo=UTC)}}
                for n in range(1, 6)
            ],
        )
OPTIONS = dict(name="articles", loc="/articles/{{slug}}", lastmod="updated_at")
rows = select(articles.c.id, articles.c.slug, articles.c.updated_at)
source = SQLAlchemySource(rows, engine, **OPTIONS)
wsgi = SitemapWSGIApp(
    base_url=BASE, sources=[source], indexnow=IndexNowSettings(key="0123456789abcdef")
)
if os.environ.get("SITE_ASYNC_DB"):
    from sqlalchemy.ext.asyncio import create_async_engine

    from sitemap_middleware import AsyncSQLAlchemySource

    async_engine = create_async_engine(os.environ["SITE_ASYNC_DB"])
    asgi = SitemapApp(base_url=BASE, sources=[AsyncSQLAlchemySource(rows, async_engine, **OPTIONS)])
"""


# A WSGI application served by the standard library's server: `python serve.py MODULE:ATTR
# PORT` (a real socket, no server package needed).
SERVE = """
import importlib
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

module, _, attr = sys.argv[1].partition(":")
sys.path.insert(0, ".")
app = getattr(importlib.import_module(module), attr)


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


make_server("127.0.0.1", int(sys.argv[2]), app, handler_class=Quiet).serve_forever()
"""


def install(tmp_path: Path, wheel: Path, extras: str = "") -> Venv:
    venv = fresh_venv(tmp_path, f"{wheel}[{extras}]" if extras else str(wheel))
    (venv.work / "serve.py").write_text(SERVE)
    return venv


def only(venv: Venv, *extras: str) -> None:
    """The optional dependencies installed are those of ``extras``, no other."""
    brought = {
        "": set(),
        "sqlalchemy": {"sqlalchemy", "greenlet"},
        "cli": {"httpx", "lxml", "protego"},
        "indexnow": {"httpx", "sqlalchemy", "greenlet"},
        "django": {"django", "httpx", "lxml", "protego"},
        "example": {"sqlalchemy", "greenlet", "httpx", "starlette", "uvicorn", "flask"},
    }
    expected = set().union(*(brought[extra] for extra in extras))
    assert venv.installed() & OPTIONAL == expected


def served_sitemap(venv: Venv, app: str, children: int, **env: str) -> list[bytes]:
    """The root sitemap ``app`` serves (through the standard library's WSGI server, on a
    port of its own): an index of ``children`` documents and each of them, or (``0``) a
    urlset; each a schema-valid 200. Their bodies, the root's first."""
    port = free_port()
    command = [str(venv.bin / "python"), "serve.py", app, str(port)]
    base = env.get("SITE_BASE", BASE)
    with serving(command, port, venv.work, venv.env(**env)):
        root = fetch(port, "/sitemap.xml")
        bodies = [root.body]
        assert root.status == 200, root.body
        assert root.headers["Content-Type"].startswith("text/xml")
        assert root.headers["ETag"]
        check_served(root.status, root.headers["Content-Type"], root.body)
        children_locs = locs_of(root.body, "sitemap")
        assert len(children_locs) == children
        assert (b"<sitemapindex" in root.body) == bool(children)
        for loc in children_locs:
            page = fetch(port, "/" + loc.removeprefix(base))
            assert page.status == 200, (loc, page.body)
            assert page.headers["Content-Type"].startswith("text/xml")
            check_served(page.status, page.headers["Content-Type"], page.body)
            assert b"<urlset" in page.body
            bodies.append(page.body)
        again = fetch(port, "/sitemap.xml", headers={"If-None-Match": root.headers["ETag"]})
        assert again.status == 304
    return bodies


def urls(bodies: list[bytes]) -> set[str]:
    found: set[str] = set()
    for body in bodies:
        found.update(locs_of(body, "url"))
    return found


def fails_naming(result_text: str, extra: str) -> None:
    assert f"pip install 'sitemap_middleware[{extra}]'" in result_text, result_text


def import_error(venv: Venv, statement: str) -> str:
    """The error ``statement`` raises: a MissingExtra (an ImportError and a
    ConfigurationError), as ``type: message``."""
    code = textwrap.dedent(f"""
        from sitemap_middleware import ConfigurationError
        try:
            {statement}
        except ImportError as exc:
            assert isinstance(exc, ConfigurationError), type(exc)
            print(f"{{type(exc).__name__}}: {{exc}}")
        else:
            raise SystemExit("no error")
    """)
    result = venv.python(code)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def helps(venv: Venv, *command: str) -> None:
    """``command --help`` exits 0 and prints its usage."""
    result = venv.run(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout.lower()


def all_command_helps(venv: Venv) -> None:
    helps(venv, "sitemap-middleware")
    for command in ("check", "render", "indexnow", "routes"):
        helps(venv, "sitemap-middleware", command)
    version = venv.run("sitemap-middleware", "--version")
    assert version.returncode == 0 and "0." in version.stdout, version


def renders(venv: Venv, app: str, documents: int) -> None:
    """``sitemap-middleware render`` writes the index and its documents (.xml and .xml.gz)."""
    out = venv.work / f"public-{app.replace(':', '-')}"
    result = venv.run("sitemap-middleware", "render", "--app", app, "--out", out, "--quiet")
    assert result.returncode == 0, result.stderr
    written = sorted(path.name for path in out.iterdir())
    assert "sitemap.xml" in written
    assert len([name for name in written if name.endswith(".xml")]) == documents, written
    for name in written:
        if name.endswith(".xml"):
            check_served(200, "text/xml", (out / name).read_bytes())


def test_no_extra_serves_lists_and_generators(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel)
    only(venv, "")
    (venv.work / "site_app.py").write_text(LISTS_SITE)
    bodies = served_sitemap(venv, "site_app:wsgi", children=4)
    assert urls(bodies) == {
        *(f"{BASE}{path}" for path in ("", "about", "pricing")),
        *(f"{BASE}posts/{n}" for n in range(1, 4)),
        *(f"{BASE}events/{n}" for n in range(1, 3)),
        *(f"{BASE}team/{name}" for name in ("ada", "grace")),
    }
    # render needs only the application: in-process, ASGI (with its lifespan) and WSGI.
    renders(venv, "site_app:asgi", documents=5)
    renders(venv, "site_app:wsgi", documents=5)
    all_command_helps(venv)


def test_no_extra_names_the_extra_of_what_it_lacks(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel)
    (venv.work / "site_app.py").write_text(LISTS_SITE)
    lacking = {
        "from sitemap_middleware import SQLAlchemySource": "sqlalchemy",
        "from sitemap_middleware import AsyncSQLAlchemySource": "sqlalchemy",
        "import sitemap_middleware.contrib.django": "django",
        "from sitemap_middleware.contrib.indexnow import IndexNow": "indexnow",
        "from sitemap_middleware.sources.sqlalchemy.source import SQLAlchemySource": "sqlalchemy",
    }
    for statement, extra in lacking.items():
        message = import_error(venv, statement)
        assert message.startswith("MissingExtra: "), message
        fails_naming(message, extra)
    # Pushing from the lifespan: refused when the middleware is built, not at startup.
    pushing = venv.python(
        "from sitemap_middleware import IndexNowSettings, SitemapApp\n"
        "SitemapApp(base_url='https://example.com/', sources={'pages': ['/']},"
        " indexnow=IndexNowSettings(key='0123456789abcdef', every=60))"
    )
    assert pushing.returncode == 1
    assert "ConfigurationError: indexnow.every" in pushing.stderr
    fails_naming(pushing.stderr, "indexnow")
    check = venv.run("sitemap-middleware", "check", "http://127.0.0.1:9/sitemap.xml")
    assert check.returncode == 2
    fails_naming(check.stderr, "cli")
    push = venv.run("sitemap-middleware", "indexnow", "--app", "site_app:asgi")
    assert push.returncode == 2
    fails_naming(push.stderr, "indexnow")


def test_sqlalchemy_extra_serves_a_table(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "sqlalchemy")
    only(venv, "sqlalchemy")
    (venv.work / "site_sql.py").write_text(SQL_SITE)
    bodies = served_sitemap(venv, "site_sql:wsgi", children=0)
    assert urls(bodies) == {f"{BASE}articles/article-{n}" for n in range(1, 6)}
    renders(venv, "site_sql:wsgi", documents=1)
    # The async source imports (greenlet came with the extra); its driver is the site's.
    imported = venv.python("from sitemap_middleware import AsyncSQLAlchemySource")
    assert imported.returncode == 0, imported.stderr
    fails_naming(import_error(venv, "import sitemap_middleware.contrib.django"), "django")
    push = venv.run("sitemap-middleware", "indexnow", "--app", "site_sql:wsgi")
    assert push.returncode == 2
    fails_naming(push.stderr, "indexnow")


def test_cli_extra_checks_a_live_sitemap(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "cli")
    only(venv, "cli")
    (venv.work / "site_app.py").write_text(LISTS_SITE)
    all_command_helps(venv)
    port = free_port()
    command = [str(venv.bin / "python"), "serve.py", "site_app:wsgi", str(port)]
    url = f"http://127.0.0.1:{port}/sitemap.xml"
    with serving(command, port, venv.work, venv.env(SITE_BASE=url.removesuffix("sitemap.xml"))):
        # The standard library's server adds "Content-Length: 0" to a HEAD answer the
        # application sends no length for: the HEAD probes are run in-process below.
        live = venv.run("sitemap-middleware", "check", "--json", "--no-conditional", url)
        report = json.loads(live.stdout)
        assert live.returncode == 0, report
        assert len(report["documents"]) == 5
    in_process = venv.run(
        "sitemap-middleware", "check", "--app", "site_app:asgi", f"{BASE}sitemap.xml"
    )
    assert in_process.returncode == 0, in_process.stdout + in_process.stderr
    renders(venv, "site_app:asgi", documents=5)
    fails_naming(
        import_error(venv, "from sitemap_middleware import SQLAlchemySource"), "sqlalchemy"
    )
    push = venv.run("sitemap-middleware", "indexnow", "--app", "site_app:asgi")
    assert push.returncode == 2
    fails_naming(push.stderr, "indexnow")


def test_indexnow_extra_pushes(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "indexnow")
    only(venv, "indexnow")
    (venv.work / "site_sql.py").write_text(SQL_SITE)
    helps(venv, "sitemap-middleware", "indexnow")
    made = venv.python(
        "from site_sql import engine; from sitemap_middleware.contrib.indexnow import install; "
        "install(engine)"
    )
    assert made.returncode == 0, made.stderr
    push = ["sitemap-middleware", "indexnow", "--app", "site_sql:wsgi", "--once"]
    first = venv.run(*push)
    assert first.returncode == 0, first.stderr
    assert "first run: starts from now" in first.stdout
    edited = venv.python(
        "from datetime import datetime, timezone\n"
        "from site_sql import articles, engine\n"
        "with engine.begin() as c:\n"
        "    c.execute(articles.update().where(articles.c.id == 2)"
        ".values(updated_at=datetime.now(timezone.utc)))"
    )
    assert edited.returncode == 0, edited.stderr
    dry = venv.run(*push, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"{BASE}articles/article-2" in dry.stdout
    bodies = served_sitemap(venv, "site_sql:wsgi", children=0)
    assert len(urls(bodies)) == 5
    check = venv.run("sitemap-middleware", "check", f"{BASE}sitemap.xml")
    assert check.returncode == 2
    fails_naming(check.stderr, "cli")


DJANGO_SETTINGS = """
SECRET_KEY = "not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "sitemap_middleware.contrib.django",
]
MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
ROOT_URLCONF = "proj.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
SITEMAP_MIDDLEWARE = {
    "sources": __import__("os").environ.get("PROJECT_SOURCES", "proj.sitemaps.sources"),
    "base_url": "https://example.com/",
}
"""

DJANGO_FILES = {
    "proj/__init__.py": "",
    "proj/settings.py": DJANGO_SETTINGS,
    "proj/urls.py": "urlpatterns = []\n",
    "proj/wsgi.py": (
        "import os\n"
        "from django.core.wsgi import get_wsgi_application\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'proj.settings')\n"
        "application = get_wsgi_application()\n"
    ),
    "manage.py": (
        "import os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'proj.settings')\n"
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(sys.argv)\n"
    ),
}

# Classes written for django.contrib.sitemaps, adopted: one over a list, one over a
# QuerySet (the content types the migrations made). No SQL is compiled by the package.
ADOPTED = """
from django.contrib.sitemaps import Sitemap


class Pages(Sitemap):
    changefreq = "monthly"

    def items(self):
        return ["/", "/about/"]

    def location(self, item):
        return item


class Types(Sitemap):
    def items(self):
        from django.contrib.contenttypes.models import ContentType

        return ContentType.objects.all()

    def location(self, obj):
        return f"/types/{obj.pk}/"


def sources():
    from sitemap_middleware.contrib.django import django_sitemap_sources

    return django_sitemap_sources({"pages": Pages, "types": Types}, base_url="https://example.com/")
"""

QUERYSET = """
def sources():
    from django.contrib.contenttypes.models import ContentType

    from sitemap_middleware.contrib.django import DjangoSource

    return [DjangoSource(ContentType.objects.all(), name="types", loc="/types/{id}/")]
"""


def django_project(venv: Venv, sitemaps: str) -> None:
    for name, text in {**DJANGO_FILES, "proj/sitemaps.py": sitemaps}.items():
        (venv.work / name).parent.mkdir(exist_ok=True)
        (venv.work / name).write_text(text)
    migrated = venv.run("python", "manage.py", "migrate", "-v0")
    assert migrated.returncode == 0, migrated.stderr


def manage_commands_work(venv: Venv, documents: int) -> None:
    """``manage.py check``, ``sitemap_render`` and ``sitemap_check`` (each ``--help`` and a
    real run, in-process) and the project's sitemap over a real socket."""
    check = venv.run("python", "manage.py", "check")
    assert check.returncode == 0, check.stderr
    for command in ("sitemap_render", "sitemap_check", "sitemap_routes"):
        helps(venv, "python", "manage.py", command)
    out = venv.work / "public"
    render = venv.run("python", "manage.py", "sitemap_render", "--out", out, "--quiet")
    assert render.returncode == 0, render.stderr
    assert len(list(out.glob("*.xml"))) == documents
    root = (out / "sitemap.xml").read_bytes()
    check_served(200, "text/xml", root)
    checked = venv.run("python", "manage.py", "sitemap_check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    served_sitemap(venv, "proj.wsgi:application", children=documents - 1 if documents > 1 else 0)


def test_django_extra_adopts_sitemap_classes_without_sqlalchemy(
    tmp_path: Path, wheel: Path
) -> None:
    venv = install(tmp_path, wheel, "django")
    only(venv, "django")
    django_project(venv, ADOPTED)
    manage_commands_work(venv, documents=3)
    # DjangoSource compiles its statements with SQLAlchemy: asked for, it says so.
    message = import_error(venv, "from sitemap_middleware.contrib.django import DjangoSource")
    assert message.startswith("MissingExtra: DjangoSource needs sqlalchemy"), message
    fails_naming(message, "django,sqlalchemy")
    # In the project's setting, Django's system check reports it, naming the extra.
    (venv.work / "proj" / "queryset.py").write_text(QUERYSET)
    check = venv.run("python", "manage.py", "check", PROJECT_SOURCES="proj.queryset.sources")
    assert check.returncode == 1
    assert "sitemap_middleware.E001" in check.stderr
    fails_naming(check.stderr, "django,sqlalchemy")


def test_django_and_sqlalchemy_extras_serve_a_queryset(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "django,sqlalchemy")
    only(venv, "django", "sqlalchemy")
    django_project(venv, QUERYSET)
    manage_commands_work(venv, documents=1)


def test_example_extra_runs_the_example_site(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "example")
    only(venv, "example")
    # The example is not in the wheel: it runs from its folder, as from the checkout.
    shutil.copytree(ROOT / "example_app", venv.work / "example_app")
    for module in ("example_app", "example_app.flask_app"):
        port = free_port()
        env = venv.env(PORT=str(port), EXAMPLE_DB=f"{module}.sqlite3", EXAMPLE_ROWS="50")
        with serving([str(venv.bin / "python"), "-m", module], port, venv.work, env):
            index = fetch(port, "/sitemap.xml")
            assert index.status == 200, (module, index.body)
            assert_valid_index(index.body)
    # The example's IndexNow, as the README runs it: under uvicorn, serving the key file;
    # pushing from the command line (a dry run posts nothing).
    key = "0123456789abcdef"
    port = free_port()
    env = venv.env(EXAMPLE_DB="example_app.sqlite3", INDEXNOW_KEY=key, PORT=str(port))
    uvicorn = [str(venv.bin / "uvicorn"), "example_app.asgi:app", "--port", str(port)]
    with serving(uvicorn, port, venv.work, env):
        key_file = fetch(port, f"/{key}.txt")
        assert (key_file.status, key_file.body) == (200, key.encode())
    push = ["sitemap-middleware", "indexnow", "--app", "example_app.asgi:app", "--once"]
    first = venv.run(*push, "--dry-run", EXAMPLE_DB="example_app.sqlite3", INDEXNOW_KEY=key)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "first run: starts from now" in first.stdout


def test_example_and_django_extras_run_the_django_example(tmp_path: Path, wheel: Path) -> None:
    venv = install(tmp_path, wheel, "example,django")
    only(venv, "example", "django")
    shutil.copytree(ROOT / "example_app", venv.work / "example_app")
    port = free_port()
    env = venv.env(PORT=str(port), EXAMPLE_DB="django.sqlite3", EXAMPLE_ROWS="50")
    command = [str(venv.bin / "python"), "-m", "example_app.django_app"]
    with serving(command, port, venv.work, env):
        index = fetch(port, "/sitemap.xml")
        assert index.status == 200, index.body
        assert_valid_index(index.body)


def test_postgres_extra_serves_a_table_on_postgresql(tmp_path: Path, wheel: Path) -> None:
    url = server_url()  # skips without a server, fails instead where CI requires one
    schema = schema_name()
    venv = install(tmp_path, wheel, "postgres")
    only(venv, "sqlalchemy")
    assert {"psycopg", "asyncpg"} <= venv.installed()
    (venv.work / "site_sql.py").write_text(SQL_SITE)
    sync_url = driver_url(url, "psycopg").render_as_string(hide_password=False)
    async_url = driver_url(url, "asyncpg").render_as_string(hide_password=False)
    created = venv.python(
        "from sqlalchemy import create_engine, text\n"
        f"with create_engine({sync_url!r}).begin() as c:\n"
        f"    c.execute(text('CREATE SCHEMA {schema}'))"
    )
    assert created.returncode == 0, created.stderr
    env = {"SITE_DB": sync_url, "SITE_ASYNC_DB": async_url, "SITE_SCHEMA": schema}
    try:
        bodies = served_sitemap(venv, "site_sql:wsgi", children=0, **env)
        assert urls(bodies) == {f"{BASE}articles/article-{n}" for n in range(1, 6)}
        out = venv.work / "public"
        render = ("sitemap-middleware", "render", "--app", "site_sql:asgi", "--out", str(out))
        rendered = venv.run(*render, SITE_DB=sync_url, SITE_ASYNC_DB=async_url, SITE_SCHEMA=schema)
        assert rendered.returncode == 0, rendered.stderr
        assert (out / "sitemap.xml").read_bytes() == bodies[0]  # async, byte for byte
    finally:
        dropped = venv.python(
            "from sqlalchemy import create_engine, text\n"
            f"with create_engine({sync_url!r}).begin() as c:\n"
            f"    c.execute(text('DROP SCHEMA {schema} CASCADE'))"
        )
        assert dropped.returncode == 0, dropped.stderr
