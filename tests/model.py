"""A reference model of what the sitemap must serve for a table, written from the README and
the decided rules R1-R12, apart from the package (nothing of it is imported here).

Slow and simple on purpose: the property tests in ``test_model.py`` compare every served
document with it. The rules it encodes, one function each:

* ``page_width`` -- rows per page: ``max_urls`` URLs, one row giving one URL per language;
  at most 1,000 URLs with news (README "Pages and limits"; the byte bound never binds for the
  settings the tests use).
* ``pages`` -- rows with a NULL key are never listed (R5); a single integer key >= 0 pages by
  fixed key ranges, ``(n - 1) * W <= k < n * W``; once any key is below 0 the source is cut
  every ``W`` rows in key order instead (R5). Rows with a bad loc still occupy their place.
* ``final_uri`` -- a loc is a path relative to ``base_url``; IRIs become URIs (non-ASCII as
  UTF-8 escapes, characters a URI cannot hold escaped, ``%XX`` kept, a lone ``%`` as ``%25``,
  a second ``#`` escaped); whitespace at either end is encoded, never stripped (R6); a
  character XML forbids, a dot segment (R6) or more than ``max_loc_length`` characters make a
  bad row. A loc template escapes ``?`` and ``#`` in column values (README "Locs").
* ``lastmod_instant`` / ``w3c`` -- stored text is read with ``datetime.fromisoformat`` (as
  SQLAlchemy reads SQLite's dates), naive values in UTC, timestamptz values as instants; any
  other stored value is a bad field (R1); later than now + ``lastmod_tolerance`` is a bad
  field (R3). Written as ``YYYY-MM-DDThh:mm:ss+hh:mm``: the offset kept (UTC for
  timestamptz and for offsets with seconds), fractions dropped (README "Lastmod").
* ``changefreq_text`` -- one of the seven values; case and surrounding whitespace are not
  significant (the README is silent; this is the behaviour the package always had).
* ``priority_text`` -- a finite number from 0.0 to 1.0, written as a plain decimal; anything
  else (7, -1, NaN, 'abc') is a bad field (R1).
* ``image_uri`` -- an image URL is relative to ``base_url`` or absolute on any http(s) host,
  encoded like a loc; anything else is a bad field.
* ``alternates`` -- with ``languages``, every URL of a row lists every language version
  (itself included) and ``x-default``; the group is left out when any version is bad.
* ``urlset`` -- duplicate locs in one document (compared in RFC 3986 comparison form):
  the first in document order is kept (R7).
* ``newest`` -- ``Last-Modified`` and an index child's ``lastmod`` are the newest good
  lastmod (R2, R3): never a bad or future one, never older than the newest URL served.
* ``documents`` -- the root is a ``urlset`` when ``index="auto"``, there is one source and
  its rows fit on one page; otherwise a ``sitemapindex`` of every non-empty page. A document
  with nothing to list is not found (404).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlsplit

CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
TEMPLATE = "/p/{slug}"
LANGUAGE_TEMPLATE = "/{lang}/p/{slug}"
CALLABLE_PREFIX = "/c/"
"""The loc callable of the tests: ``CALLABLE_PREFIX + row.slug`` (None for a NULL slug)."""
NEWS_PUBLICATION = ("Example Times", "en")

# Characters that may stand in a URI's path, query and fragment as they are (RFC 3986).
URI_SAFE = "!$&'()*+,;=:@/?#%~"
FRAGMENT_SAFE = URI_SAFE.replace("#", "")
LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
DOT_SEGMENTS = {".", "..", "%2e", ".%2e", "%2e.", "%2e%2e"}


class Bad(Exception):
    """A value the rules reject (a bad row for a loc, a bad field otherwise)."""


INFINITY = "infinity"
"""A PostgreSQL timestamptz no Python datetime can hold ('infinity', '-infinity')."""


@dataclass(frozen=True)
class Row:
    """One row of the table, every value as the database stores it."""

    key: int | None
    slug: object = None
    lastmod: object = None
    """SQLite: the stored text or number; PostgreSQL: an aware datetime or INFINITY."""
    changefreq: object = None
    priority: object = None
    image: object = None


@dataclass(frozen=True)
class SourceOptions:
    """A source over the table, as the tests build it."""

    name: str
    loc: str = "template"
    """"template" (TEMPLATE, or LANGUAGE_TEMPLATE with languages) or "callable"."""
    languages: tuple[str, ...] = ()
    x_default: str | None = None
    changefreq: str | None = None
    changefreq_column: bool = False
    priority: float | None = None
    priority_column: bool = False
    images: bool = False
    videos: bool = False
    news: bool = False


@dataclass(frozen=True)
class Settings:
    base_url: str
    max_urls: int
    max_loc_length: int
    index: str
    now: datetime
    lastmod_tolerance: float = 60.0

    @property
    def origin(self) -> str:
        scheme, _, rest = self.base_url.partition("://")
        return f"{scheme}://{rest.partition('/')[0]}"


@dataclass(frozen=True)
class Url:
    """One ``<url>`` exactly as it must be served."""

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None
    images: tuple[str, ...] = ()
    alternates: tuple[tuple[str, str], ...] = ()
    """(hreflang, href) pairs, sorted."""
    videos: tuple[tuple[str, str], ...] = ()
    """(thumbnail_loc, title) of each video."""
    news: tuple[tuple[str, str, str], ...] = ()
    """(publication name, language, title)."""


@dataclass(frozen=True)
class Newest:
    """What a document's ``Last-Modified`` (or an index child's ``lastmod``) may be."""

    served: datetime | None = None
    """The newest lastmod among the URLs served: the value may not be older."""
    allowed: frozenset[datetime] = frozenset()
    """Every good lastmod of the document's rows, in whole seconds: the value is one of them."""
    ticks: bool = False
    """The document lists news: its validators follow the clock's ``news_tick`` (README), so
    its Last-Modified is the tick's, not a row's."""

    def __or__(self, other: Newest) -> Newest:
        served = [t for t in (self.served, other.served) if t is not None]
        return Newest(
            max(served, default=None), self.allowed | other.allowed, self.ticks or other.ticks
        )


@dataclass(frozen=True)
class Child:
    loc: str
    newest: Newest


@dataclass(frozen=True)
class Document:
    path: str
    urls: tuple[Url, ...] = ()
    children: tuple[Child, ...] | None = None
    """A ``sitemapindex``'s children; None for a ``urlset``."""
    newest: Newest = field(default_factory=Newest)
    rows: int = 0
    """Rows with a key in the document: HEAD reads no rows, so a document whose every row is
    rejected may answer HEAD with 200 (README "The bad-row rule"), one without any 404."""

    @property
    def found(self) -> bool:
        return bool(self.children if self.children is not None else self.urls)


# --- pages --------------------------------------------------------------------------------


def page_width(source: SourceOptions, settings: Settings) -> int:
    urls = min(settings.max_urls, 1_000) if source.news else settings.max_urls
    return max(1, urls // max(1, len(source.languages)))


def pages(rows: Iterable[Row], page_size: int) -> list[tuple[int, list[Row]]]:
    """(page number, rows in key order) of every non-empty page."""
    keyed = sorted((row for row in rows if row.key is not None), key=lambda row: row.key or 0)
    numbered: dict[int, list[Row]] = {}
    cut = any((row.key or 0) < 0 for row in keyed)
    for position, row in enumerate(keyed):
        assert row.key is not None
        number = position // page_size + 1 if cut else row.key // page_size + 1
        numbered.setdefault(number, []).append(row)
    return sorted(numbered.items())


# --- locs and links -----------------------------------------------------------------------


def encode(rest: str) -> str:
    """An IRI's path, query and fragment as a URI's: ``%XX`` kept, a lone ``%`` escaped, the
    first ``#`` starts the fragment and later ones are escaped."""
    head, hash_, fragment = LONE_PERCENT.sub("%25", rest).partition("#")
    uri = quote(head, safe=URI_SAFE)
    return uri + hash_ + quote(fragment, safe=FRAGMENT_SAFE) if hash_ else uri


def has_dot_segment(url: str, origin: str) -> bool:
    path = re.split(r"[?#]", url[len(origin) :], maxsplit=1)[0]
    return any(segment.lower() in DOT_SEGMENTS for segment in path.split("/"))


def final_uri(loc: object, settings: Settings) -> str:
    """The URI a loc (a path relative to ``base_url``) is served as; ``Bad``: the row is
    skipped."""
    if not isinstance(loc, str):
        raise Bad("loc missing")
    if XML_FORBIDDEN.search(loc):
        raise Bad("character XML forbids")
    url = settings.base_url + encode(loc.lstrip("/"))
    if has_dot_segment(url, settings.origin):
        raise Bad("dot segment")
    if len(url) > settings.max_loc_length:
        raise Bad("too long")
    return url


def template_value(value: object) -> str:
    """A column's value in a loc template (a path): data, so a ``%`` is a character (never
    an escape) and ``?`` or ``#`` cannot add a query or fragment."""
    if value is None:
        raise Bad("NULL in a loc template")
    return str(value).replace("%", "%25").replace("?", "%3F").replace("#", "%23")


def row_loc(row: Row, source: SourceOptions, language: str | None) -> str:
    """The loc a row names, before the loc rule: the template or the tests' callable."""
    if source.loc == "callable":
        if row.slug is None:
            raise Bad("the callable gave no loc")
        return CALLABLE_PREFIX + str(row.slug)
    template = TEMPLATE if language is None else LANGUAGE_TEMPLATE.replace("{lang}", language)
    return template.replace("{slug}", template_value(row.slug))


def image_uri(value: object, settings: Settings) -> str:
    """An image URL as served; ``Bad``: the image is left out."""
    if not isinstance(value, str) or not value or value.startswith("//"):
        raise Bad("not an image URL")
    if XML_FORBIDDEN.search(value):
        raise Bad("character XML forbids")
    if SCHEME.match(value):
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise Bad("not an http(s) URL")
        rest = value[value.index("//") + 2 :]
        rest = rest[len(rest.split("/", 1)[0]) :] or "/"
        url = f"{parts.scheme.lower()}://{parts.hostname}" + encode(rest)
    else:
        url = settings.base_url + encode(value.lstrip("/"))
    if len(url) > settings.max_loc_length:
        raise Bad("too long")
    return url


# --- optional fields ----------------------------------------------------------------------


def lastmod_instant(stored: object, settings: Settings) -> datetime | None:
    """The lastmod of a row as an aware datetime (its own offset kept), None when absent;
    ``Bad`` when it is unreadable or in the future."""
    if stored is None:
        return None
    if isinstance(stored, datetime):  # a timestamptz: an instant, written in UTC
        value = stored.astimezone(UTC)
    elif isinstance(stored, str) and stored != INFINITY:
        try:
            value = datetime.fromisoformat(stored)
        except ValueError:
            raise Bad("unreadable lastmod") from None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
    else:
        raise Bad("unreadable lastmod")
    if value > settings.now + timedelta(seconds=settings.lastmod_tolerance):
        raise Bad("future lastmod")
    return value


def w3c(value: datetime) -> str:
    offset = value.utcoffset() or timedelta(0)
    if offset.seconds % 60 or offset.microseconds:
        value, offset = value.astimezone(UTC), timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T"
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    )


def changefreq_text(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().lower() not in CHANGEFREQS:
        raise Bad("unknown changefreq")
    return value.strip().lower()


def priority_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise Bad("priority is a bool")
    try:
        number = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Bad("priority is not a number") from None
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise Bad("priority outside 0.0..1.0")
    text = f"{abs(number):.4f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def optional(rule: object, value: object) -> object:
    """A bad optional field is dropped: the URL stays without it."""
    try:
        return rule(value)  # type: ignore[operator]
    except Bad:
        return None


# --- one row, one document ----------------------------------------------------------------


def alternates(locs: dict[str, str | None], source: SourceOptions) -> tuple[tuple[str, str], ...]:
    """Every language version of a row and x-default; none when one version is bad."""
    if not source.languages or any(locs[lang] is None for lang in source.languages):
        return ()
    pairs = {lang: str(locs[lang]) for lang in source.languages}
    if source.x_default is not None:
        pairs["x-default"] = pairs[source.x_default]
    return tuple(sorted(pairs.items()))


def row_urls(row: Row, source: SourceOptions, settings: Settings) -> list[Url]:
    """The URLs of one row in document order (one per language), bad ones left out."""
    languages: Sequence[str | None] = source.languages or (None,)
    locs: dict[str, str | None] = {}
    for language in languages:
        try:
            locs[str(language)] = final_uri(row_loc(row, source, language), settings)
        except Bad:
            locs[str(language)] = None
    instant = optional(lambda value: lastmod_instant(value, settings), row.lastmod)
    changefreq = optional(changefreq_text, row.changefreq) if source.changefreq_column else None
    priority = optional(priority_text, row.priority) if source.priority_column else None
    image = optional(lambda value: image_uri(value, settings), row.image) if source.images else None
    key = row.key
    group = alternates(locs, source)
    return [
        Url(
            loc=loc,
            lastmod=w3c(instant) if isinstance(instant, datetime) else None,
            changefreq=source.changefreq if changefreq is None else str(changefreq),
            priority=priority_text(source.priority) if priority is None else str(priority),
            images=(str(image),) if image is not None else (),
            alternates=group,
            videos=video(key, settings) if source.videos else (),
            news=((*NEWS_PUBLICATION, f"News {key}"),) if source.news else (),
        )
        for loc in (locs[str(language)] for language in languages)
        if loc is not None
    ]


def video(key: object, settings: Settings) -> tuple[tuple[str, str], ...]:
    """The tests' one video of a row: left out when one of its URLs is too long."""
    thumbnail = f"{settings.base_url}thumbs/{key}.jpg"
    content = f"{settings.base_url}m/{key}.mp4"
    if max(len(thumbnail), len(content)) > settings.max_loc_length:
        return ()
    return ((thumbnail, f"Video {key}"),)


def seconds(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(microsecond=0)


def newest(
    rows: Sequence[Row], urls: Sequence[Url], source: SourceOptions, settings: Settings
) -> Newest:
    allowed = set()
    for row in rows:
        instant = optional(lambda value: lastmod_instant(value, settings), row.lastmod)
        if isinstance(instant, datetime):
            allowed.add(seconds(instant))
    served = [seconds(datetime.fromisoformat(url.lastmod)) for url in urls if url.lastmod]
    return Newest(max(served, default=None), frozenset(allowed), source.news)


def urlset_document(
    path: str, rows: Sequence[Row], source: SourceOptions, settings: Settings
) -> Document:
    """A urlset of rows in key order; a loc already listed in it is a bad row (R7)."""
    urls: list[Url] = []
    seen: set[str] = set()
    for row in rows:
        for url in row_urls(row, source, settings):
            same = comparison_form(url.loc)
            if same not in seen:
                seen.add(same)
                urls.append(url)
    return Document(path, tuple(urls), None, newest(rows, urls, source, settings), len(rows))


UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
ESCAPE = re.compile("%([0-9A-Fa-f]{2})")


def comparison_form(uri: str) -> str:
    """RFC 3986 section 6.2.2: one resource, however its escapes are spelt (escapes in
    uppercase, escaped unreserved characters decoded): ``%c3`` is ``%C3``, ``%41`` is ``A``."""

    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in UNRESERVED else "%" + match.group(1).upper()

    return ESCAPE.sub(one, uri)


def documents(
    rows: Sequence[Row], sources: Sequence[SourceOptions], settings: Settings
) -> dict[str, Document]:
    """Every document by request path: the root ``/sitemap.xml`` and each page."""
    served: dict[str, Document] = {}
    children: list[Child] = []
    for source in sources:
        for number, page in pages(rows, page_width(source, settings)):
            path = f"/sitemap-{source.name}-{number}.xml"
            served[path] = urlset_document(path, page, source, settings)
            # An index child's lastmod is its rows' newest (news ticks move validators only).
            child = replace(served[path].newest, ticks=False)
            children.append(Child(settings.base_url + path[1:], child))
    keyed = [row for row in rows if row.key is not None]
    if (
        settings.index == "auto"
        and len(sources) == 1
        and len(keyed) <= page_width(sources[0], settings)
    ):
        keyed.sort(key=lambda row: row.key or 0)
        served["/sitemap.xml"] = urlset_document("/sitemap.xml", keyed, sources[0], settings)
    else:
        total = Newest(ticks=any(source.news for source in sources))
        for child in children:
            total = total | child.newest
        served["/sitemap.xml"] = Document("/sitemap.xml", (), tuple(children), total, len(keyed))
    return served
