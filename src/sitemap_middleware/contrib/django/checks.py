"""System checks (``manage.py check``): a wrong ``SITEMAP_MIDDLEWARE`` is reported before the
first request, with the setting named, and so is a middleware that would rewrite the
sitemap's answers on their way out."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from .conf import SETTING, configured

MIDDLEWARE = (
    "sitemap_middleware.contrib.django.SitemapMiddleware",
    "sitemap_middleware.contrib.django.middleware.SitemapMiddleware",
)
REWRITING = {
    "django.middleware.gzip.GZipMiddleware": "compresses its answers a second time",
    "django.middleware.http.ConditionalGetMiddleware": "replaces its ETag",
}
"""Middleware that change a response's bytes or validators, when listed before ours."""


def installed_at() -> int | None:
    """The middleware's place in ``settings.MIDDLEWARE``, if it is there."""
    listed = list(getattr(settings, "MIDDLEWARE", None) or ())
    return next((i for i, path in enumerate(listed) if path in MIDDLEWARE), None)


def check_setting(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``SITEMAP_MIDDLEWARE`` builds a sitemap (when set, or when the middleware is used)."""
    if installed_at() is None and getattr(settings, SETTING, None) is None:
        return []
    try:
        configured().served()
    except ImproperlyConfigured as exc:
        return [
            Error(
                str(exc),
                hint=f"See the README's Django section for the keys of {SETTING}.",
                obj=SETTING,
                id="sitemap_middleware.E001",
            )
        ]
    return []


def check_order(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """No middleware that rewrites answers is listed before the sitemap's."""
    position = installed_at()
    if position is None:
        return []
    return [
        Warning(
            f"{path} is listed before {MIDDLEWARE[0]} in MIDDLEWARE: it {what}.",
            hint=f"List {MIDDLEWARE[0]} first in MIDDLEWARE.",
            obj="MIDDLEWARE",
            id="sitemap_middleware.W001",
        )
        for path, what in REWRITING.items()
        if path in list(settings.MIDDLEWARE)[:position]
    ]


def register_checks() -> None:
    """Registered by the app's ``ready()`` (``INSTALLED_APPS``)."""
    register(check_setting)
    register(check_order)
