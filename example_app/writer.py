"""Edit an article of the example site as its application would, and purge the cache's copies
of what lists it: ``python -m example_app.writer SLUG``.

The environment of ``python -m example_app`` (``EXAMPLE_DB``, ``EXAMPLE_SITES``, ``HOST``,
``PORT``, ``BASE_URL``, ``EXAMPLE_PURGE_URL``). The article's ``updated_at`` becomes now; with
``EXAMPLE_PURGE_URL``, the keys of its site's articles (``purge_keys(base_url, "articles")``:
their pages and the index) are purged there by ``XkeyPurger``, as a process that writes but
serves no sitemap (a worker, a cron job) does. The servers see the edit on their own too,
within their freshness bounds; the purge makes the cache ask them now.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from sqlalchemy import Engine, create_engine, select, update

from sitemap_middleware import purge_keys
from sitemap_middleware.contrib.varnish import XkeyPurger

from .db import Article
from .site import ARTICLE_SITEMAP, Config, site_of_article


def edit(engine: Engine, slug: str, when: datetime) -> int | None:
    """Set the ``updated_at`` of the article ``slug`` to ``when`` (naive, UTC, as the table
    holds it); its id, or None when no article has that slug."""
    with engine.begin() as connection:
        found = connection.scalar(select(Article.id).where(Article.slug == slug))
        if found is not None:
            connection.execute(update(Article).where(Article.id == found).values(updated_at=when))
    return found


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m example_app.writer SLUG")
    [slug] = args
    try:
        config = Config.from_environment()
    except ValueError as exc:
        sys.exit(f"example_app.writer: {exc}")
    engine = create_engine(f"sqlite:///{config.db_path}", connect_args={"timeout": 60})
    try:
        now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
        article_id = edit(engine, slug, now)
    finally:
        engine.dispose()
    if article_id is None:
        sys.exit(f"example_app.writer: no article {slug!r} in {config.db_path}")
    base_url = config.site_urls[site_of_article(article_id, config.sites) - 1]
    print(f"Edited {slug} (article {article_id} of {base_url}): updated_at {now:%Y-%m-%d %H:%M:%S}")
    if config.purge_url:
        keys = purge_keys(base_url, ARTICLE_SITEMAP["name"])
        XkeyPurger(config.purge_url, timeout=10).purge(keys)
        print(f"Purged {' '.join(keys)} at {config.purge_url}")


if __name__ == "__main__":
    main()
