"""The bytes of a ``urlset``: declaration, opening tag, ``<url>`` elements, closing tag.

Pure string building. Every value reaching here was checked by
:mod:`sitemap_middleware.output.entry`: locs are percent-encoded URIs (ASCII only),
dates, frequencies and priorities have fixed ASCII forms, so only ``&`` and
``'`` can still need an entity; extension text (video titles, news titles) is
escaped by :mod:`sitemap_middleware.output.extensions` and may be any UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.spec import MAX_BYTES, MAX_CHILDREN, MAX_URLS, SITEMAP_NS

DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN = f'<urlset xmlns="{SITEMAP_NS}">\n'
URLSET_CLOSE = "</urlset>\n"
SITEMAPINDEX_OPEN = f'<sitemapindex xmlns="{SITEMAP_NS}">\n'
SITEMAPINDEX_CLOSE = "</sitemapindex>\n"

# The longest <url> without its loc: every optional field at its longest form.
URL_OVERHEAD = len(
    "<url><loc></loc><lastmod>2024-01-02T03:04:05+05:30</lastmod>"
    "<changefreq>monthly</changefreq><priority>0.1234</priority></url>\n"
)
# Entity-escaping makes one loc character at most six bytes ("'" is "&apos;").
ESCAPE_GROWTH = 6


@dataclass(frozen=True, slots=True)
class UrlFields:
    """A checked entry: every field is already in its final text form."""

    loc: str
    lastmod: str | None
    changefreq: str | None
    priority: str | None
    extensions: str = ""
    """The extension elements, already written."""


class LimitExceeded(RuntimeError):
    """A document would break the protocol's per-file limits."""


def escape(text: str) -> str:
    """Entity-escape the five characters sitemaps.org lists."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "'" in text:
        text = text.replace("'", "&apos;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def url_element(url: UrlFields) -> str:
    parts = ["<url><loc>", escape(url.loc), "</loc>"]
    if url.lastmod is not None:
        parts += ("<lastmod>", url.lastmod, "</lastmod>")
    if url.changefreq is not None:
        parts += ("<changefreq>", url.changefreq, "</changefreq>")
    if url.priority is not None:
        parts += ("<priority>", url.priority, "</priority>")
    if url.extensions:
        parts.append(url.extensions)
    parts.append("</url>\n")
    return "".join(parts)


class UrlsetWriter:
    """Streams one ``urlset``, refusing to pass ``max_urls`` or ``max_bytes``."""

    def __init__(self, max_urls: int = MAX_URLS, max_bytes: int = MAX_BYTES) -> None:
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.urls = 0
        self.bytes = 0

    def open(self, opening: str = URLSET_OPEN) -> bytes:
        """The declaration and the opening tag (with the namespaces the document uses)."""
        text = DECLARATION + opening
        self.bytes += len(text)
        return text.encode("ascii")

    def write(self, elements: list[str]) -> bytes:
        """``<url>`` elements (from :func:`url_element`) as bytes, within the limits."""
        if not elements:
            return b""
        # Locs are ASCII, but extension text (video titles, news) may not be.
        data = "".join(elements).encode("utf-8")
        count = len(elements)
        if self.urls + count > self.max_urls:
            raise LimitExceeded(f"more than max_urls={self.max_urls} URLs in one sitemap")
        if self.bytes + len(data) + len(URLSET_CLOSE) > self.max_bytes:
            raise LimitExceeded(f"more than max_bytes={self.max_bytes} bytes in one sitemap")
        self.urls += count
        self.bytes += len(data)
        return data

    def close(self) -> bytes:
        self.bytes += len(URLSET_CLOSE)
        return URLSET_CLOSE.encode("ascii")


def page_size_for(max_urls: int, max_bytes: int, max_loc_length: int) -> int:
    """Rows per page such that no page can pass ``max_bytes``, whatever the data.

    Every row is assumed at its longest: a loc of ``max_loc_length`` characters,
    each escaped to six bytes, and every optional field present.
    """
    budget = max_bytes - len(DECLARATION + URLSET_OPEN + URLSET_CLOSE)
    return max(1, min(max_urls, budget // (URL_OVERHEAD + ESCAPE_GROWTH * max_loc_length)))


def sitemap_element(loc: str, lastmod: str | None) -> str:
    if lastmod is None:
        return f"<sitemap><loc>{escape(loc)}</loc></sitemap>\n"
    return f"<sitemap><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"


def sitemapindex(elements: list[str], max_bytes: int = MAX_BYTES) -> bytes:
    """A whole ``sitemapindex`` (at most 50,000 children, a few MB: built in one piece)."""
    if not elements:
        raise LimitExceeded("a sitemapindex needs at least one child")
    if len(elements) > MAX_CHILDREN:
        raise LimitExceeded(
            f"{len(elements)} child sitemaps, more than the {MAX_CHILDREN} an index may list"
        )
    text = DECLARATION + SITEMAPINDEX_OPEN + "".join(elements) + SITEMAPINDEX_CLOSE
    if len(text) > max_bytes:
        raise LimitExceeded(f"the sitemap index would pass max_bytes={max_bytes}")
    return text.encode("ascii")
