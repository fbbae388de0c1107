"""Run the example site on Django: ``python -m example_app.django_app``.

The same environment as ``python -m example_app`` (``EXAMPLE_DB``, ``EXAMPLE_ROWS``,
``HOST``, ``PORT``, ``BASE_URL``, ``ROOT_PATH``), the same seeded database, pages and
sitemap bytes. Django's ASGI handler under uvicorn; the settings are
``example_app.django_app.settings`` (``manage.py``-style commands work with
``DJANGO_SETTINGS_MODULE=example_app.django_app.settings``: ``python -m django
sitemap_check``). A bad ``BASE_URL`` stops it at start with the reason.
"""

from __future__ import annotations

import logging
import os
import sys

import uvicorn
from sqlalchemy import create_engine


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "example_app.django_app.settings"  # its own
    import django
    from django.core.checks import run_checks
    from django.core.handlers.asgi import ASGIHandler

    from ..db import seed
    from ..site import Config

    config = Config.from_environment()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    engine = create_engine(f"sqlite:///{config.db_path}", connect_args={"timeout": 60})
    try:
        seed(engine, config.rows)  # the same rows as the other variants
    finally:
        engine.dispose()
    django.setup()
    errors = [message for message in run_checks() if message.is_serious()]
    if errors:  # a bad BASE_URL: the system check names SITEMAP_MIDDLEWARE['base_url']
        sys.exit(f"example_app.django_app cannot start: {errors[0].msg}")
    app = ASGIHandler()
    print(
        f"Serving {config.base_url} (sitemap: {config.base_url}sitemap.xml) with Django, "
        f"database {config.db_path}"
    )
    uvicorn.run(
        app, host=config.host, port=config.port, root_path=config.root_path, log_level="info"
    )


if __name__ == "__main__":
    main()
