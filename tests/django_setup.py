"""Django, configured once per process with ``tests.django_site.settings``, and its tables.

Every in-process Django test calls :func:`setup` (Django can be configured only once per
process) and :func:`database` for the alias it reads: the tables of the installed apps are
created there on first use (SQLite: the settings' temporary file; PostgreSQL: a schema of
this process's own, dropped at exit; skipped, or failed in CI, without a server).
"""

from __future__ import annotations

import atexit
import os
import threading

import django
from django.apps import apps
from django.conf import settings
from django.db import connections

SETTINGS = "tests.django_site.settings"
_lock = threading.Lock()
_ready: set[str] = set()


def setup() -> None:
    """Configure Django from the tests' settings module, once."""
    with _lock:
        if not settings.configured:
            os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
        if os.environ.get("DJANGO_SETTINGS_MODULE") != SETTINGS:
            raise RuntimeError(f"Django is configured by another module, not {SETTINGS}")
        if not apps.ready:
            django.setup()


def database(alias: str = "default") -> str:
    """The alias, with the tables of every installed app's models created there once."""
    setup()
    if alias == "postgres":
        from .postgres import server_url

        server_url()  # skips, or fails with SITEMAP_REQUIRE_POSTGRES=1, without a server
    with _lock:
        if alias not in _ready:
            _create_tables(alias)
            _ready.add(alias)
    return alias


def _create_tables(alias: str) -> None:
    connection = connections[alias]
    if connection.vendor == "postgresql":
        _create_schema(alias)
    with connection.schema_editor() as editor:
        for model in apps.get_models():
            if model._meta.managed and not model._meta.proxy:
                editor.create_model(model)


def _create_schema(alias: str) -> None:
    import psycopg

    schema = settings.POSTGRES_SCHEMA
    params = connections[alias].get_connection_params()
    params.pop("options", None)
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")

    def drop() -> None:
        connections[alias].close()
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    atexit.register(drop)
