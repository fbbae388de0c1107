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
class SiteForHost:
    """The site as one host sees it: its URLs, the rules for its locs, its renderer."""

    site: Site
    rules: EntryRules
    renderer: Renderer
    fingerprint: str
    """What the view's documents depend on besides the data (part of every ETag)."""


class Hosts:
    """A view per allowed host, made on first use (``allowed_hosts`` bounds them)."""

    def __init__(
        self, settings: Settings, rules: EntryRules, page_sizes: Mapping[str, int]
    ) -> None:
        self._settings = settings
        self._rules = rules
        self._scheme = settings.site.origin.partition(":")[0]
        # Pages hold as many rows on every host: the page sizes are part of each fingerprint.
        self._page_sizes = repr(sorted(page_sizes.items()))
        self.default = self._site_of(settings.site)
        self._sites = {settings.site.origin.partition("://")[2]: self.default}

    def site_for(self, host: str | None, sent: bool) -> SiteForHost | None:
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
        host_site = self._sites.get(normal)
        if host_site is None:
            site = self._settings.site.with_host(normal, self._settings.path)
            host_site = self._sites[normal] = self._site_of(site)
        return host_site

    def _site_of(self, site: Site) -> SiteForHost:
        # Every view counts and logs bad rows in the same place.
        rules = self._rules.for_site(site)
        fingerprint = "|".join((self._settings.fingerprint(), site.base_url, self._page_sizes))
        return SiteForHost(site, rules, Renderer(rules), fingerprint)
