"""Settings of the example site on Django, from the example's environment variables
(``EXAMPLE_DB``, ``HOST``, ``PORT``, ``BASE_URL``: see :class:`example_app.site.Config`)."""

from __future__ import annotations

from ..site import Config

config = Config.from_environment()

SECRET_KEY = "example-app-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "UTC"
ROOT_URLCONF = "example_app.django_app.urls"
INSTALLED_APPS = ["sitemap_middleware.contrib.django", "example_app.django_app"]
# The sitemap first: no middleware between it and the server rewrites its answers.
MIDDLEWARE = ["sitemap_middleware.contrib.django.SitemapMiddleware"]
SITEMAP_MIDDLEWARE = {
    "sources": "example_app.django_app.sitemaps.sources",
    "base_url": config.base_url,
    "html": True,  # the human view: /sitemap.html beside /sitemap.xml
}
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": config.db_path,
        "OPTIONS": {"timeout": 60},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
