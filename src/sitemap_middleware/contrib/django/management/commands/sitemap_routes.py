"""``manage.py sitemap_routes``: the project's ``GET`` routes and, for each, the source of
``SITEMAP_MIDDLEWARE`` that covers it, with the options and exit statuses of
``sitemap-middleware routes`` (0 every route covered or excluded, 1 one is not, 2 a usage
error). Unlike the system check, it reads the first locs of every source (a query each)."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand

from .....cli.main import ROUTES_DESCRIPTION, add_routes_options


class Command(BaseCommand):  # type: ignore[misc]  # Django ships no types
    help = ROUTES_DESCRIPTION.split("\n\n")[0].replace("\n", " ")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_routes_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        import anyio

        from .....cli.routes import report_routes
        from ...conf import configured
        from ...routes import django_routes, excluded_globs

        try:
            sitemap = configured().sitemap()
        except ImproperlyConfigured as exc:  # not set, wrong, or a sitemap per host
            self.stderr.write(f"sitemap_routes: {exc}")
            raise SystemExit(2) from exc
        exclude = [*excluded_globs(), *options["exclude"]]
        status = anyio.run(
            report_routes,
            django_routes(),
            [sitemap],
            exclude,
            options["sample"],
            options["json"],
            self.stdout,
        )
        if status:
            raise SystemExit(status)
