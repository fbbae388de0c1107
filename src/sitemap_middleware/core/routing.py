"""Which document a path names.

With ``path="/sitemap.xml"``:

* ``/sitemap.xml`` is the root: a ``sitemapindex`` (or, for one small source,
  a ``urlset``);
* ``/sitemap-{source}-{n}.xml`` is page ``n`` (from 1) of a source; children
  sit in the root's directory, so every URL of the site is within their scope;
* every document also exists as a gzip file: append ``.gz``;
* with the human view on, every document has an HTML sibling: ``.html`` for
  ``.xml`` (``/sitemap.html``, ``/sitemap-{source}-{n}.html``).

Any other path under the ``sitemap-`` prefix that ends in ``.xml`` or
``.xml.gz`` is ours too and answers 404 (unknown source, page 0, ``-1``,
``01``, ``x``), so a typo never reaches the application as something else.

With IndexNow configured, its key file (``/{key}.txt`` or ``indexnow.key_location``)
is one more route of the core, answered like the documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

# Pages of 64-bit integer keys: up to 19 digits (2**63 - 1 keys, one a page).
_PAGE = re.compile(r"[1-9][0-9]{0,18}")


@dataclass(frozen=True, slots=True)
class Target:
    """A document request: the root (``source`` None) or page ``page`` of ``source``."""

    source: str | None = None
    page: int | None = None
    gz: bool = False
    valid: bool = True
    html: bool = False
    key_file: bool = False
    """The IndexNow key file (see :mod:`.key_file`)."""


NOT_FOUND = Target(valid=False)
KEY_FILE = Target(key_file=True)


class Routes:
    """Paths of the root, the pages and their ``.gz`` files."""

    def __init__(
        self, path: str, names: Iterable[str], html: bool = False, key_path: str | None = None
    ) -> None:
        self.root = path
        self.html = html
        self.key_path = key_path
        directory, _, filename = path.rpartition("/")
        self.child_prefix = f"{directory}/{filename.removesuffix('.xml')}-"
        # Longest first: "news-2024" must win over "news" for "sitemap-news-2024-1.xml".
        self.names = sorted(names, key=len, reverse=True)

    @staticmethod
    def form(path: str, gz: bool = False, html: bool = False) -> str:
        """The path of one form of the document whose XML or gzip file is at ``path``: the
        XML document, its gzip file (``.gz`` appended) or its HTML sibling (``.html`` for
        ``.xml``)."""
        xml = path.removesuffix(".gz")
        if html:
            return xml.removesuffix(".xml") + ".html"
        return xml + ".gz" if gz else xml

    def page_path(self, source: str, page: int, gz: bool = False, html: bool = False) -> str:
        return self.form(f"{self.child_prefix}{source}-{page}.xml", gz, html)

    def html_path(self, target: Target) -> str:
        """The path of a target's HTML sibling."""
        if target.source is None or target.page is None:
            return self.form(self.root, html=True)
        return self.page_path(target.source, target.page, html=True)

    def path_of(self, target: Target) -> str:
        """The path of the document a valid target names (for logs)."""
        if target.key_file and self.key_path is not None:
            return self.key_path
        if target.html:
            return self.html_path(target)
        if target.source is None or target.page is None:
            return self.form(self.root, target.gz)
        return self.page_path(target.source, target.page, target.gz)

    def match(self, path: str) -> Target | None:
        """The target a route path names; None when the path is not the sitemap's."""
        if path == self.key_path:
            return KEY_FILE
        if self.html and path.endswith(".html"):
            target = self.match(path.removesuffix(".html") + ".xml")
            return None if target is None else replace(target, html=True)
        gz = path.endswith(".gz")
        plain = path.removesuffix(".gz") if gz else path
        if plain == self.root:
            return Target(gz=gz)
        if not plain.startswith(self.child_prefix) or not plain.endswith(".xml"):
            return None
        rest = plain[len(self.child_prefix) : -len(".xml")]
        for name in self.names:
            if rest.startswith(name + "-"):
                number = rest[len(name) + 1 :]
                if _PAGE.fullmatch(number):
                    return Target(name, int(number), gz)
        return NOT_FOUND
