"""What the Starlette and the Flask variants of the example site share: its pages, its HTML,
its sitemap sources and its configuration from the environment."""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import quote

from sqlalchemy import select

from sitemap_middleware import Entry, IndexNowSettings, IterableSource

from .db import Article

PAGES = {
    "/": ("Home", "Welcome to the example site."),
    "/about": ("About", "A small site whose sitemap comes from its database."),
    "/contact": ("Contact", "Write to nobody@example.com."),
}

# The public articles, newest key last, as the sitemap lists them.
ARTICLES = select(Article.id, Article.slug, Article.updated_at).where(Article.published)
ARTICLE_SITEMAP: dict[str, Any] = {
    "name": "articles",
    "loc": "/articles/{slug}",
    "lastmod": "updated_at",
    "changefreq": "weekly",
    # The published articles, written as a SQLAlchemy select and as a Django QuerySet: one
    # name for both queries gives every variant the same validators (rename on a change).
    "query_id": "published-articles-v1",
}
# The first articles shown on /articles.
ARTICLE_LIST = (
    select(Article.slug, Article.title).where(Article.published).order_by(Article.id).limit(50)
)


def article_query(slug: str) -> Any:
    """The title and date of a public article (``slug`` as the router decoded it)."""
    return select(Article.title, Article.updated_at).where(Article.slug == slug, Article.published)


def of_site(statement: Any, site: int, sites: int) -> Any:
    """``statement`` restricted to the articles of site ``site`` (1 to ``sites``): one table,
    its rows dealt out by key, so that with two sites the first has the odd ids and the
    second the even ones."""
    return statement.where((Article.id - 1) % sites == site - 1)


def site_of_article(article_id: int, sites: int) -> int:
    """The site (1 to ``sites``) an article belongs to, as :func:`of_site` deals them."""
    return (article_id - 1) % sites + 1


def pages_source() -> IterableSource:
    return IterableSource(
        [
            Entry("/", changefreq="daily", priority=1.0),
            Entry("/about", lastmod=date(2024, 1, 1), changefreq="yearly"),
            Entry("/contact", lastmod=date(2024, 1, 1), changefreq="yearly"),
            Entry("/articles", changefreq="daily"),
        ],
        name="pages",
    )


def page_html(title: str, body: str, root: str = "") -> str:
    """A page of the site; ``root`` is the path prefix it is served under (a proxy's)."""
    root = html.escape(root)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(title)}</h1>{body}"
        f"<p><a href='{root}/'>Home</a> · <a href='{root}/articles'>Articles</a> · "
        f"<a href='{root}/sitemap.html'>Sitemap</a> (<a href='{root}/sitemap.xml'>XML</a>)"
        "</p></body></html>"
    )


def static_body(path: str) -> tuple[str, str]:
    title, text = PAGES[path]
    return title, f"<p>{html.escape(text)}</p>"


def list_body(articles: Iterable[Any], root: str = "") -> str:
    root = html.escape(root)
    items = "".join(
        f"<li><a href='{root}/articles/{quote(slug, safe='')}'>{html.escape(title)}</a></li>"
        for slug, title in articles
    )
    return f"<ul>{items}</ul>"


def article_body(updated_at: Any) -> str:
    return f"<p>Last updated {updated_at:%Y-%m-%d %H:%M} UTC.</p>"


@dataclass(frozen=True, slots=True)
class Config:
    """``EXAMPLE_DB``, ``EXAMPLE_ROWS``, ``HOST``, ``PORT``, ``BASE_URL``, ``ROOT_PATH``;
    IndexNow with ``INDEXNOW_KEY`` (and ``INDEXNOW_ENDPOINT``, ``INDEXNOW_EVERY``); several
    sites with ``EXAMPLE_SITES``; a CDN in front with ``EXAMPLE_PURGE_URL``."""

    db_path: str
    rows: int
    host: str
    port: int
    base_url: str
    root_path: str
    indexnow: dict[str, Any] = field(default_factory=dict)
    """The middleware's IndexNow settings: none unless ``INDEXNOW_KEY`` is set."""
    sites: int = 1
    """``EXAMPLE_SITES``: 1 (the site at ``base_url``), or that many sites from the one table,
    ``site1.localhost`` to ``siteN.localhost`` (see :attr:`site_urls`)."""
    purge_url: str | None = None
    """``EXAMPLE_PURGE_URL``: a Varnish (or any cache taking ``PURGE`` with an ``xkey-purge``
    field) in front; its documents then carry ``Headers.cdn()``, and changes are purged
    there."""

    @classmethod
    def from_environment(cls) -> Config:
        host = os.environ.get("HOST", "127.0.0.1")
        port = int(os.environ.get("PORT", "8000"))
        sites = int(os.environ.get("EXAMPLE_SITES", "1"))
        if not 1 <= sites <= 9:
            raise ValueError(f"EXAMPLE_SITES: 1 to 9 sites, got {sites}")
        return cls(
            db_path=os.environ.get("EXAMPLE_DB", "example.sqlite3"),
            rows=int(os.environ.get("EXAMPLE_ROWS", "1000")),
            host=host,
            port=port,
            base_url=os.environ.get("BASE_URL", f"http://{host}:{port}/"),
            root_path=os.environ.get("ROOT_PATH", ""),
            indexnow=indexnow_options(os.environ),
            sites=sites,
            purge_url=os.environ.get("EXAMPLE_PURGE_URL") or None,
        )

    @property
    def site_urls(self) -> tuple[str, ...]:
        """The base URL of each site: ``(base_url,)``, or with ``EXAMPLE_SITES=N`` (N > 1)
        ``http://site1.localhost:PORT/`` to ``http://siteN.localhost:PORT/`` (browsers resolve
        ``*.localhost`` to this machine)."""
        if self.sites == 1:
            return (self.base_url,)
        return tuple(f"http://site{n}.localhost:{self.port}/" for n in range(1, self.sites + 1))

    @property
    def options(self) -> dict[str, Any]:
        """What :func:`example_app.app.create_app` takes beside the database and base URL."""
        options: dict[str, Any] = dict(self.indexnow)
        if self.sites > 1:
            options["site_urls"] = self.site_urls
        if self.purge_url:
            options["purge_url"] = self.purge_url
        return options


def indexnow_options(environ: Mapping[str, str]) -> dict[str, Any]:
    """``indexnow`` with the key from ``INDEXNOW_KEY``, its ``endpoint`` and ``every``
    (seconds: the lifespan task) when set; no option without a key."""
    key = environ.get("INDEXNOW_KEY")
    if not key:
        return {}
    settings: dict[str, Any] = {"key": key}
    if environ.get("INDEXNOW_ENDPOINT"):
        settings["endpoint"] = environ["INDEXNOW_ENDPOINT"]
    if environ.get("INDEXNOW_EVERY"):
        settings["every"] = float(environ["INDEXNOW_EVERY"])
    return {"indexnow": IndexNowSettings(**settings)}
