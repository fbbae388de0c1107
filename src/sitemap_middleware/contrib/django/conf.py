"""The ``SITEMAP_MIDDLEWARE`` setting: one dict, read once the apps are ready.

``{"sources": ..., "base_url": ..., **other settings}``: ``sources`` is what the other
adapters take as ``sources=`` or the dotted path of it, or of a function with no arguments
returning it (QuerySets cannot be built while the settings module is imported); the
optional ``purger`` likewise (a :class:`~sitemap_middleware.Purger`, or the dotted path of
one or of a function returning one). The rest
are the fields of :class:`~sitemap_middleware.Settings`, a group as a dict of its fields
(``'limits': {'max_urls': 1000}``) or as its class. Errors name the setting as
``SITEMAP_MIDDLEWARE['base_url']`` (``SITEMAP_MIDDLEWARE['limits']['max_urls']`` in a group)
and say the fix.

``{"sites": ..., **shared settings}`` instead: a sitemap per host, ``sites`` a mapping
``host -> SiteConfig``, a resolver ``host -> SiteConfig | None`` (sync or async; see
:func:`~sitemap_middleware.contrib.django.sites.sites_from_django` for the sites framework's
``Site`` objects), or the dotted path of either.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from ...core.sitemap import Sitemap
from ...core.sites import Sites
from ...settings import ConfigurationError, Settings, make_settings, make_shared_settings
from ...sources.base import Source
from ...state.purges import Purger

SETTING = "SITEMAP_MIDDLEWARE"
EXAMPLE = (
    "SITEMAP_MIDDLEWARE = {'sources': 'mysite.sitemaps.sources', "
    "'base_url': 'https://example.com/'}"
)


@dataclass(frozen=True)
class Configured:
    """What the setting describes: the sources (resolved) and the validated settings."""

    sources: object
    settings: Settings
    setting: str = SETTING
    """The name of the Django setting it was read from."""
    sites: object = None
    """``sites`` (resolved), instead of ``sources``; then ``settings`` are the shared ones."""
    purger: Purger | None = None
    """Told the surrogate keys of the documents that changed."""

    @property
    def options(self) -> dict[str, Any]:
        """The settings as keyword options of the other adapters."""
        options = {
            name: getattr(self.settings, name) for name in self.settings.__dataclass_fields__
        }
        if self.sites is not None:  # the shared settings have no base URL of their own
            for name in ("base_url", "allowed_hosts", "indexnow"):
                del options[name]
        return options

    def sitemap(self) -> Sitemap:
        served = self.served()
        if isinstance(served, Sites):
            raise SettingError(
                f"{self.setting}['sites']: this needs one sitemap ('sources' and 'base_url')"
            )
        return served

    def served(self) -> Sitemap | Sites:
        """The sitemap of ``sources``, or the sites of ``sites``."""
        if self.sites is not None:
            try:
                return Sites(self.sites, self.settings, purger=self.purger)
            except ConfigurationError as exc:
                raise named(exc, self.setting) from exc
        try:
            return Sitemap(self.sources, self.settings, self.purger)
        except ConfigurationError as exc:  # the settings are valid: the sources are not
            if str(exc).startswith(("purger:", "headers.")):
                raise named(exc, self.setting) from exc
            raise SettingError(f"{self.setting}['sources']: {exc}") from exc


class SettingError(ImproperlyConfigured, ConfigurationError):  # type: ignore[misc]
    """A wrong ``SITEMAP_MIDDLEWARE``: Django's ``ImproperlyConfigured``, and the
    ``ConfigurationError`` the other adapters raise."""


def named(error: ConfigurationError, setting: str = SETTING) -> SettingError:
    """A setting's error as Django reports it: the setting's key in front."""
    key, colon, problem = str(error).partition(": ")
    if colon and key.startswith("sites"):  # sites['example.com'].limits.max_urls
        return SettingError(f"{setting}['sites']{key[5:]}: {problem}")
    if not colon or " " in key:
        return SettingError(f"{setting}: {error}")
    keys = "".join(f"[{part!r}]" for part in key.split("."))  # limits.max_urls: a group's
    return SettingError(f"{setting}{keys}: {problem}")


def configured(setting: str = SETTING) -> Configured:
    """The Django setting ``setting``, validated; a :class:`SettingError` naming it when wrong."""
    return _configured(getattr(django_settings, setting, None), setting)


def _configured(options: object, setting: str) -> Configured:
    if options is None:
        raise SettingError(f"{setting}: not set; add to the settings e.g. {EXAMPLE}")
    if not isinstance(options, Mapping):
        raise SettingError(
            f"{setting}: must be a dict such as {EXAMPLE}, got {type(options).__name__}"
        )
    rest = dict(options)
    purger = _resolve_purger(rest.pop("purger", None), setting)
    if "sites" in rest:
        if "sources" in rest:
            raise SettingError(
                f"{setting}['sites']: give 'sources' or 'sites', not both; with 'sites' each "
                "SiteConfig holds its site's sources"
            )
        sites = resolve_sites(rest.pop("sites"), setting)
        try:
            return Configured(None, make_shared_settings(rest), setting, sites, purger)
        except ConfigurationError as exc:
            raise named(exc, setting) from exc
    if "sources" not in rest:
        raise SettingError(
            f"{setting}['sources']: required, the dotted path of the sources or of a function "
            "returning them, e.g. 'mysite.sitemaps.sources'"
        )
    sources = resolve_sources(rest.pop("sources"), setting)
    try:
        return Configured(sources, make_settings(rest), setting, purger=purger)
    except ConfigurationError as exc:
        raise named(exc, setting) from exc


def resolve_sources(value: object, setting: str = SETTING) -> object:
    """``sources`` imported when a dotted path, and called when a function of no arguments."""
    if isinstance(value, str):
        try:
            value = import_string(value)
        except ImportError as exc:
            raise SettingError(
                f"{setting}['sources']: cannot import {value!r} ({exc}); give the dotted path "
                "of the sources or of a function returning them"
            ) from exc
    if _is_factory(value):
        assert callable(value)
        try:
            return value()
        except ConfigurationError as exc:
            raise SettingError(f"{setting}['sources']: {exc}") from exc
    return value


def _resolve_purger(value: object, setting: str) -> Purger | None:
    """``purger`` imported when a dotted path, and called when a function returning one."""
    if isinstance(value, str):
        try:
            value = import_string(value)
        except ImportError as exc:
            raise SettingError(f"{setting}['purger']: cannot import {value!r} ({exc})") from exc
    if value is not None and not isinstance(value, Purger) and callable(value):
        value = value()
    if value is not None and not isinstance(value, Purger):
        raise SettingError(
            f"{setting}['purger']: must have a purge(keys) method (a Purger), or be the "
            f"dotted path of one or of a function returning one, got {value!r}"
        )
    return value


def resolve_sites(value: object, setting: str = SETTING) -> object:
    """``sites`` imported when a dotted path (a mapping or a resolver, used as it is)."""
    if isinstance(value, str):
        try:
            return import_string(value)
        except ImportError as exc:
            raise SettingError(
                f"{setting}['sites']: cannot import {value!r} ({exc}); give the dotted path "
                "of a mapping host -> SiteConfig or of a resolver host -> SiteConfig | None"
            ) from exc
    return value


def _is_factory(value: object) -> bool:
    """A plain function: not a source, nor a generator function (which is a source itself)."""
    if isinstance(value, Source) or not callable(value) or isinstance(value, type):
        return False
    return not (inspect.isgeneratorfunction(value) or inspect.isasyncgenfunction(value))
