"""What a page tells crawlers about itself: its canonical, ``noindex``, hreflang alternates.

Read from the head of the HTML (lxml.html) and from the response's header fields, as
Google and Bing read them; pure, no I/O.

* canonical: ``<link rel="canonical" href>`` in the ``<head>`` (one in the body is
  ignored by Google) and ``Link: <...>; rel="canonical"``; a relative href is resolved
  against ``<base href>``, else the page's URL;
* ``noindex`` (or ``none``): ``<meta name="robots">`` and the crawler-specific
  ``<meta name="googlebot">`` / ``<meta name="bingbot">`` anywhere in the page, and
  ``X-Robots-Tag`` fields, each optionally for one crawler (``X-Robots-Tag: googlebot:
  noindex``), a prefix that holds for the directives after it in that field;
* hreflang alternates: ``<link rel="alternate" hreflang href>`` in the ``<head>`` and
  ``Link: <...>; rel="alternate"; hreflang="de"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

import lxml.html
from lxml import etree

GENERIC = "*"
CRAWLERS = {"googlebot": "Googlebot", "bingbot": "Bingbot"}
"""The crawlers whose own ``noindex`` counts, by their lowercase name; ``robots`` and an
``X-Robots-Tag`` without a name are every crawler's (``*``)."""

NOINDEX = frozenset({"noindex", "none"})
# Directives that take a value after a colon: never a crawler's name before one.
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_NAMED = re.compile(r"([A-Za-z][\w.-]*)\s*:\s*(.*)", re.DOTALL)
_LINK_VALUE = re.compile(r'<([^>]*)>((?:[^<"]|"(?:[^"\\]|\\.)*")*)')
_LINK_PARAM = re.compile(
    r';\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*))?'
)


@dataclass(frozen=True)
class Signals:
    canonicals: tuple[tuple[str, str], ...] = ()
    """(absolute URL, where it was given) for each canonical."""
    noindex: tuple[tuple[str, str], ...] = ()
    """(crawler: ``*``, ``Googlebot`` or ``Bingbot``; where it was said) for each noindex."""
    alternates: frozenset[str] = frozenset()
    """The absolute URLs of the hreflang alternates the page lists."""


def read_signals(
    url: str,
    body: bytes | None,
    charset: str | None,
    x_robots_tags: Sequence[str] = (),
    links: Sequence[str] = (),
) -> Signals:
    """The signals of the page at ``url``: its HTML ``body`` (None when it has none to read)
    and its ``X-Robots-Tag`` and ``Link`` field values."""
    canonicals: list[tuple[str, str]] = []
    alternates: set[str] = set()
    noindex = [
        (crawler, f"X-Robots-Tag: {value}")
        for value in x_robots_tags
        for crawler in x_robots_noindex(value)
    ]
    for target, params in header_links(links):
        rels = params.get("rel", "").lower().split()
        absolute = join(url, target)
        if "canonical" in rels:
            canonicals.append((absolute, f'Link: <{target}>; rel="canonical"'))
        if "alternate" in rels and "hreflang" in params:
            alternates.add(absolute)
    root = _html(body, charset) if body else None
    if root is not None:
        head = root.find("head")
        base = url
        if head is not None:
            for element in head.iter("base"):
                if element.get("href"):
                    base = join(url, element.get("href", "").strip())
                    break
            for link in head.iter("link"):
                rels = (link.get("rel") or "").lower().split()
                href = link.get("href")
                if href is None:
                    continue
                absolute = join(base, href.strip())
                if "canonical" in rels:
                    canonicals.append((absolute, f'<link rel="canonical" href="{href}">'))
                if "alternate" in rels and link.get("hreflang") is not None:
                    alternates.add(absolute)
        for meta in root.iter("meta"):
            name = (meta.get("name") or "").strip().lower()
            crawler = GENERIC if name == "robots" else CRAWLERS.get(name)
            content = meta.get("content") or ""
            if crawler is not None and NOINDEX & _directives(content):
                noindex.append((crawler, f'<meta name="{meta.get("name")}" content="{content}">'))
    return Signals(tuple(canonicals), tuple(noindex), frozenset(alternates))


def x_robots_noindex(value: str) -> Iterator[str]:
    """The crawlers (``*``, ``Googlebot``, ``Bingbot``) one ``X-Robots-Tag`` value marks
    noindex; a crawler's name before a colon holds for the directives after it."""
    crawler: str | None = GENERIC
    for part in value.split(","):
        directive = part.strip()
        named = _NAMED.fullmatch(directive)
        if named is not None and named.group(1).lower() not in _VALUED:
            crawler = CRAWLERS.get(named.group(1).lower())  # None: a crawler of no concern
            directive = named.group(2).strip()
        if crawler is not None and directive.lower() in NOINDEX:
            yield crawler


def header_links(values: Iterable[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """The links of ``Link`` field values (RFC 8288): target and parameters (names in
    lowercase, quoted values unquoted; the first of a repeated parameter)."""
    for value in values:
        for link in _LINK_VALUE.finditer(value):
            params: dict[str, str] = {}
            for param in _LINK_PARAM.finditer(link.group(2)):
                raw = param.group(2) or ""
                if raw.startswith('"'):
                    raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
                params.setdefault(param.group(1).lower(), raw)
            yield link.group(1).strip(), params


def join(base: str, href: str) -> str:
    """``href`` resolved against ``base``; as given when it cannot be (``http://[``)."""
    try:
        return urljoin(base, href)
    except ValueError:
        return href


def _directives(content: str) -> set[str]:
    return {part.strip().lower() for part in content.split(",")}


def _html(body: bytes, charset: str | None) -> etree._Element | None:
    try:
        parser = lxml.html.HTMLParser(encoding=charset)
    except LookupError:  # a charset lxml does not know: let it read the page's own <meta>
        parser = lxml.html.HTMLParser()
    try:
        return lxml.html.document_fromstring(body, parser=parser)
    except (etree.ParserError, ValueError):  # an empty document
        return None
