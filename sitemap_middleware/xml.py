"""The bytes of a ``urlset``: declaration, opening tag, ``<url>`` elements, closing tag.

Pure string building. Every value reaching here was checked by
:mod:`sitemap_middleware.entry`: locs are percent-encoded URIs (ASCII only),
dates, frequencies and priorities have fixed ASCII forms, so the document is
ASCII, its byte count is its character count and only ``&`` and ``'`` can
still need an entity.
"""

from __future__ import annotations

from .entry import UrlFields

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN = f'<urlset xmlns="{SITEMAP_NS}">\n'
URLSET_CLOSE = "</urlset>\n"

MAX_URLS = 50_000
MAX_BYTES = 52_428_800


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
    parts.append("</url>\n")
    return "".join(parts)


class UrlsetWriter:
    """Streams one ``urlset``, refusing to pass ``max_urls`` or ``max_bytes``."""

    def __init__(self, max_urls: int = MAX_URLS, max_bytes: int = MAX_BYTES) -> None:
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.urls = 0
        self.bytes = 0

    def open(self) -> bytes:
        text = DECLARATION + URLSET_OPEN
        self.bytes += len(text)
        return text.encode("ascii")

    def write(self, elements: list[str]) -> bytes:
        """``<url>`` elements (from :func:`url_element`) as bytes, within the limits."""
        if not elements:
            return b""
        text = "".join(elements)
        count = len(elements)
        if self.urls + count > self.max_urls:
            raise LimitExceeded(f"more than max_urls={self.max_urls} URLs in one sitemap")
        if self.bytes + len(text) + len(URLSET_CLOSE) > self.max_bytes:
            raise LimitExceeded(f"more than max_bytes={self.max_bytes} bytes in one sitemap")
        self.urls += count
        self.bytes += len(text)
        return text.encode("ascii")

    def close(self) -> bytes:
        self.bytes += len(URLSET_CLOSE)
        return URLSET_CLOSE.encode("ascii")
