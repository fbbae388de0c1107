"""Sites from ``django.contrib.sites``: a resolver over the project's ``Site`` objects.

``SITEMAP_MIDDLEWARE = {"sites": "mysite.sitemaps.sites"}`` with, in ``mysite/sitemaps.py``,
``sites = sites_from_django(SITEMAPS)``: each host whose ``Site.domain`` it is gets the
sitemap of the adopted ``django.contrib.sitemaps`` classes, their URLs built as Django's
``sitemap`` view builds them from ``get_current_site(request)``: ``protocol://domain``
(the class's ``protocol`` when it sets one) followed by ``location()``. A host that is no
``Site``'s domain is a 404.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from django.apps import apps
from django.contrib.sitemaps import Sitemap

from ...settings import ConfigurationError, ConfigurationTypeError, SiteConfig
from .adopted import django_sitemap_sources

Sitemaps = Mapping[str, type[Sitemap] | Sitemap]


def sites_from_django(
    sitemaps: Sitemaps | Callable[[Any], Sitemaps],
    *,
    protocol: str = "https",
    max_sites: int = 1_000,
) -> Callable[[str], SiteConfig | None]:
    """A resolver ``host -> SiteConfig | None`` over ``django.contrib.sites``' ``Site``
    objects, for ``sites=`` (sync: under Django's ASGI handler it runs where Django runs
    sync work).

    ``sitemaps``: the dict of ``Sitemap`` classes given to Django's views, or a function of
    the ``Site`` returning that site's dict. ``protocol``: the scheme of the URLs (Django's
    view takes the request's). The configs of the last ``max_sites`` sites are kept, so a
    site keeps its sitemap while its ``Site`` row is unchanged.
    """
    if not apps.is_installed("django.contrib.sites"):
        raise ConfigurationError(
            "sites: sites_from_django needs 'django.contrib.sites' in INSTALLED_APPS"
        )
    if protocol not in ("http", "https"):
        raise ConfigurationError(f"protocol: must be 'http' or 'https', got {protocol!r}")
    if not isinstance(sitemaps, Mapping) and not callable(sitemaps):
        raise ConfigurationTypeError(
            "sitemaps: needs the dict of Sitemap classes given to Django's views, or a "
            f"function of the Site returning it, got {type(sitemaps).__name__}"
        )
    from django.contrib.sites.models import Site

    built: OrderedDict[tuple[Any, str], SiteConfig] = OrderedDict()
    lock = threading.Lock()

    def config_of(site: Any) -> SiteConfig:
        key = (site.pk, site.domain)
        with lock:
            config = built.get(key)
            if config is not None:
                built.move_to_end(key)
                return config
        given = sitemaps if isinstance(sitemaps, Mapping) else sitemaps(site)
        base_url = f"{protocol}://{site.domain}/"
        config = SiteConfig(
            base_url=base_url, sources=django_sitemap_sources(given, base_url=base_url)
        )
        with lock:
            config = built.setdefault(key, config)
            while len(built) > max_sites:
                built.popitem(last=False)
        return config

    def resolve(host: str) -> SiteConfig | None:
        # The Host as get_current_site() matches it; a domain written with a port matches
        # only that port (an answer for another host would be refused).
        site = Site.objects.filter(domain__iexact=host).first()
        return None if site is None else config_of(site)

    return resolve
