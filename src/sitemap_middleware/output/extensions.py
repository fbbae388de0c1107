"""Google's sitemap extensions: hreflang alternates, images, videos and news.

Only what Google still reads is written: ``xhtml:link`` alternates,
``image:image/image:loc`` (caption, title, geo_location and license were
retired in 2022), the documented video tags, and ``news:news``. Elements come
after ``loc``/``lastmod``/``changefreq``/``priority`` (the XSD's sequence) and
each namespace is declared on the ``urlset`` only when the document's source
can produce it.

The rules for a bad value (each logged and counted like any bad field):

* **alternates** are one group: the group is left out when any alternate is
  invalid, two share an ``hreflang``, or the entry's own loc is not among them
  (every URL must list all its alternates, itself included);
* an invalid **image**, **video** or **news** item is left out on its own;
* news older than two days loses its ``news:news`` (Google: "remove the
  news:news metadata"); past a source's declared maximum, extra items are left
  out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from typing import Any

from ..core.dates import LastmodError, format_lastmod, to_utc
from ..core.spec import (
    EXTENSION_NAMESPACES,
    HREFLANG,
    MAX_NEWS_PER_SITEMAP,
    NEWS_LANGUAGE,
    SITEMAP_NS,
    VIDEO_FIELDS,
)
from ..core.urls import XML_FORBIDDEN, LocError, Site, comparison_form
from .xml import DECLARATION, ESCAPE_GROWTH, URL_OVERHEAD, URLSET_CLOSE, escape

NAMESPACES = EXTENSION_NAMESPACES
"""Prefix -> namespace, in the order the ``urlset`` declares them."""
MAX_VIDEO_TAGS = 32
MAX_COUNTRIES = 250

# The longest values written (longer ones make the item invalid), so a page can be sized
# for its worst case before it is streamed.
MAX_HREFLANG = 35
MAX_TITLE = 100
MAX_DESCRIPTION = 2_048
MAX_TEXT = 256
"""Video uploader and tags, news publication name."""
MAX_NEWS_TITLE = 1_024

_COUNTRIES = re.compile(r"[A-Z]{2}(?: [A-Z]{2})*")
_PLATFORMS = re.compile(r"(?:web|mobile|tv)(?: (?:web|mobile|tv))*")


class ExtensionError(ValueError):
    """An extension value that cannot be written; the message says why."""


@dataclass(frozen=True, slots=True)
class Alternate:
    """One language version of a page: ``hreflang`` (``de``, ``en-GB``, ``x-default``) and
    its URL (absolute on any host, or relative to the base URL)."""

    hreflang: str
    href: str


@dataclass(frozen=True, slots=True)
class Image:
    """An image on the page (absolute on any host, e.g. a CDN, or relative)."""

    loc: str


@dataclass(frozen=True, slots=True)
class Video:
    """A video on the page. ``thumbnail_loc``, ``title``, ``description`` and one of
    ``content_loc`` / ``player_loc`` are required; the rest are Google's optional tags.
    ``restriction`` and ``platform`` are ``("allow" | "deny", ["US", "CA"] | ["web"])``."""

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: date | str | None = None
    rating: float | None = None
    view_count: int | None = None
    publication_date: date | str | None = None
    tags: Sequence[str] = ()
    family_friendly: bool | None = None
    restriction: tuple[str, Sequence[str]] | None = None
    requires_subscription: bool | None = None
    uploader: str | None = None
    platform: tuple[str, Sequence[str]] | None = None
    live: bool | None = None


@dataclass(frozen=True, slots=True)
class News:
    """A news article: its publication's name and language (``en``, ``zh-cn``), when it was
    first published, and its title."""

    publication_name: str
    language: str
    publication_date: date | str
    title: str


@dataclass(frozen=True, slots=True)
class Extensions:
    """The extension data of one entry, as a source gives it (unchecked)."""

    alternates: Sequence[Alternate] | Mapping[str, str] = ()
    images: Sequence[Image | str] = ()
    videos: Sequence[Video] = ()
    news: News | None = None


@dataclass(frozen=True, slots=True)
class Shape:
    """The most a source's entries carry: it sizes pages and declares namespaces.

    ``urls_per_row``: entries one row becomes (one per language with ``languages``).
    """

    urls_per_row: int = 1
    alternates: int = 0
    images: int = 0
    videos: int = 0
    news: bool = False

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The namespace prefixes its documents declare, in a fixed order."""
        used = (
            ("xhtml", self.alternates),
            ("image", self.images),
            ("video", self.videos),
            ("news", self.news),
        )
        return tuple(prefix for prefix, count in used if count)

    def page_size(self, max_urls: int, max_bytes: int, max_loc_length: int) -> int:
        """Rows per page such that no page can pass ``max_urls`` or ``max_bytes`` (or 1,000
        news), whatever the data: every entry counted at its longest."""
        per_url = URL_OVERHEAD + ESCAPE_GROWTH * max_loc_length + self.worst_case(max_loc_length)
        budget = max_bytes - len(DECLARATION + urlset_open(self.prefixes) + URLSET_CLOSE)
        urls = min(max_urls, budget // per_url)
        if self.news:
            urls = min(urls, MAX_NEWS_PER_SITEMAP)
        return max(1, urls // self.urls_per_row)

    def worst_case(self, max_loc_length: int) -> int:
        """Bytes the extension elements of one entry may take at most."""
        link = 6 * max_loc_length  # every character escaped to six bytes ("&apos;")
        size = self.alternates * (len(_alternate("", "")) + MAX_HREFLANG + link)
        size += self.images * (len(_image("")) + link)
        size += self.videos * _video_worst(link)
        if self.news:
            dates = len("2024-01-02T03:04:05+05:30")
            size += len(_news("", "zh-cn", "", "")) + 6 * (MAX_TEXT + MAX_NEWS_TITLE) + dates
        return size


def _video_worst(link: int) -> int:
    template = _video_element(
        {
            "thumbnail_loc": "",
            "title": "",
            "description": "",
            "content_loc": "",
            "player_loc": "",
            "duration": "28800",
            "expiration_date": "2024-01-02T03:04:05+05:30",
            "rating": "4.55",
            "view_count": "9" * 20,
            "publication_date": "2024-01-02T03:04:05+05:30",
            "tag": [""] * MAX_VIDEO_TAGS,
            "family_friendly": "yes",
            "restriction": ("allow", " ".join(["XX"] * MAX_COUNTRIES)),
            "requires_subscription": "yes",
            "uploader": "",
            "platform": ("allow", "web mobile tv"),
            "live": "yes",
        }
    )
    text = 6 * (MAX_TITLE + MAX_DESCRIPTION + MAX_TEXT * (1 + MAX_VIDEO_TAGS))
    return len(template) + 3 * link + text


@dataclass(frozen=True, slots=True)
class Failed:
    """Stands for a value whose function raised for this row (reported, then left out)."""

    error: Exception


@dataclass
class Checked:
    """Extension elements ready to write, and what was left out (for the bad-row report)."""

    xml: str = ""
    problems: list[str] = field(default_factory=list)


def check(
    extensions: Extensions,
    loc: str,
    site: Site,
    shape: Shape,
    naive_timezone: tzinfo,
    news_cutoff: datetime | None,
) -> Checked:
    """The XML of an entry's extensions (``loc`` is its checked loc), within ``shape``."""
    out = Checked()
    parts: list[str] = []
    for name in ("alternates", "images", "videos", "news"):
        value = getattr(extensions, name)
        if isinstance(value, Failed):
            out.problems.append(f"{name} left out: the function raised {value.error!r}")
            empty: dict[str, Any] = {name: None if name == "news" else ()}
            extensions = replace(extensions, **empty)
    if extensions.alternates:
        try:
            parts.append(alternates_xml(extensions.alternates, loc, site, shape.alternates))
        except ExtensionError as exc:
            out.problems.append(f"alternates left out: {exc}")
    _each(
        out,
        parts,
        "image",
        extensions.images,
        shape.images,
        lambda image: _image(escape(site.resolve_link(_image_loc(image)))),
    )
    _each(
        out,
        parts,
        "video",
        extensions.videos,
        shape.videos,
        lambda video: video_xml(video, site, naive_timezone),
    )
    if extensions.news is not None:
        if not shape.news:
            out.problems.append("news left out: the source does not declare news")
        else:
            try:
                news = news_xml(extensions.news, naive_timezone, news_cutoff)
                if news:
                    parts.append(news)
            except (ExtensionError, TypeError, ValueError) as exc:
                out.problems.append(f"news left out: {exc}")
    out.xml = "".join(parts)
    return out


def _each(
    out: Checked,
    parts: list[str],
    kind: str,
    items: Sequence[Any],
    limit: int,
    write: Callable[[Any], str],
) -> None:
    """Images or videos: each written on its own, the bad and those past ``limit`` left out."""
    items = list(items)
    if len(items) > limit:
        out.problems.append(f"{len(items) - limit} {kind}s past the limit left out")
        del items[limit:]
    for item in items:
        try:
            parts.append(write(item))
        except (ExtensionError, LocError, TypeError, ValueError) as exc:
            out.problems.append(f"{kind} left out: {exc}")


def alternates_xml(
    alternates: Sequence[Alternate] | Mapping[str, str], loc: str, site: Site, limit: int
) -> str:
    """Every alternate of a page, itself included, or :class:`ExtensionError`."""
    try:
        pairs = (
            list(alternates.items())
            if isinstance(alternates, Mapping)
            else [(a.hreflang, a.href) for a in alternates]
        )
    except (AttributeError, TypeError):
        raise ExtensionError(
            "alternates must be a {hreflang: url} mapping or a list of Alternate"
        ) from None
    if len(pairs) > limit:
        raise ExtensionError(f"{len(pairs)} alternates, more than the source declares ({limit})")
    seen: set[str] = set()
    links: list[str] = []
    hrefs: set[str] = set()
    for hreflang, href in pairs:
        if not isinstance(hreflang, str) or not HREFLANG.fullmatch(hreflang):
            raise ExtensionError(f"hreflang {hreflang!r} is not a language code or x-default")
        if hreflang.lower() in seen:
            raise ExtensionError(f"hreflang {hreflang!r} appears twice")
        seen.add(hreflang.lower())
        try:
            url = site.resolve_link(href)
        except (LocError, TypeError) as exc:
            raise ExtensionError(f"alternate {hreflang}: {exc}") from None
        hrefs.add(comparison_form(url))
        links.append(_alternate(hreflang, escape(url)))
    if comparison_form(loc) not in hrefs:  # "%c3" and "%C3" name one page
        raise ExtensionError("the page is not among its own alternates")
    return "".join(links)


def _alternate(hreflang: str, href: str) -> str:
    return f'<xhtml:link rel="alternate" hreflang="{hreflang}" href="{href}"/>'


def _image(loc: str) -> str:
    return f"<image:image><image:loc>{loc}</image:loc></image:image>"


def _image_loc(image: Image | str) -> str:
    if isinstance(image, Image):
        return image.loc
    if isinstance(image, str):
        return image
    raise TypeError(f"an image is an Image or a URL string, not {type(image).__name__}")


def _text(name: str, value: object, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExtensionError(f"{name} must be a non-empty string")
    value = value.strip()
    if len(value) > limit:
        raise ExtensionError(f"{name} is {len(value)} characters long; the limit is {limit}")
    bad = XML_FORBIDDEN.search(value)
    if bad is not None:
        raise ExtensionError(f"{name} contains U+{ord(bad.group()):04X}, forbidden in XML")
    return escape(value)


def _yes_no(name: str, value: object) -> str:
    if not isinstance(value, bool):
        raise ExtensionError(f"{name} must be True or False")
    return "yes" if value else "no"


def _count(name: str, value: object, low: int, high: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ExtensionError(f"{name} must be an integer from {low} to {high}")
    return str(value)


def _date(name: str, value: object, naive_timezone: tzinfo) -> str:
    try:
        return format_lastmod(value, naive_timezone)
    except (LastmodError, ValueError, OverflowError) as exc:
        raise ExtensionError(f"{name}: {exc}") from None


def _relationship(name: str, value: object, pattern: re.Pattern[str]) -> tuple[str, str]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ExtensionError(f"{name} must be ('allow' | 'deny', [codes])")
    relationship, codes = value
    if relationship not in ("allow", "deny") or isinstance(codes, str):
        raise ExtensionError(f"{name} must be ('allow' | 'deny', [codes])")
    if len(codes) > MAX_COUNTRIES:
        raise ExtensionError(f"{name} lists more than {MAX_COUNTRIES} codes")
    text = " ".join(str(code) for code in codes)
    if not pattern.fullmatch(text):
        raise ExtensionError(f"{name} codes {text[:60]!r} are not valid")
    return relationship, text


def video_xml(video: Video, site: Site, naive_timezone: tzinfo) -> str:
    """One ``video:video``, or :class:`ExtensionError` (or ``LocError``)."""
    if not isinstance(video, Video):
        raise TypeError(f"a video is a Video, not {type(video).__name__}")
    if video.content_loc is None and video.player_loc is None:
        raise ExtensionError("a video needs content_loc or player_loc")
    fields: dict[str, object] = {
        "thumbnail_loc": escape(site.resolve_link(video.thumbnail_loc)),
        "title": _text("title", video.title, MAX_TITLE),
        "description": _text("description", video.description, MAX_DESCRIPTION),
    }
    if video.content_loc is not None:
        fields["content_loc"] = escape(site.resolve_link(video.content_loc))
    if video.player_loc is not None:
        fields["player_loc"] = escape(site.resolve_link(video.player_loc))
    if video.duration is not None:
        fields["duration"] = _count("duration", video.duration, 1, 28_800)
    if video.expiration_date is not None:
        fields["expiration_date"] = _date("expiration_date", video.expiration_date, naive_timezone)
    if video.rating is not None:
        rating = video.rating
        if isinstance(rating, bool) or not isinstance(rating, int | float):
            raise ExtensionError("rating must be a number from 0.0 to 5.0")
        if not math.isfinite(rating) or not 0.0 <= rating <= 5.0:
            raise ExtensionError("rating must be a number from 0.0 to 5.0")
        text = f"{float(rating):.2f}".rstrip("0")
        fields["rating"] = text + "0" if text.endswith(".") else text
    if video.view_count is not None:
        fields["view_count"] = _count("view_count", video.view_count, 0, 10**20 - 1)
    if video.publication_date is not None:
        fields["publication_date"] = _date(
            "publication_date", video.publication_date, naive_timezone
        )
    tags = list(video.tags)
    if isinstance(video.tags, str) or len(tags) > MAX_VIDEO_TAGS:
        raise ExtensionError(f"tags must be a list of at most {MAX_VIDEO_TAGS} strings")
    fields["tag"] = [_text("tag", tag, MAX_TEXT) for tag in tags]
    if video.family_friendly is not None:
        fields["family_friendly"] = _yes_no("family_friendly", video.family_friendly)
    if video.restriction is not None:
        fields["restriction"] = _relationship("restriction", video.restriction, _COUNTRIES)
    if video.requires_subscription is not None:
        fields["requires_subscription"] = _yes_no(
            "requires_subscription", video.requires_subscription
        )
    if video.uploader is not None:
        fields["uploader"] = _text("uploader", video.uploader, MAX_TEXT)
    if video.platform is not None:
        fields["platform"] = _relationship("platform", video.platform, _PLATFORMS)
    if video.live is not None:
        fields["live"] = _yes_no("live", video.live)
    return _video_element(fields)


def _video_element(fields: Mapping[str, object]) -> str:
    parts = ["<video:video>"]
    for name in VIDEO_FIELDS:  # the XSD's order
        if name not in fields:
            continue
        value: Any = fields[name]
        if name == "tag":
            parts += (f"<video:tag>{tag}</video:tag>" for tag in value)
        elif name in ("restriction", "platform"):
            relationship, codes = value
            parts.append(f'<video:{name} relationship="{relationship}">{codes}</video:{name}>')
        else:
            parts.append(f"<video:{name}>{value}</video:{name}>")
    parts.append("</video:video>")
    return "".join(parts)


def news_xml(news: News, naive_timezone: tzinfo, cutoff: datetime | None) -> str:
    """One ``news:news``; ``""`` when the article is older than ``cutoff`` (two days)."""
    if not isinstance(news, News):
        raise TypeError(f"news is a News, not {type(news).__name__}")
    published = to_utc(news.publication_date, naive_timezone)
    if published is None:
        raise ExtensionError(f"publication_date {news.publication_date!r} is not a date")
    if cutoff is not None and published < cutoff:
        return ""
    language = news.language.lower() if isinstance(news.language, str) else news.language
    if not isinstance(language, str) or not NEWS_LANGUAGE.fullmatch(language):
        raise ExtensionError(
            f"language {news.language!r} must be an ISO 639 code such as 'en' (or zh-cn/zh-tw)"
        )
    return _news(
        _text("publication_name", news.publication_name, MAX_TEXT),
        language,
        _date("publication_date", news.publication_date, naive_timezone),
        _text("title", news.title, MAX_NEWS_TITLE),
    )


def _news(name: str, language: str, published: str, title: str) -> str:
    return (
        f"<news:news><news:publication><news:name>{name}</news:name>"
        f"<news:language>{language}</news:language></news:publication>"
        f"<news:publication_date>{published}</news:publication_date>"
        f"<news:title>{title}</news:title></news:news>"
    )


def urlset_open(prefixes: Sequence[str]) -> str:
    """The opening ``urlset`` tag declaring the sitemap namespace and ``prefixes``."""
    declarations = "".join(f' xmlns:{prefix}="{NAMESPACES[prefix]}"' for prefix in prefixes)
    return f'<urlset xmlns="{SITEMAP_NS}"{declarations}>\n'
