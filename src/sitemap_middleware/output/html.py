"""The human view: an HTML sibling of every sitemap document (opt-in, ``html=True``).

Browsers are dropping XSLT, so instead of styling the XML the middleware
serves ``sitemap.html`` next to ``sitemap.xml`` (and ``sitemap-NAME-N.html``
next to each page): a table of the same URLs, lastmods, change frequencies
and priorities, with links to the XML and to the neighbouring pages. The XML
crawlers read is never changed by it.

Every value is HTML-escaped (it comes from data), links are relative to the
sitemap's directory or the checked absolute locs, and the response carries a
Content-Security-Policy that allows no script at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from html import escape

from .duplicates import SeenLocs
from .entry import Batch, EntryRules
from .xml import UrlFields

CONTENT_TYPE = "text/html; charset=utf-8"
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'"

_STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;"
    "color:#1d232a}h1{font-size:1.5rem;margin-bottom:.25rem}p.meta{color:#555;margin-top:0}"
    "nav{margin:1rem 0}nav a{margin-right:1.25rem}table{border-collapse:collapse;width:100%}"
    "th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #e3e6ea;"
    "vertical-align:top}th{background:#f3f5f7;position:sticky;top:0}td.n{color:#777;"
    "text-align:right;width:4rem}td.loc{word-break:break-all}a{color:#0b57d0}"
)


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    href: str
    rel: str | None = None


def _link(link: Link) -> str:
    rel = f' rel="{link.rel}"' if link.rel else ""
    return f'<a href="{escape(link.href)}"{rel}>{escape(link.label)}</a>'


def _nav(links: list[Link]) -> str:
    return f"<nav>{''.join(map(_link, links))}</nav>\n" if links else ""


def document_open(title: str, xml_href: str, nav: list[Link], summary: str) -> str:
    """Everything before the table's rows."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f'<p class="meta">{escape(summary + " " if summary else "")}What crawlers read: '
        f'<a href="{escape(xml_href)}">{escape(xml_href)}</a></p>\n'
        f"{_nav(nav)}"
    )


URLSET_HEAD = (
    "<table><thead><tr><th>#</th><th>URL</th><th>Last modified</th><th>Change frequency</th>"
    "<th>Priority</th></tr></thead><tbody>\n"
)
INDEX_HEAD = (
    "<table><thead><tr><th>#</th><th>Sitemap</th><th>URLs (at most)</th><th>Last modified</th>"
    "<th>XML</th></tr></thead><tbody>\n"
)
# The index knows each page's rows, not which of them the bad-row rule leaves out.
INDEX_COUNTS = (
    "URLs are counted from the rows of each page, one per row and language; a page lists "
    "fewer when rows are skipped (its own view counts exactly what it lists)."
)


def url_row(number: int, url: UrlFields) -> str:
    loc = escape(url.loc)
    return (
        f'<tr><td class="n">{number}</td><td class="loc"><a href="{loc}">{loc}</a></td>'
        f"<td>{escape(url.lastmod or '')}</td><td>{escape(url.changefreq or '')}</td>"
        f"<td>{escape(url.priority or '')}</td></tr>\n"
    )


def index_row(
    number: int, label: str, html_href: str, xml_href: str, urls: int, lastmod: str | None
) -> str:
    return (
        f'<tr><td class="n">{number}</td><td><a href="{escape(html_href)}">{escape(label)}</a>'
        f"</td><td>{urls:,}</td><td>{escape(lastmod or '')}</td>"
        f'<td><a href="{escape(xml_href)}">{escape(xml_href)}</a></td></tr>\n'
    )


def document_close(nav: list[Link], note: str) -> str:
    return f'</tbody></table>\n<p class="meta">{escape(note)}</p>\n{_nav(nav)}</body></html>\n'


@dataclass(frozen=True, slots=True)
class Heading:
    """What a page says above its table: a title, its XML twin, the way to its neighbours."""

    title: str
    xml_href: str
    nav: list[Link]


@dataclass(frozen=True, slots=True)
class IndexRow:
    label: str
    html_href: str
    xml_href: str
    urls: int
    """The URLs of the page's rows (rows times URLs per row): at most what it lists."""
    lastmod: str | None


def index_document(title: str, xml_href: str, rows: list[IndexRow]) -> bytes:
    """The HTML sibling of a ``sitemapindex`` (at most 50,000 short rows: built whole)."""
    total = sum(row.urls for row in rows)
    parts = [
        document_open(title, xml_href, [], f"{len(rows):,} sitemaps, up to {total:,} URLs."),
        INDEX_HEAD,
    ]
    for number, row in enumerate(rows, 1):
        parts.append(
            index_row(number, row.label, row.html_href, row.xml_href, row.urls, row.lastmod)
        )
    parts.append(document_close([], f"{len(rows):,} sitemaps. {INDEX_COUNTS}"))
    return "".join(parts).encode("utf-8")


class Table:
    """The HTML sibling of a ``urlset``, streamed: one table row per listed URL.

    Rows go through the same rules as the XML (a skipped row is skipped here
    too, a repeated loc too), so the table shows exactly what crawlers get.
    """

    def __init__(
        self,
        rules: EntryRules,
        heading: Heading,
        listed_until_values: Mapping[str, datetime | None] | None = None,
    ) -> None:
        self.rules = rules
        self.heading = heading
        self.urls = 0
        self.seen = SeenLocs(rules.site)
        self.listed_until_values = listed_until_values or {}

    def open(self) -> bytes:
        head = self.heading
        return (document_open(head.title, head.xml_href, head.nav, "") + URLSET_HEAD).encode()

    def write(self, source: str, batch: Batch) -> bytes:
        rows = []
        for raw in batch.rows():
            url = self.rules.check(
                source, raw, self.listed_until_values.get(source), self.seen.first_url
            )
            if url is not None:
                self.urls += 1
                rows.append(url_row(self.urls, url))
        return "".join(rows).encode("utf-8")

    def close(self) -> bytes:
        return document_close(self.heading.nav, f"{self.urls:,} URLs, as served.").encode("utf-8")
