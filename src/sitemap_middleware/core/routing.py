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

:meth:`Routes.match` gives one frozen type per kind of target (their union: :data:`Target`):
:class:`RootTarget`, :class:`PageTarget`, :class:`KeyFileTarget`, :class:`NotFoundTarget`.
The root and a page are two types because the code branches on that very difference: only
a page has a source and a number, only the root lists every source and may be an index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypeAlias

# Pages of 64-bit integer keys: up to 19 digits (2**63 - 1 keys, one a page).
_PAGE = re.compile(r"[1-9][0-9]{0,18}")
_KEY_FILE = re.compile(r"/[A-Za-z0-9-]{8,128}\.txt")
"""The shape of ``/{key}.txt`` (the form of :data:`.spec.INDEXNOW_KEY`)."""


@dataclass(frozen=True, slots=True)
class RootTarget:
    """The root document (``/sitemap.xml``): its ``.gz`` file, or its HTML sibling."""

    gz: bool = False
    html: bool = False

    @property
    def tag_text(self) -> str:
        """What the target adds to its document's entity tag (see :func:`_tag_text`)."""
        return _tag_text(None, None, self.gz, self.html)


@dataclass(frozen=True, slots=True)
class PageTarget:
    """Page ``page`` (from 1) of ``source``: its ``.gz`` file, or its HTML sibling."""

    source: str
    page: int
    gz: bool = False
    html: bool = False

    @property
    def tag_text(self) -> str:
        """What the target adds to its document's entity tag (see :func:`_tag_text`)."""
        return _tag_text(self.source, self.page, self.gz, self.html)


@dataclass(frozen=True, slots=True)
class KeyFileTarget:
    """The IndexNow key file (see :mod:`.key_file`)."""


@dataclass(frozen=True, slots=True)
class NotFoundTarget:
    """A path of ours that names no document (answered 404): an unknown source, page 0..."""


DocumentTarget: TypeAlias = RootTarget | PageTarget
"""A target that names a document."""
Target: TypeAlias = RootTarget | PageTarget | KeyFileTarget | NotFoundTarget
"""What a path of ours names."""

NOT_FOUND = NotFoundTarget()
KEY_FILE = KeyFileTarget()


def _tag_text(source: str | None, page: int | None, gz: bool, html: bool) -> str:
    """A target as every entity tag has spelled it so far: the same text, so that the same
    data keeps the same tag across versions (replicas being upgraded one by one agree)."""
    return (
        f"Target(source={source!r}, page={page!r}, gz={gz!r}, valid=True, html={html!r}, "
        "key_file=False)"
    )


class Routes:
    """Paths of the root, the pages and their ``.gz`` files."""

    def __init__(
        self,
        path: str,
        names: Iterable[str],
        html: bool = False,
        key_path: str | None = None,
        key_paths: frozenset[str] | None = frozenset(),
    ) -> None:
        self.root = path
        self.html = html
        self.key_path = key_path
        # Beside sites=, before the host is known: the key files of every site of a mapping,
        # or (None, a resolver's sites being unknown) any path of the key file's shape.
        self.key_paths = key_paths
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

    def html_path(self, target: DocumentTarget) -> str:
        """The path of a target's HTML sibling."""
        match target:
            case RootTarget():
                return self.form(self.root, html=True)
            case PageTarget(source, page):
                return self.page_path(source, page, html=True)

    def path_of(self, target: DocumentTarget | KeyFileTarget) -> str:
        """The path of the document a target names (for logs)."""
        match target:
            case KeyFileTarget():
                return self.key_path or self.root
            case RootTarget(gz, html=False):
                return self.form(self.root, gz)
            case PageTarget(source, page, gz, html=False):
                return self.page_path(source, page, gz)
            case _:
                return self.html_path(target)

    def match_claimed(self, path: str) -> Target:
        """The target of a path :class:`~.sites.Sites` claimed for this site's host: a key
        file path of another site (or of none) names nothing here, a 404."""
        return self.match(path) or NOT_FOUND

    def match(self, path: str) -> Target | None:
        """The target a route path names; None when the path is not the sitemap's."""
        if path == self.key_path:
            return KEY_FILE
        if path in self.key_paths if self.key_paths is not None else _KEY_FILE.fullmatch(path):
            return KEY_FILE
        if self.html and path.endswith(".html"):
            target = self.match(path.removesuffix(".html") + ".xml")
            if isinstance(target, RootTarget | PageTarget):
                return replace(target, html=True)
            return target
        gz = path.endswith(".gz")
        plain = path.removesuffix(".gz") if gz else path
        if plain == self.root:
            return RootTarget(gz)
        if not plain.startswith(self.child_prefix) or not plain.endswith(".xml"):
            return None
        rest = plain[len(self.child_prefix) : -len(".xml")]
        for name in self.names:
            if rest.startswith(name + "-"):
                number = rest[len(name) + 1 :]
                if _PAGE.fullmatch(number):
                    return PageTarget(name, int(number), gz)
        return NOT_FOUND
