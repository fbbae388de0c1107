"""A Django project for the subprocess tests of the middleware's settings, system checks and
management commands: the tests' project (:mod:`tests.django_site`) with the middleware in
``MIDDLEWARE`` and ``SITEMAP_MIDDLEWARE`` naming :func:`sources`. The environment can
change the setting: ``SITEMAP_TEST_SETTING`` (a Python literal merged into it) and
``SITEMAP_TEST_MIDDLEWARE`` (the ``MIDDLEWARE`` list, comma-separated)."""

from __future__ import annotations

import ast
import os
from datetime import UTC, datetime, timedelta

from sitemap_middleware import Entry, IterableSource, Limits, SiteConfig
from tests.django_site.settings import *  # noqa: F403

ROWS = 120


def sources() -> list[IterableSource]:
    """Pages with lastmods (max_urls 50: an index of three pages), built when apps are ready."""
    start = datetime(2024, 5, 1, tzinfo=UTC)
    entries = [Entry(f"/pages/{i}", start + timedelta(hours=i)) for i in range(ROWS)]
    return [IterableSource(entries, name="pages")]


MIDDLEWARE = os.environ.get(
    "SITEMAP_TEST_MIDDLEWARE", "sitemap_middleware.contrib.django.SitemapMiddleware"
).split(",")
MIDDLEWARE = [path for path in MIDDLEWARE if path]
SITEMAP_MIDDLEWARE = {
    "sources": "tests.django_commands.sources",
    "base_url": "https://example.com/",
    "limits": Limits(max_urls=50),
    **ast.literal_eval(os.environ.get("SITEMAP_TEST_SETTING", "{}")),
}
if os.environ.get("SITEMAP_TEST_SITES"):  # a sitemap per host: site_for's
    SITEMAP_MIDDLEWARE = {"sites": "tests.django_commands.site_for", "limits": Limits(max_urls=50)}

SITE_HOSTS = ("one.example", "two.example")


def site_sources(host: str) -> list[IterableSource]:
    """A site's pages: those of :func:`sources`, under a path of the host's own."""
    start = datetime(2024, 5, 1, tzinfo=UTC) + timedelta(days=SITE_HOSTS.index(host))
    name = host.split(".")[0]
    entries = [Entry(f"/{name}/{i}", start + timedelta(hours=i)) for i in range(ROWS)]
    return [IterableSource(entries, name="pages")]


def site_for(host: str) -> SiteConfig | None:
    """The resolver of ``SITEMAP_TEST_SITES``: one.example and two.example."""
    if host not in SITE_HOSTS:
        return None
    return SiteConfig(base_url=f"https://{host}/", sources=site_sources(host))


def broken() -> object:
    """A source whose rows fail after the first page's worth: no document of it completes."""

    def pages() -> object:
        for i in range(ROWS):
            if i == 60:
                raise RuntimeError("disk I/O error")
            yield f"/pages/{i}"

    return pages
