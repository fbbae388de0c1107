"""What the README's and docs/'s snippets assume, for their invisible setup blocks.

A snippet names ``Article``, ``engine``, ``app`` as a reader's project has them; the
invisible blocks of the Markdown (see ``tests/test_docs.py``) take them from here: SQLAlchemy
models on a SQLite file, a few rows, a client for ASGI and WSGI apps, a small Django project
run in a subprocess (Django is configured once per process, and the suite's own Django
tests configure it), and the deployment guide's nginx and Varnish configurations with their
ports and paths replaced.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, String, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ROOT = Path(__file__).resolve().parents[1]
ROWS = 12
EPOCH = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


class Base(DeclarativeBase):
    pass


class Article(Base):
    __tablename__ = "articles"
    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(200), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    published: Mapped[bool]
    updated_at: Mapped[datetime] = mapped_column(index=True)


class Product(Base):
    __tablename__ = "products"
    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(200), unique=True)
    photo_url: Mapped[str] = mapped_column(String(200))
    gallery: Mapped[str] = mapped_column(String(400))
    thumb: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(100))
    summary: Mapped[str] = mapped_column(String(400))
    mp4: Mapped[str] = mapped_column(String(200))
    published_at: Mapped[datetime]


def _rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    articles = [
        {
            "id": n,
            "slug": f"article-{n}",
            "title": f"Article {n}",
            "published": n % 4 != 0,
            "updated_at": (EPOCH + timedelta(hours=n)).replace(tzinfo=None),
        }
        for n in range(1, ROWS + 1)
    ]
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    products = [
        {
            "id": n,
            "slug": f"product-{n}",
            "photo_url": f"https://example.com/img/{n}.jpg",
            "gallery": f"https://cdn.example.com/{n}/a.jpg https://cdn.example.com/{n}/b.jpg",
            "thumb": f"https://example.com/thumb/{n}.jpg",
            "title": f"Product {n}",
            "summary": f"All about product {n}.",
            "mp4": f"https://example.com/video/{n}.mp4",
            "published_at": now - timedelta(hours=n),
        }
        for n in range(1, ROWS + 1)
    ]
    return articles, products


def seed(engine: Engine) -> Engine:
    """The tables of ``Article`` and ``Product`` with a few rows (once per database)."""
    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        if conn.execute(select(Article.id).limit(1)).first() is None:
            articles, products = _rows()
            conn.execute(insert(Article), articles)
            conn.execute(insert(Product), products)
    return engine


async def aseed(engine: AsyncEngine) -> AsyncEngine:
    """:func:`seed` through an ``AsyncEngine``."""
    async with engine.connect() as conn:
        await conn.run_sync(lambda sync: seed(sync.engine))
    return engine


@dataclass
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


def fetch(
    app: Any,
    path: str,
    *,
    host: str = "example.com",
    lifespan: bool = True,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """One GET of ``path`` from a WSGI app, or an ASGI app (inside its lifespan unless
    ``lifespan=False``)."""
    if hasattr(app, "wsgi_app") or _is_wsgi(app):
        from werkzeug.test import Client

        response = Client(app).get(path, headers={"Host": host, **(headers or {})})
        body = response.get_data()
        response.close()
        return Reply(response.status_code, {k.lower(): v for k, v in response.headers}, body)
    from starlette.testclient import TestClient

    client = TestClient(app, base_url=f"http://{host}")
    if not lifespan:
        answer = client.get(path, headers=headers)
    else:
        with client:
            answer = client.get(path, headers=headers)
    return Reply(answer.status_code, dict(answer.headers), answer.content)


def _is_wsgi(app: Any) -> bool:
    import inspect

    from sitemap_middleware import SitemapWSGIApp, SitemapWSGIMiddleware

    if isinstance(app, SitemapWSGIMiddleware | SitemapWSGIApp):
        return True
    call = app if inspect.isfunction(app) else getattr(app, "__call__", None)  # noqa: B004
    try:
        parameters = inspect.signature(call).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return len(parameters) == 2 and not inspect.iscoroutinefunction(call)


# A Django project of the shape the README's Django snippets assume: ``mysite`` (settings,
# urls, a plain wsgi.py) and ``shop`` (an ``Article`` model, ``django.contrib.sitemaps``
# classes in ``SITEMAPS``). A settings snippet written to ``mysite/snippet.py`` is applied
# after the project's own settings; ``...`` in one of its lists stands for the project's
# entries, as in the README.
DJANGO_FILES = {
    "mysite/__init__.py": "",
    "mysite/settings.py": """
        from pathlib import Path

        BASE_DIR = Path(__file__).resolve().parent.parent
        SECRET_KEY = "docs"
        DEBUG = False
        ALLOWED_HOSTS = ["*"]
        USE_TZ = True
        ROOT_URLCONF = "mysite.urls"
        DATABASES = {
            "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}
        }
        PROJECT_APPS = ["django.contrib.contenttypes", "django.contrib.sitemaps", "shop"]
        PROJECT_MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
        INSTALLED_APPS = PROJECT_APPS
        MIDDLEWARE = PROJECT_MIDDLEWARE
        try:
            from mysite.snippet import *  # noqa: F403
        except ModuleNotFoundError as exc:
            if exc.name != "mysite.snippet":
                raise


        def _expand(entries, project):
            return [e for entry in entries for e in (project if entry is ... else [entry])]


        INSTALLED_APPS = _expand(INSTALLED_APPS, PROJECT_APPS)
        MIDDLEWARE = _expand(MIDDLEWARE, PROJECT_MIDDLEWARE)
    """,
    "mysite/urls.py": """
        from django.http import HttpResponse
        from django.urls import path


        def article(request, slug):
            return HttpResponse(slug)


        urlpatterns = [path("articles/<slug>", article)]
    """,
    "mysite/wsgi.py": """
        import os

        from django.core.wsgi import get_wsgi_application

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
        application = get_wsgi_application()
    """,
    "shop/__init__.py": "",
    "shop/models.py": """
        from django.db import models


        class Article(models.Model):
            slug = models.SlugField(unique=True)
            published = models.BooleanField(default=True)
            updated_at = models.DateTimeField()
            priority = models.FloatField(default=0.5)
            image = models.URLField(default="https://example.com/img/a.jpg")

            class Meta:
                app_label = "shop"
    """,
    "shop/sitemaps.py": """
        from django.contrib.sitemaps import Sitemap

        from shop.models import Article


        class ArticleSitemap(Sitemap):
            changefreq = "weekly"

            def items(self):
                return Article.objects.filter(published=True).order_by("pk")

            def location(self, item):
                return f"/articles/{item.slug}"

            def lastmod(self, item):
                return item.updated_at


        class PageSitemap(Sitemap):
            def items(self):
                return ["/", "/about"]

            def location(self, item):
                return item


        SITEMAPS = {"articles": ArticleSitemap, "pages": PageSitemap}
    """,
}

# Run in the project's folder by :func:`django_get`: the app named on the command line is
# imported (which sets Django up), the tables are made and filled, and each path is fetched
# through a real WSGI server (wsgiref, with its PEP 3333 validator) on 127.0.0.1.
_DJANGO_SERVE = """
import http.client, importlib, json, os, sys, threading
from datetime import UTC, datetime, timedelta
from wsgiref.simple_server import WSGIRequestHandler, make_server
from wsgiref.validate import validator

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
module, _, attr = sys.argv[1].partition(":")
app = getattr(importlib.import_module(module), attr)
import django
from django.apps import apps
from django.db import connection
django.setup()
from shop.models import Article
if Article._meta.db_table not in connection.introspection.table_names():
    with connection.schema_editor() as editor:
        for model in apps.get_models():
            editor.create_model(model)
    epoch = datetime(2024, 5, 1, tzinfo=UTC)
    Article.objects.bulk_create(
        Article(slug=f"article-{n}", published=n % 4 != 0, updated_at=epoch + timedelta(hours=n))
        for n in range(1, 13)
    )

class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass

server = make_server("127.0.0.1", 0, validator(app), handler_class=Quiet)
# Polled every 10 ms, as tests/threaded.py polls: serve_forever's default, half a second,
# is what the shutdown below would wait (this script cannot import the tests).
threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
replies = []
for path in sys.argv[2:]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
    conn.request("GET", path, headers={"Host": "example.com"})
    response = conn.getresponse()
    replies.append([response.status, dict(response.getheaders()), response.read().decode()])
    conn.close()
server.shutdown()
close = getattr(app, "close", None)
if close is not None:
    close()
print(json.dumps(replies))
"""


def django_project(folder: str | Path) -> Path:
    """A new Django project (``mysite`` and ``shop``) in ``folder``; its path."""
    project = Path(folder).resolve()
    for name, text in DJANGO_FILES.items():
        target = project / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
    return project


def django_get(project: Path, app: str, *paths: str) -> list[Reply]:
    """GET each path from the WSGI app ``module:attr`` of ``project``, served by wsgiref in a
    new Python process (Django's settings are those of the project's ``mysite``)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(project),
        "DJANGO_SETTINGS_MODULE": "mysite.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", _DJANGO_SERVE, app, *paths],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise AssertionError(f"{app} in {project} failed:\n{done.stderr[-4000:]}")
    replies = json.loads(done.stdout.splitlines()[-1])
    return [Reply(status, headers, body.encode()) for status, headers, body in replies]


# The deployment guide's nginx configuration, as written but for its ports and paths: the
# only lines a test may change, each of which must occur exactly once.
DEPLOYMENT = ROOT / "docs" / "deployment.md"
_NGINX_BLOCK = re.compile(r"^```nginx\n(.*?)^```", re.MULTILINE | re.DOTALL)


def deployment_nginx() -> str:
    """The one ``nginx`` block of docs/deployment.md."""
    [config] = _NGINX_BLOCK.findall(DEPLOYMENT.read_text())
    return str(config)


def nginx_config(config: str, *, cache: Path, replicas: tuple[int, int], listen: int) -> str:
    """``config`` with the cache folder, the replicas' ports and a ``listen`` on 127.0.0.1."""
    replacements = {
        "/var/cache/nginx/sitemaps": str(cache),
        "127.0.0.1:8001": f"127.0.0.1:{replicas[0]}",
        "127.0.0.1:8002": f"127.0.0.1:{replicas[1]}",
        "# ... listen, server_name, TLS ...": f"listen 127.0.0.1:{listen};",
    }
    for old, new in replacements.items():
        if config.count(old) != 1:
            raise AssertionError(f"docs/deployment.md's nginx block should hold {old!r} once")
        config = config.replace(old, new)
    return config


# The deployment guide's VCL, likewise: only the replicas' ports and the host the probe names.
_VCL_BLOCK = re.compile(r"^```vcl\n(.*?)^```", re.MULTILINE | re.DOTALL)


def deployment_vcl() -> str:
    """The one ``vcl`` block of docs/deployment.md."""
    [config] = _VCL_BLOCK.findall(DEPLOYMENT.read_text())
    return str(config)


def vcl_config(config: str, *, replicas: tuple[int, int], probe_host: str) -> str:
    """``config`` with the replicas' ports and the host of the probe's request."""
    replacements = {
        '.port = "8001";': f'.port = "{replicas[0]}";',
        '.port = "8002";': f'.port = "{replicas[1]}";',
        '"Host: www.example.com"': f'"Host: {probe_host}"',
    }
    for old, new in replacements.items():
        if config.count(old) != 1:
            raise AssertionError(f"docs/deployment.md's vcl block should hold {old!r} once")
        config = config.replace(old, new)
    return config


# The applications the README's ``render`` commands name, beside the Django project.
RENDER_APPS = {
    "main.py": textwrap.dedent(
        """
        from fastapi import FastAPI
        from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select
        from sitemap_middleware import SitemapMiddleware, SQLAlchemySource

        engine = create_engine("sqlite:///site.sqlite3")
        table = Table(
            "articles", MetaData(), Column("id", Integer, primary_key=True), Column("slug", String)
        )
        articles = SQLAlchemySource(
            select(table.c.id, table.c.slug), engine, name="articles", loc="/articles/{slug}"
        )


        def create_app():
            app = FastAPI()
            app.add_middleware(
                SitemapMiddleware, base_url="https://example.com/", sources=[articles]
            )
            return app


        app = create_app()
        """
    ),
    "flask_app.py": textwrap.dedent(
        """
        from flask import Flask
        from mysite.main import articles
        from sitemap_middleware import SitemapWSGIMiddleware

        app = Flask(__name__)
        app.wsgi_app = SitemapWSGIMiddleware(
            app.wsgi_app, base_url="https://example.com/", sources=[articles], html=True
        )
        """
    ),
    "wsgi.py": textwrap.dedent(
        """
        import os

        from django.core.wsgi import get_wsgi_application
        from sitemap_middleware import SitemapWSGIMiddleware

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
        django_application = get_wsgi_application()

        from mysite.main import articles  # noqa: E402

        application = SitemapWSGIMiddleware(
            django_application, base_url="https://example.com/", sources=[articles]
        )
        """
    ),
}
