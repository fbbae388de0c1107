"""Surrogate keys: the names a CDN files each document under, so that a purge drops exactly
the documents that changed.

Three kinds of key, each ``sm-<kind>_<field>[_<field>]``::

    sm-site_<host>                   every document of the sitemap
    sm-src_<host>_<source>           every document listing the source's rows
    sm-doc_<host>_<document>         one document, in all its forms (.xml, .xml.gz, .html)

``<host>`` is the base URL's (with its port, if any), whatever host a request named, so
that a purge reaches every host's copy; ``<document>`` is the public path of the document's
XML form without its first ``/`` (``sitemap-posts-1.xml``, ``shop/sitemap.xml``). Each
field keeps ``a-z 0-9 . -`` and writes any other byte of its UTF-8 as ``~`` and two
lowercase hex digits (``/`` is ``~2f``, ``_`` is ``~5f``): no field holds ``_``, the
separator, and no key holds an upper-case letter (Cloudflare's tags ignore case), so two
documents, sources or sites never share a key.

A page carries the site's key, its source's and its own; the root carries the site's, every
source's and its own: a purge by source drops the index (or root urlset) too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from ..settings import ConfigurationError
from .routing import DocumentTarget, PageTarget, RootTarget, Routes
from .urls import Site

SEPARATORS = {"surrogate-key": " ", "cache-tag": ","}
"""How each field joins its keys: Fastly and Varnish's xkey by spaces, Cloudflare by
commas."""
MAX_KEY_LENGTH = 1_024
"""The longest key (Fastly's and Cloudflare's bound on one key)."""
MAX_FIELD_LENGTH = 16_384
"""The longest field of keys (Fastly's and Cloudflare's bound on the header)."""
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")
_LONGEST_PAGE = 10**19
"""A page number longer than any a 64-bit key allows, to bound the keys of pages."""


def key_field(text: str) -> str:
    """``text`` as a field of a key: ``a-z 0-9 . -`` kept, every other byte ``~xx``."""
    return "".join(
        char if char in _KEPT else "".join(f"~{byte:02x}" for byte in char.encode())
        for char in text
    )


def purge_keys(base_url: str, source: str | None = None) -> list[str]:
    """The key that purges every document of the sitemap at ``base_url``, or, given a
    source's name, every document listing it (the root included): for a process that
    writes but serves no sitemap (a worker, a cron job) and calls its purger itself."""
    host = key_field(urlsplit(Site.build(base_url, "/sitemap.xml").origin).netloc)
    return [f"sm-site_{host}" if source is None else f"sm-src_{host}_{key_field(source)}"]


class SurrogateKeys:
    """The keys of one sitemap's documents, and the header fields that carry them."""

    def __init__(
        self, site: Site, routes: Routes, sources: Sequence[str], fields: Sequence[str]
    ) -> None:
        self._site = site
        self._routes = routes
        self.fields = tuple(fields)
        self.host = key_field(urlsplit(site.origin).netloc)
        self.site = f"sm-site_{self.host}"
        self.sources = {name: f"sm-src_{self.host}_{key_field(name)}" for name in sources}
        self.root = self.document(RootTarget())
        self.root_keys = (self.site, *self.sources.values(), self.root)
        self._root_headers = self._headers(self.root_keys)
        self._check()

    def document(self, target: DocumentTarget) -> str:
        """The key of the document ``target`` names, the same for each of its forms."""
        match target:
            case RootTarget():
                path = self._routes.root
            case PageTarget(source, page):
                path = self._routes.page_path(source, page)
        public = urlsplit(self._site.url_for(path)).path
        return f"sm-doc_{self.host}_{key_field(public.removeprefix('/'))}"

    def of(self, target: DocumentTarget) -> tuple[str, ...]:
        """The keys a document carries: the site's, its sources', its own."""
        if isinstance(target, RootTarget):
            return self.root_keys
        return (self.site, self.sources[target.source], self.document(target))

    def headers(self, target: DocumentTarget) -> list[tuple[str, str]]:
        """The fields of the keys of a document's 200 and 304 (none when not configured)."""
        if not self.fields:
            return []
        if isinstance(target, RootTarget):
            return self._root_headers
        return self._headers(self.of(target))

    def of_pages(self, source: str, pages: Iterable[int] | None) -> list[str]:
        """The keys to purge when pages of ``source`` (numbered from 1) changed: theirs and
        the root's; ``None``: the source's pages themselves changed (one more or one less),
        so every document listing it (the HTML pages link to their neighbours)."""
        if pages is None:
            return [self.sources[source]]
        keys = [self.document(PageTarget(source, page)) for page in sorted(set(pages))]
        return [*keys, self.root] if keys else []

    def of_source(self, source: str | None) -> list[str]:
        """The key that purges one source's documents (the root included), or the site's."""
        if source is None:
            return [self.site]
        if source not in self.sources:
            raise ValueError(
                f"no source is named {source!r}; the sources are {', '.join(self.sources)}"
            )
        return [self.sources[source]]

    def _headers(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        return [(name, SEPARATORS[name].join(keys)) for name in self.fields]

    def _check(self) -> None:
        """Keys within the CDNs' bounds, whatever document, or a configuration error."""
        if not self.fields:
            return
        longest = [self.root, *self.sources.values()]
        longest += [self.document(PageTarget(name, _LONGEST_PAGE)) for name in self.sources]
        too_long = [key for key in longest if len(key) > MAX_KEY_LENGTH]
        if too_long:
            raise ConfigurationError(
                f"headers.surrogate_keys: the key {too_long[0][:60]!r}... is longer than "
                f"{MAX_KEY_LENGTH} characters; shorten the base URL's path or the sitemap's"
            )
        length = len(" ".join(self.root_keys))
        if length > MAX_FIELD_LENGTH:
            raise ConfigurationError(
                f"headers.surrogate_keys: the root's keys (one per source) take {length} "
                f"bytes, more than the {MAX_FIELD_LENGTH} a CDN accepts; serve fewer sources "
                "or no surrogate keys"
            )
