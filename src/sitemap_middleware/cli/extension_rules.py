"""The built-in rules for Google's sitemap extensions in a ``urlset``: the cheap checks that
catch what crawlers would drop, without schema files.

* hreflang alternates (``xhtml:link``): ``rel="alternate"``, an ``hreflang``
  that is a language code or ``x-default``, once per URL, an absolute
  ``href``; every URL lists itself among its alternates, and an alternate
  listed in the same document lists the URL back (Google ignores
  annotations that do not point both ways);
* ``image:image``: one ``image:loc``, an absolute URL; at most 1,000 per URL;
  the children Google retired in 2022 are reported (a warning);
* ``video:video``: ``thumbnail_loc``, ``title``, ``description`` and one of
  ``content_loc`` / ``player_loc``, the locs absolute and not the page itself;
* ``news:news``: publication name and language (``zh-cn``, ``zh-tw`` or two or
  three lowercase letters, the XSD's pattern), publication date (as the XSD
  and W3C Datetime read it), title; at most 1,000 per document; older than
  two days is reported (a warning: Google reads only recent articles);
* only the element each namespace defines may stand in a ``url``
  (``image:image``, ``video:video``, ``news:news``, ``xhtml:link``).

Everything else these namespaces define (video durations, ratings, prices...)
is left to the XSDs (``--schemas``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from lxml import etree

from ..core.spec import (
    EXTENSION_NAMESPACES,
    HREFLANG,
    IMAGE_NS,
    MAX_IMAGES,
    MAX_NEWS_PER_SITEMAP,
    NEWS_LANGUAGE,
    NEWS_NS,
    NEWS_WINDOW,
    RETIRED_IMAGE_FIELDS,
    URL_EXTENSION_ELEMENTS,
    VIDEO_NS,
    VIDEO_PLAYABLE,
    VIDEO_REQUIRED,
    XHTML_NS,
    XML_WHITESPACE,
)
from .findings import Findings
from .values import day_ends_last, lastmod_problems, loc_problems, w3c_moment

PREFIXES = {namespace: prefix for prefix, namespace in EXTENSION_NAMESPACES.items()}


class ExtensionRules:
    """The extension rules of one ``urlset``: per URL, then per document (:meth:`finish`)."""

    def __init__(self, findings: Findings, now: datetime) -> None:
        self.findings = findings
        self.now = now
        self.news = 0
        # loc -> the hrefs of its alternates, for the return links.
        self.alternates: dict[str, frozenset[str]] = {}

    def url(self, loc: str, elements: Iterable[etree._Element]) -> None:
        """Check the extension elements of the ``url`` whose loc is ``loc``."""
        links: list[etree._Element] = []
        images = 0
        for element in elements:
            namespace, _, name = str(element.tag)[1:].partition("}")
            expected = URL_EXTENSION_ELEMENTS.get(namespace)
            if expected is None:
                continue  # another namespace: reported by the structure rules
            if name != expected:
                prefix = PREFIXES[namespace]
                if namespace == XHTML_NS:
                    self.findings.add(
                        "alternates.element",
                        "crawlers read only xhtml:link from the XHTML namespace in a url",
                        f"<xhtml:{name}> ({loc})",
                    )
                else:
                    self.findings.add(
                        "schema.extension-element",
                        f"the {prefix} namespace has only <{prefix}:{expected}> in a url",
                        f"<{prefix}:{name}> ({loc})",
                    )
            elif namespace == XHTML_NS:
                links.append(element)
            elif namespace == IMAGE_NS:
                images += 1
                self._image(element, loc)
            elif namespace == VIDEO_NS:
                self._video(element, loc)
            else:
                self.news += 1
                self._news(element, loc)
        if images > MAX_IMAGES:
            self.findings.add(
                "image.limit", f"more than {MAX_IMAGES:,} image:image in a url", f"{images} ({loc})"
            )
        if links:
            self._alternates(loc, links)

    def finish(self, locs: Iterable[str]) -> None:
        """The document-wide rules, once every URL was seen (``locs``: all of them)."""
        if self.news > MAX_NEWS_PER_SITEMAP:
            self.findings.add(
                "news.limit",
                f"more than {MAX_NEWS_PER_SITEMAP:,} news:news in one sitemap",
                f"{self.news:,}",
            )
        if not self.alternates:
            return
        listed = set(locs)
        for loc, hrefs in self.alternates.items():
            for href in sorted(hrefs - {loc}):
                if href in listed and loc not in self.alternates.get(href, ()):
                    self.findings.add(
                        "alternates.return",
                        "an alternate does not list the URL back (Google ignores hreflang "
                        "annotations that do not point both ways)",
                        f"{href} does not list {loc}",
                    )
        self.alternates = {}  # a new one: the document keeps this one

    def _alternates(self, loc: str, links: list[etree._Element]) -> None:
        hrefs: set[str] = set()
        languages: set[str] = set()
        for link in links:
            rel, hreflang, href = link.get("rel"), link.get("hreflang"), link.get("href")
            if rel != "alternate" or hreflang is None or href is None:
                self.findings.add(
                    "alternates.link",
                    'xhtml:link needs rel="alternate", hreflang and href',
                    f"rel={rel!r} hreflang={hreflang!r} href={href!r} ({loc})",
                )
                continue
            if not HREFLANG.fullmatch(hreflang):
                self.findings.add(
                    "alternates.hreflang",
                    "hreflang must be a language code (de, en-GB, zh-Hant) or x-default",
                    f"{hreflang!r} ({loc})",
                )
            elif hreflang.lower() in languages:
                self.findings.add(
                    "alternates.duplicate",
                    "a url lists two alternates for one hreflang",
                    f"{hreflang} ({loc})",
                )
            languages.add(hreflang.lower())
            href = href.strip(XML_WHITESPACE)
            for _, message in loc_problems(href):
                self.findings.add("alternates.href", f"href: {message}", f"{href} ({loc})")
            hrefs.add(href)
        if hrefs and loc not in hrefs:
            self.findings.add(
                "alternates.self",
                "a url with alternates must list itself among them",
                loc,
            )
        self.alternates[loc] = frozenset(hrefs)

    def _image(self, image: etree._Element, loc: str) -> None:
        children = _children(image, IMAGE_NS)
        image_locs = children.get("loc", [])
        if len(image_locs) != 1:
            self.findings.add(
                "image.loc", "image:image holds exactly one image:loc", f"{len(image_locs)} ({loc})"
            )
        for value in image_locs:
            for _, message in loc_problems(value):
                self.findings.add("image.loc", f"image:loc: {message}", f"{value} ({loc})")
        retired = [name for name in RETIRED_IMAGE_FIELDS if name in children]
        if retired:
            self.findings.add(
                "image.retired",
                "Google retired image:caption, title, geo_location and license in 2022",
                f"{', '.join(retired)} ({loc})",
            )

    def _video(self, video: etree._Element, loc: str) -> None:
        children = _children(video, VIDEO_NS)
        missing = [name for name in VIDEO_REQUIRED if not _text_of(children, name)]
        if not any(name in children for name in VIDEO_PLAYABLE):
            missing.append(" or ".join(VIDEO_PLAYABLE))
        if missing:
            self.findings.add(
                "video.required",
                "video:video needs thumbnail_loc, title, description and content_loc or player_loc",
                f"missing {', '.join(missing)} ({loc})",
            )
        for name in (VIDEO_REQUIRED[0], *VIDEO_PLAYABLE):
            for value in children.get(name, []):
                for _, message in loc_problems(value):
                    self.findings.add("video.loc", f"video:{name}: {message}", f"{value} ({loc})")
                if name != "thumbnail_loc" and value == loc:
                    self.findings.add(
                        "video.loc",
                        f"video:{name} must not be the page's own URL",
                        loc,
                    )

    def _news(self, news: etree._Element, loc: str) -> None:
        children = _children(news, NEWS_NS)
        publications = news.findall(f"{{{NEWS_NS}}}publication")
        publication = _children(publications[0], NEWS_NS) if publications else {}
        missing = [f"publication/{n}" for n in ("name", "language") if n not in publication]
        missing += [n for n in ("publication_date", "title") if not _text_of(children, n)]
        if missing:
            self.findings.add(
                "news.required",
                "news:news needs publication (name, language), publication_date and title",
                f"missing {', '.join(missing)} ({loc})",
            )
        for language in publication.get("language", []):
            if not NEWS_LANGUAGE.fullmatch(language):
                self.findings.add(
                    "news.language",
                    "news:language must be an ISO 639 code in lowercase (en, fra) or zh-cn / zh-tw",
                    f"{language!r} ({loc})",
                )
        for published in children.get("publication_date", []):
            problems = lastmod_problems(published, self.now)
            for _, message in problems:
                self.findings.add(
                    "news.date",
                    "news:publication_date" + message.removeprefix("lastmod"),
                    f"{published} ({loc})",
                )
            if not problems:
                self._old_news(published, loc)

    def _old_news(self, published: str, loc: str) -> None:
        moment = w3c_moment(published)
        if moment is None:
            return
        if not isinstance(moment, datetime):  # a date: its end, wherever that is latest
            moment = day_ends_last(moment)
        # An hour's allowance: a server drops old news at its own clock's ticks.
        if moment < self.now - NEWS_WINDOW - timedelta(hours=1):
            self.findings.add(
                "news.old",
                "news older than two days: Google News reads only recent articles (leave "
                "news:news out of older URLs)",
                f"{published} ({loc})",
            )


def _children(element: etree._Element, namespace: str) -> dict[str, list[str]]:
    """The texts of ``element``'s children in ``namespace``, by local name."""
    found: dict[str, list[str]] = {}
    for child in element:
        if isinstance(child.tag, str) and child.tag.startswith(f"{{{namespace}}}"):
            name = child.tag[len(namespace) + 2 :]
            found.setdefault(name, []).append((child.text or "").strip(XML_WHITESPACE))
    return found


def _text_of(children: dict[str, list[str]], name: str) -> bool:
    return any(children.get(name, []))
