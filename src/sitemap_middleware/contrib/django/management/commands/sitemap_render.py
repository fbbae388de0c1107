"""``manage.py sitemap_render --out DIR``: the project's sitemaps written to static files,
byte for byte what it serves, with the options and exit statuses of ``sitemap-middleware
render`` (0 written, 1 a document failed and nothing was written, 2 a usage error)."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from .....cli.main import RENDER_DESCRIPTION, add_render_options, render_command

APPLICATION = "sitemap_middleware.contrib.django.project:wsgi_application"


class Command(BaseCommand):  # type: ignore[misc]  # Django ships no types
    help = RENDER_DESCRIPTION.split("\n\n")[0].replace("\n", " ")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_render_options(parser, app=False)

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = argparse.Namespace(
            **options, app=APPLICATION, factory=True, interface="wsgi", app_dir="."
        )
        status = render_command(namespace, self.stdout, self.stderr)
        if status:
            raise SystemExit(status)
