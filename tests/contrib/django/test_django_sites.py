"""``sites=`` under Django: the setting, and sites from ``django.contrib.sites``.

The sites framework is not installed in the tests' Django project (installing it changes
what Django's own views answer in the other tests): the project that uses it runs in a
Python process of its own, with its own settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.wsgi import WSGIHandler
from django.test import override_settings

from sitemap_middleware import SiteConfig

from ...adapters import MIDDLEWARE, call
from ...django_setup import setup
from ...uvicorn_process import pythonpath

pytestmark = pytest.mark.anyio


def site(host: str, *paths: str) -> SiteConfig:
    return SiteConfig(base_url=f"https://{host}/", sources=list(paths))


SITES = {"a.example": site("a.example", "/one"), "b.example": site("b.example", "/two")}


async def test_the_setting_takes_sites_a_resolver_or_its_dotted_path() -> None:
    setup()
    for kind in (WSGIHandler, ASGIHandler):
        for sites in (SITES, SITES.get, f"{__name__}.SITES"):
            with override_settings(MIDDLEWARE=[MIDDLEWARE], SITEMAP_MIDDLEWARE={"sites": sites}):
                handler = kind()
            wsgi = kind is WSGIHandler
            a = await call(handler, wsgi=wsgi, headers={"host": "a.example"})
            b = await call(handler, wsgi=wsgi, headers={"host": "b.example"})
            other = await call(handler, wsgi=wsgi, headers={"host": "c.example"})
            assert a.status == 200 and b"https://a.example/one" in a.body
            assert b"two" not in a.body
            assert b.status == 200 and b"https://b.example/two" in b.body
            assert other.status == 404 and other.headers["cache-control"] == "no-store"


def test_a_wrong_sites_setting_stops_the_handler() -> None:
    setup()
    for setting, message in (
        (
            {"sites": SITES, "sources": ["/"]},
            r"^SITEMAP_MIDDLEWARE\['sites'\]: give 'sources' or 'sites', not both",
        ),
        (
            {"sites": SITES, "base_url": "https://a.example/"},
            r"^SITEMAP_MIDDLEWARE\['base_url'\]: not a setting beside sites=",
        ),
        (
            {"sites": {"x.example": site("a.example", "/")}},
            r"^SITEMAP_MIDDLEWARE\['sites'\]\['x.example'\]: the key must be the host",
        ),
        (
            {"sites": {"a.example": SiteConfig(base_url="https://a.example/", sources=42)}},
            r"^SITEMAP_MIDDLEWARE\['sites'\]\['a.example'\]\.items: ",
        ),
        (
            {"sites": SITES, "tenants": {"ttl": -1}},
            r"^SITEMAP_MIDDLEWARE\['tenants'\]\['ttl'\]: must be",
        ),
        ({"sites": "tests.nowhere.sites"}, r"^SITEMAP_MIDDLEWARE\['sites'\]: cannot import"),
    ):
        with (
            override_settings(MIDDLEWARE=[MIDDLEWARE], SITEMAP_MIDDLEWARE=setting),
            pytest.raises(ImproperlyConfigured, match=message),
        ):
            WSGIHandler()


# --- django.contrib.sites, in a project of its own --------------------------------------------

PROJECT = {
    "tenantsite/__init__.py": "",
    "tenantsite/settings.py": """
        SECRET_KEY = "x"
        DEBUG = False
        ALLOWED_HOSTS = ["*"]
        ROOT_URLCONF = "tenantsite.urls"
        USE_TZ = True
        INSTALLED_APPS = [
            "django.contrib.contenttypes",
            "django.contrib.sites",
            "django.contrib.sitemaps",
        ]
        TEMPLATES = [
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ]
        DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
        MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
        SITEMAP_MIDDLEWARE = {"sites": "tenantsite.sitemaps.sites", "path": "/sitemap.xml"}
    """,
    "tenantsite/sitemaps.py": """
        from django.contrib.sitemaps import Sitemap

        from sitemap_middleware.contrib.django.sites import sites_from_django


        class Pages(Sitemap):
            changefreq = "weekly"

            def items(self):
                return ["about", "contact"]

            def location(self, item):
                return f"/{item}/"


        class Accounts(Pages):
            priority = 0.3

            def items(self):
                return ["login"]


        SITEMAPS = {"pages": Pages, "accounts": Accounts}
        sites = sites_from_django(SITEMAPS, protocol="http")
    """,
    "tenantsite/urls.py": """
        from django.contrib.sitemaps import views
        from django.urls import path

        from tenantsite.sitemaps import SITEMAPS

        urlpatterns = [
            path("django.xml", views.sitemap, {"sitemaps": SITEMAPS}),
        ]
    """,
}

SCRIPT = """
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "tenantsite.settings"
import django
django.setup()
from django.apps import apps
from django.db import connection
from django.contrib.sites.models import Site
with connection.schema_editor() as editor:
    for model in apps.get_models():
        editor.create_model(model)
Site.objects.all().delete()
Site.objects.create(domain="one.example", name="one")
Site.objects.create(domain="two.example:8000", name="two")
from django.test import Client
results = {}
for host in ("one.example", "two.example:8000", "three.example"):
    client = Client(HTTP_HOST=host)
    ours = [
        client.get(path)
        for path in ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-accounts-1.xml")
    ]
    # Django's view raises for a Host that is no Site's domain: not asked then.
    theirs = client.get("/django.xml") if host != "three.example" else ours[0]
    results[host] = [
        [answer.status_code for answer in ours],
        [
            b"".join(answer.streaming_content if answer.streaming else [answer.content]).decode()
            for answer in ours
        ],
        theirs.status_code,
        theirs.content.decode(),
    ]
print(json.dumps(results))
"""


def locs(xml: str) -> set[str]:
    from lxml import etree

    root = etree.fromstring(xml.encode())
    return {e.text or "" for e in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")}


def run_project(folder: Path) -> dict[str, Any]:
    for name, text in PROJECT.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), pythonpath()])}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_sites_from_django_list_what_djangos_view_lists_for_each_site(tmp_path: Path) -> None:
    results = run_project(tmp_path)
    for host in ("one.example", "two.example:8000"):
        statuses, (index, pages, accounts), their_status, theirs = results[host]
        assert statuses == [200, 200, 200] and their_status == 200, (host, results[host])
        assert f"<loc>http://{host}/sitemap-pages-1.xml</loc>" in index
        expected = {f"http://{host}/about/", f"http://{host}/contact/", f"http://{host}/login/"}
        assert locs(theirs) == expected  # what Django's view lists for this Site
        assert locs(pages) | locs(accounts) == expected
    assert results["three.example"][0] == [404, 404, 404]
