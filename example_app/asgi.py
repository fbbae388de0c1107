"""The example site's configured ASGI application, built from the same environment as
``python -m example_app`` (see its docstring): ``uvicorn example_app.asgi:app``,
``sitemap-middleware render --app example_app.asgi:app --out public/`` and
``sitemap-middleware indexnow --app example_app.asgi:app --once`` all use it."""

from __future__ import annotations

from .app import create_app
from .site import Config

config = Config.from_environment()
app = create_app(config.db_path, config.rows, config.base_url, **config.options)
