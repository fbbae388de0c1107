"""``manage.py sitemap_check [URL]``: the project's sitemap checked as a crawler reads it,
with the options and exit statuses of ``sitemap-middleware check`` (0 every check passes,
1 one fails, 2 a usage error or a document that could not be fetched, 3 the indexability
audit, ``--audit-indexable``, finds URLs that are not indexable). Without URL it
checks the sitemap ``SITEMAP_MIDDLEWARE`` describes in-process, through Django's ASGI
handler: no server needed; with ``'sites'``, that of the host ``--host`` names."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from .....cli.loader import LoadError, host_root_url
from .....cli.main import USAGE_ERROR, add_check_options, check_command
from ...conf import configured
from ...project import asgi_application, root_url


class Command(BaseCommand):  # type: ignore[misc]  # Django ships no types
    help = (
        "Check the sitemap (and every sitemap its index lists) as a crawler would: XML, "
        "schema, limits, scope, duplicates, lastmods, headers and conditional requests. "
        "Without URL, the project's own sitemap is checked in-process."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "url",
            metavar="URL",
            nargs="?",
            help="the sitemap to fetch over the network (default: the project's, in-process)",
        )
        add_check_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        import httpx

        from .....cli.app_transport import ServerDate

        transport = None
        if options["url"] is None:
            application = asgi_application()
            host = options.get("host")
            try:
                options["url"] = _root_url(application, host)
            except LoadError as exc:
                self.stderr.write(f"sitemap-middleware check: {exc}")
                raise SystemExit(USAGE_ERROR) from exc
            # In-process, no server writes the Date: the transport does, as one would.
            transport = ServerDate(httpx.ASGITransport(app=application))
        namespace = argparse.Namespace(**options)
        status = check_command(namespace, self.stdout, self.stderr, transport)
        if status:
            raise SystemExit(status)


def _root_url(application: Any, host: str | None) -> str:
    """The root sitemap's public URL; with ``'sites'``, that of the site of ``host`` (the
    resolver asked as a request would ask it)."""
    if host is not None:
        import anyio

        return anyio.run(host_root_url, application, host)
    if configured().sites is not None:
        raise LoadError(
            "--host: SITEMAP_MIDDLEWARE gives a sitemap per host ('sites'); name the host "
            "whose sitemap to check, e.g. --host shop.example.com"
        )
    return root_url()
