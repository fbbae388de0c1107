"""A replica of the example site as docs/deployment.md runs it behind nginx, for
``uvicorn tests.nginx_replica:app --root-path /shop``: the environment of
``python -m example_app`` (``EXAMPLE_DB``, ``EXAMPLE_ROWS``, ``BASE_URL``), and the host
names it answers for in ``ALLOWED_HOSTS`` (comma-separated; the middleware's
``allowed_hosts``)."""

from __future__ import annotations

import os

from example_app.app import create_app
from example_app.site import Config

config = Config.from_environment()
app = create_app(
    config.db_path,
    config.rows,
    config.base_url,
    allowed_hosts=[host for host in os.environ.get("ALLOWED_HOSTS", "").split(",") if host],
)
