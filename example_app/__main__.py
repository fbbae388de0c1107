"""Run the example site: ``python -m example_app``.

Environment: ``EXAMPLE_DB`` (SQLite file, default ``example.sqlite3``),
``EXAMPLE_ROWS`` (articles, default 1,000; the table is re-seeded when its row
count differs), ``HOST`` / ``PORT`` (default 127.0.0.1:8000) and ``BASE_URL``
(the public URL, default ``http://HOST:PORT/``).

One sitemap holds at most 50,000 URLs. With more published articles than that
the middleware answers ``/sitemap.xml`` with a 500 and logs why (it never
serves a sitemap over the limit or a silently truncated one); the rest of the
site keeps working.
"""

from __future__ import annotations

import logging
import os

import uvicorn

from .app import create_app
from .db import article_rows

LIMIT = 50_000


def main() -> None:
    db_path = os.environ.get("EXAMPLE_DB", "example.sqlite3")
    rows = int(os.environ.get("EXAMPLE_ROWS", "1000"))
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    base_url = os.environ.get("BASE_URL", f"http://{host}:{port}/")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    published = sum(1 for row in article_rows(rows) if row["published"]) + 3
    if published > LIMIT:
        logging.warning(
            "%d URLs exceed the %d a single sitemap may hold: /sitemap.xml will answer 500 "
            "until the data is split (the rest of the site is served as usual)",
            published,
            LIMIT,
        )
    app = create_app(db_path, rows, base_url)
    print(f"Serving {base_url} (sitemap: {base_url}sitemap.xml), database {db_path}")
    uvicorn.run(app, host=host, port=port, log_level="info")


if __name__ == "__main__":
    main()
