"""Extension data for SQLAlchemy sources: alternates, languages, images, videos, news.

Options of :class:`~sitemap_middleware.SQLAlchemySource` (and the async one):

* ``languages=["en", "de"]`` with a loc template holding ``{lang}``
  (``"/{lang}/articles/{slug}"``): every row is listed once per language, each
  URL with the alternates of all languages (itself included), and
  ``x_default="en"`` adds ``hreflang="x-default"`` pointing at that language's URL;
  on :class:`~sitemap_middleware.contrib.django.DjangoSource`, ``x_default=True`` points it where
  Django's i18n sitemaps do (``Sitemap.x_default = True``): at ``LANGUAGE_CODE``'s URL
  without its ``/{lang}/`` prefix;
* ``alternates=callable(row)`` returning ``{hreflang: url}`` (at most
  ``max_alternates``) when the versions are not one template;
* ``images="column"`` (one image URL, or NULL) or ``images=callable(row)``
  returning URLs or :class:`~sitemap_middleware.Image` (at most ``max_images``);
* ``videos=callable(row)`` returning :class:`~sitemap_middleware.Video` (at most
  ``max_videos``);
* ``news=callable(row)`` returning a :class:`~sitemap_middleware.News` or None.

The maxima size the pages (the worst case must fit the byte limit) and name
the namespaces the ``urlset`` declares.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, cast

from ..core.dates import Unreadable
from ..core.spec import MAX_IMAGES
from ..output.entry import Batch
from ..output.extensions import Extensions, Failed, Shape
from ..settings import ConfigurationError, ConfigurationTypeError
from ..state.bad_rows import LanguageKey

RowFunction = Callable[[Any], Any]


class ExtensionOptions(TypedDict, total=False):
    """The extension options of a SQL source (:class:`~sitemap_middleware.SQLAlchemySource`,
    the async one and :class:`~sitemap_middleware.contrib.django.DjangoSource`), keywords
    of their constructors."""

    languages: Sequence[str] | None
    """Each row listed once per language: the loc template holds ``{lang}``."""
    x_default: str | bool | None
    """The language whose URL ``hreflang="x-default"`` points at (``True`` on a
    ``DjangoSource``: ``LANGUAGE_CODE``'s URL without its ``/{lang}/`` prefix)."""
    alternates: RowFunction | None
    """``callable(row)`` returning ``{hreflang: url}``, when the versions are not one
    template."""
    max_alternates: int | None
    """The most alternates ``alternates`` returns for a row (sizes the pages)."""
    images: str | RowFunction | None
    """A selected column (one image URL, or NULL), or ``callable(row)`` returning URLs or
    :class:`~sitemap_middleware.Image`."""
    max_images: int | None
    """The most images a row has (sizes the pages)."""
    videos: RowFunction | None
    """``callable(row)`` returning :class:`~sitemap_middleware.Video`."""
    max_videos: int | None
    """The most videos a row has (sizes the pages)."""
    news: RowFunction | None
    """``callable(row)`` returning a :class:`~sitemap_middleware.News` or None."""


OPTIONS = tuple(ExtensionOptions.__annotations__)
"""The names of the extension options, in their declared order."""


def extras_spec(
    name: str,
    columns: Sequence[str],
    loc: object,
    options: Mapping[str, Any],
    default_language: str | None = None,
) -> ExtrasSpec:
    """The extension options a source was given (an unknown option is named: a caller
    that is not type-checked may pass any keyword);
    ``default_language``: the language ``x_default=True`` names (Django's ``LANGUAGE_CODE``),
    None where ``x_default=True`` means nothing."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigurationTypeError(
            f"{unknown[0]}: source {name!r}: not an option; the extension options are "
            f"{', '.join(OPTIONS)}"
        )
    return ExtrasSpec(name, columns, loc, cast(ExtensionOptions, options), default_language)


class ExtrasSpec:
    """The extension options of one source, checked at construction."""

    def __init__(
        self,
        name: str,
        columns: Sequence[str],
        loc: object,
        options: ExtensionOptions,
        default_language: str | None = None,
    ) -> None:
        languages, x_default = options.get("languages"), options.get("x_default")
        alternates, images = options.get("alternates"), options.get("images")
        videos, news = options.get("videos"), options.get("news")
        max_alternates, max_images = options.get("max_alternates"), options.get("max_images")
        max_videos = options.get("max_videos")
        _check_callables(name, alternates=alternates, videos=videos, news=news, images=images)
        self.languages = _languages(name, languages, loc, alternates)
        self.templates = [str(loc).replace("{lang}", lang) for lang in self.languages]
        self.x_default_template: str | None = None
        """The loc template of x-default when it is no language's URL (Django's form)."""
        if x_default is False:
            x_default = None
        elif x_default is True:
            x_default, self.x_default_template = _unprefixed(
                name, self.languages, loc, default_language
            )
        if x_default is not None and x_default not in self.languages:
            raise _fail(name, "x_default", f"{x_default!r} must be one of {list(self.languages)}")
        self.x_default = x_default
        self.alternates = alternates
        if isinstance(images, str):
            if images not in columns:
                raise _fail(
                    name,
                    "images",
                    f"{images!r} is not a selected column; select it, or use one of: "
                    f"{', '.join(columns)}",
                )
            self.image_column: int | None = list(columns).index(images)
            self.images: RowFunction | None = None
        else:
            self.image_column, self.images = None, images
        self.videos, self.news = videos, news
        alternates_count = 0
        if self.languages:
            alternates_count = len(self.languages) + (x_default is not None)
        elif alternates is not None:
            alternates_count = _limit(name, "max_alternates", max_alternates, 10, 1_000)
        image_count = 0
        if self.image_column is not None:
            image_count = 1
        elif images is not None:
            image_count = _limit(name, "max_images", max_images, 10, MAX_IMAGES)
        video_count = 0
        if videos is not None:
            video_count = _limit(name, "max_videos", max_videos, 1, 1_000)
        self.shape = Shape(
            urls_per_row=max(1, len(self.languages)),
            alternates=alternates_count,
            images=image_count,
            videos=video_count,
            news=news is not None,
        )
        self.active = self.shape != Shape()
        self.language_templates: list[Callable[[Sequence[Any]], list[Any]]] = []
        """Set by the source: each language's loc template, column-wise over rows."""
        self.x_default_locs: Callable[[Sequence[Any]], list[Any]] | None = None
        """Set by the source: :attr:`x_default_template`, column-wise over rows."""

    @property
    def first_loc(self) -> str | None:
        """The loc template of the first language (for the source's own row mapping)."""
        return self.templates[0] if self.templates else None

    def fingerprint(self) -> str:
        functions = [
            f"{f.__module__}.{getattr(f, '__qualname__', repr(f))}"
            for f in (self.alternates, self.images, self.videos, self.news)
            if f is not None
        ]
        return repr(
            (
                self.languages,
                self.x_default,
                self.x_default_template,
                self.image_column,
                functions,
                self.shape,
            )
        )

    def apply(self, batch: Batch, rows: Sequence[Any]) -> Batch:
        """``batch`` with each row's extension data; with languages, one entry per language."""
        extras = [self._extras(row) for row in rows]
        per_language = [column(rows) for column in self.language_templates]
        x_defaults = None if self.x_default_locs is None else self.x_default_locs(rows)
        if not self.languages:
            return _with(batch, list(batch.locs), extras, list(batch.keys), 1)
        count = len(self.languages)
        locs: list[Any] = []
        keys: list[Any] = []
        all_extras: list[Extensions | None] = []
        for i, key in enumerate(batch.keys):
            versions = {lang: per_language[j][i] for j, lang in enumerate(self.languages)}
            if isinstance(batch.locs[i], Unreadable):  # a row that cannot be listed (NULL key)
                versions = dict.fromkeys(self.languages, batch.locs[i])
            alternates: dict[str, Any] = dict(versions)
            if x_defaults is not None and not isinstance(batch.locs[i], Unreadable):
                alternates["x-default"] = x_defaults[i]
            elif self.x_default is not None:
                alternates["x-default"] = versions[self.x_default]
            base = extras[i] or Extensions()
            for lang in self.languages:
                locs.append(versions[lang])
                keys.append(LanguageKey(key, lang))
                all_extras.append(Extensions(alternates, base.images, base.videos, base.news))
        return _with(batch, locs, all_extras, keys, count)

    def _extras(self, row: Any) -> Extensions | None:
        alternates: Mapping[str, str] = {}
        images: Sequence[Any] = ()
        videos: Sequence[Any] = ()
        news = None
        if self.alternates is not None:
            alternates = _call(self.alternates, row) or {}
        if self.image_column is not None:
            value = row[self.image_column]
            images = () if value is None else (value,)
        elif self.images is not None:
            images = _call(self.images, row) or ()
        if self.videos is not None:
            videos = _call(self.videos, row) or ()
        if self.news is not None:
            news = _call(self.news, row)
        if not (alternates or images or videos or news is not None):
            return None
        return Extensions(alternates, images, videos, news)


def _call(function: RowFunction, row: Any) -> Any:
    # A function failing on one row is a bad value of that row, not a failed sitemap.
    try:
        return function(row)
    except Exception as exc:
        return Failed(exc)


def _with(
    batch: Batch, locs: list[Any], extras: list[Extensions | None], keys: list[Any], times: int
) -> Batch:
    def repeat(column: Sequence[Any]) -> list[Any]:
        return [value for value in column for _ in range(times)]

    return Batch(
        keys,
        locs,
        repeat(batch.lastmods),
        repeat(batch.changefreqs),
        repeat(batch.priorities),
        extras=extras,
    )


def _fail(name: str, setting: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"{setting}: source {name!r}: {problem}")


def _check_callables(name: str, images: object, **functions: object) -> None:
    for setting, function in functions.items():
        if function is not None and not callable(function):
            raise ConfigurationTypeError(
                f"{setting}: source {name!r}: must be a function taking the row, "
                f"got {type(function).__name__}"
            )
    if images is not None and not isinstance(images, str) and not callable(images):
        raise ConfigurationTypeError(
            f"images: source {name!r}: must name a column or be a function taking the row, "
            f"got {type(images).__name__}"
        )


def _languages(
    name: str, languages: Sequence[str] | None, loc: object, alternates: object
) -> tuple[str, ...]:
    """The languages, checked: distinct names, no alternates beside, a loc holding {lang}."""
    if languages is None:
        return ()
    if (
        isinstance(languages, str | bytes)
        or not isinstance(languages, Sequence)
        or not all(isinstance(lang, str) and lang for lang in languages)
    ):
        raise _fail(name, "languages", f"must be a list such as ['en', 'de'], got {languages!r}")
    if not languages:
        raise _fail(name, "languages", "must be a non-empty list such as ['en', 'de']")
    if len(set(languages)) != len(languages):
        raise _fail(name, "languages", f"must not repeat a language, got {list(languages)}")
    if alternates is not None:
        raise _fail(name, "languages", "give languages or alternates, not both")
    if not isinstance(loc, str) or "lang" not in {
        field for _, field, _, _ in string.Formatter().parse(loc) if field
    }:
        raise _fail(
            name,
            "languages",
            "loc must then be a template holding {lang}, e.g. '/{lang}/articles/{slug}'",
        )
    return tuple(languages)


def _unprefixed(
    name: str, languages: Sequence[str], loc: object, default_language: str | None
) -> tuple[str, str]:
    """``x_default=True``: the default language, and the template of its URL without the
    language's prefix, as Django's i18n sitemaps write x-default."""
    if default_language is None:
        raise _fail(
            name,
            "x_default",
            "True (Django's form) is DjangoSource's; give one of the languages, e.g. "
            f"{languages[0] if languages else 'en'!r}",
        )
    if default_language not in languages:
        raise _fail(
            name,
            "x_default",
            f"True points x-default at LANGUAGE_CODE {default_language!r}'s URL, but it is "
            f"not one of the languages {list(languages)}; add it, or name one of them",
        )
    if not isinstance(loc, str) or "/{lang}/" not in loc:
        raise _fail(
            name,
            "x_default",
            "True writes LANGUAGE_CODE's URL without its '/{lang}/' prefix, as Django's "
            f"i18n_patterns serve it; loc {loc!r} holds no '/{{lang}}/'",
        )
    return default_language, loc.replace("/{lang}/", "/", 1)


def _limit(name: str, setting: str, value: int | None, default: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise _fail(name, setting, f"must be an integer from 1 to {high}, got {value!r}")
    return value
