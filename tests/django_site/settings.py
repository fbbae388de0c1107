"""Settings of the in-process Django tests: one project for every test module.

``default`` is a SQLite file in a temporary folder of its own; ``postgres`` is the server
``SITEMAP_TEST_POSTGRES`` names (psycopg 3), in a schema of this process's own, when set.
Tables are created by ``tests.django_setup``.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from urllib.parse import unquote, urlsplit

FOLDER = tempfile.mkdtemp(
    prefix="sitemap-django-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
)
SECRET_KEY = "sitemap-middleware-tests"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "UTC"
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "German"), ("fr", "French")]
ROOT_URLCONF = "tests.django_site.urls"
MIDDLEWARE: list[str] = []
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.sitemaps",
    "sitemap_middleware.contrib.django",
    "tests.django_site.shop",
]
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES: dict[str, dict[str, object]] = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(FOLDER, "site.sqlite3"),
    },
    # The reference model test's table (tests/e2e/test_model.py empties it for each history).
    "model": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(FOLDER, "model.sqlite3"),
    },
}

POSTGRES_SCHEMA = f"django_{uuid.uuid4().hex[:12]}"
# As tests/postgres.py: the tests that read it skip (or fail in CI) when no server answers.
_postgres = (
    os.environ.get("SITEMAP_TEST_POSTGRES")
    or "postgresql://sitemap:sitemap@127.0.0.1:54329/sitemap_test"
)
if _postgres:
    _url = urlsplit(_postgres)
    DATABASES["postgres"] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/"),
        "USER": unquote(_url.username or ""),
        "PASSWORD": unquote(_url.password or ""),
        "HOST": _url.hostname or "127.0.0.1",
        "PORT": str(_url.port or 5432),
        "OPTIONS": {"options": f"-c search_path={POSTGRES_SCHEMA}"},
    }
    # The reference model test's schema (set by tests/e2e/test_model.py).
    DATABASES["model_pg"] = {**DATABASES["postgres"], "OPTIONS": {}}
