"""The sitemaps.org location rule: what a sitemap at a URL may list.

"A Sitemap file located at http://example.com/catalog/sitemap.xml can include
any URLs starting with http://example.com/catalog/": same scheme, host and
port, under the sitemap's directory. Crawlers apply it as a plain string
prefix (crawler-commons ``startsWith``), so a loc spelled differently (host
case, an explicit default port) is out of scope too; the message says which.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..core.spec import DEFAULT_PORTS
from ..core.urls import comparison_form, iri_to_uri


def directory_of(url: str) -> str:
    """``scheme://authority/dir/`` of a URL: what every loc it lists must start with."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme}://{parts.netloc}{path[: path.rfind('/') + 1]}"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or DEFAULT_PORTS.get(scheme)


def scope_problem(loc: str, sitemap_url: str) -> str | None:
    """Why ``loc`` is outside the scope of the sitemap at ``sitemap_url``, or None."""
    prefix = directory_of(sitemap_url)
    if loc.startswith(prefix):
        return None
    try:
        scheme, host, port = _origin(loc)
    except ValueError:
        return f"not under {prefix}"
    own_scheme, own_host, own_port = _origin(sitemap_url)
    if scheme != own_scheme:
        return f"on another scheme ({scheme or 'none'}); locs must start with {prefix}"
    if host != own_host:
        return f"on another host ({host or 'none'}); locs must start with {prefix}"
    if port != own_port:
        return f"on another port ({port}); locs must start with {prefix}"
    if not urlsplit(loc).path.startswith(urlsplit(prefix).path):
        return f"outside the sitemap's directory; locs must start with {prefix}"
    return (
        f"spelled differently from the sitemap's URL (case or default port); crawlers compare "
        f"strings, so locs must start with {prefix}"
    )


def resource(loc: str) -> str:
    """One string for every spelling of a loc that names one resource (to find duplicates):
    scheme and host in lowercase, no default port, an empty path as ``/``, the rest as a
    URI (``a b`` is ``a%20b``, ``ü`` is ``%C3%BC``) in RFC 3986 comparison form (``%c3``
    is ``%C3``, ``%41`` is ``A``). What is no absolute URL stays as it is."""
    try:
        scheme, host, port = _origin(loc)
    except ValueError:
        return loc
    if not host or "://" not in loc:
        return loc
    after = loc.split("://", 1)[1]
    cuts = [at for at in map(after.find, "/?#") if at >= 0]
    rest = after[min(cuts) :] if cuts else ""
    if not rest.startswith("/"):
        rest = "/" + rest
    host = f"[{host}]" if ":" in host else host
    authority = host if port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return comparison_form(f"{scheme}://{authority}{iri_to_uri(rest)}")
