"""System checks (``manage.py check``): a wrong ``SITEMAP_MIDDLEWARE`` is reported before the
first request, with the setting named, and so is a middleware that would rewrite the
sitemap's answers on their way out, and each route that no source covers (route coverage,
:mod:`.routes`: loc templates and lists in memory only, no database query)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from ...core.sites import Sites
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


def check_routes(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Each route of the URLconf that no source covers, unless excluded (``W002``).

    Only what needs no query is read: the sources' loc templates (``DjangoSource``'s,
    SQLAlchemy's) and the locs of lists held in memory (``IterableSource([...])``); a
    route covered only by the rows of a query or a generator is covered for
    ``manage.py sitemap_routes``, which reads them, not for this check.
    """
    if getattr(settings, SETTING, None) is None:
        return []
    from ...sources.coverage import SourceView, classify, loc_templates, memory_locs
    from .routes import EXCLUDED_SETTING, django_routes, excluded_globs

    try:
        sitemap = configured().served()
    except ImproperlyConfigured:
        return []  # check_setting reports it
    if isinstance(sitemap, Sites):
        return []  # a sitemap per host: its sources are known per request
    base_url = sitemap.site.base_url
    views = [
        SourceView(source.name, loc_templates(source), memory_locs(source), base_url)
        for source in sitemap.sources
    ]
    rows = classify(
        django_routes(),
        views,
        excluded_globs(),
        lambda path: sitemap.routes.match(path) is not None,
    )
    warnings = []
    for row in rows:
        if not row.uncovered:
            continue
        path = row.route.path
        add = (
            f"list it in a source, e.g. IterableSource([{path!r}], name='static')"
            if row.route.parameterless
            else "add a source whose loc template is the route's"
        )
        warnings.append(
            Warning(
                f"The route {path} ({row.route.name}) is in no sitemap: no source's loc "
                "template maps onto it and no listed URL matches it.",
                hint=f"{add[0].upper()}{add[1:]}; or mark its view with @not_in_sitemap, or list "
                f"a glob matching it in {EXCLUDED_SETTING}.",
                obj=path,
                id="sitemap_middleware.W002",
            )
        )
    return warnings


def register_checks() -> None:
    """Registered by the app's ``ready()`` (``INSTALLED_APPS``)."""
    register(check_setting)
    register(check_order)
    register(check_routes, Tags.urls)
