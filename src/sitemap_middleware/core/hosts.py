"""The site as each host sees it: the base URL's view, and with ``allowed_hosts`` one per host.

A ``Host`` header builds URLs only when ``allowed_hosts`` lists it; any other
is refused (400) rather than trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..output.entry import EntryRules
from ..output.fast_path import Renderer
from ..settings import Settings
from .urls import Site, normalize_host


@dataclass(frozen=True, slots=True)
class View:
    """The site as one host sees it: its URLs, the rules for its locs, its renderer."""

    site: Site
    rules: EntryRules
    renderer: Renderer
    fingerprint: str
    """What the view's documents depend on besides the data (part of every ETag)."""


class HostViews:
    """A view per allowed host, made on first use (``allowed_hosts`` bounds them)."""

    def __init__(self, settings: Settings, rules: EntryRules, widths: Mapping[str, int]) -> None:
        self._settings = settings
        self._rules = rules
        self._scheme = settings.site.origin.partition(":")[0]
        # Pages hold as many rows on every host: the widths are part of each fingerprint.
        self._widths = repr(sorted(widths.items()))
        self.default = self._view(settings.site)
        self._views = {settings.site.origin.partition("://")[2]: self.default}

    def view_for(self, host: str | None, sent: bool) -> View | None:
        """The view a request gets from its ``host`` (``sent``: whether it had a Host field):
        the base URL's, or with ``allowed_hosts`` its Host's; None for a Host that is not
        allowed (answered 400, never used to build a URL)."""
        allowed = self._settings.allowed_hosts
        if allowed is None:
            return self.default
        if host is None:
            return None if sent else self.default
        normal = normalize_host(host, self._scheme)
        if normal is None or normal not in allowed:
            return None
        view = self._views.get(normal)
        if view is None:
            site = self._settings.site.with_host(normal, self._settings.path)
            view = self._views[normal] = self._view(site)
        return view

    def _view(self, site: Site) -> View:
        # Every view counts and logs bad rows in the same place.
        rules = self._rules.for_site(site)
        fingerprint = "|".join((self._settings.fingerprint(), site.base_url, self._widths))
        return View(site, rules, Renderer(rules), fingerprint)
