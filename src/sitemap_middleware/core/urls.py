"""Turning the locs a source gives into absolute, percent-encoded URIs on the site.

Rules (sitemaps.org "Escaping" and "Sitemap file location"); a loc is never
changed into one that names another resource:

* a loc is absolute (same scheme, host and port as the base URL) or a path
  relative to the base URL (``/articles/1`` and ``articles/1`` both mean
  ``<base_url>articles/1``);
* IRIs become URIs: non-ASCII characters are UTF-8 percent-encoded and
  characters a URI cannot hold (space, ``"``, ``<``, ``>`` ...) are escaped,
  while existing ``%XX`` escapes are kept as they are (no double encoding);
  whitespace at either end is data like any other (``%20``, ``%09`` ...), never
  stripped;
* what cannot be kept as it is is refused (:class:`LocError`): a path holding a
  ``.`` or ``..`` segment (``%2e`` too, as browsers read them), which a client
  would resolve to another URL, and whitespace before a scheme or ``//``;
* the result must lie within the sitemap's scope (the directory of the sitemap
  URL) and be shorter than 2,048 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .spec import DEFAULT_PORTS as _DEFAULT_PORTS
from .spec import MAX_LOC_LENGTH, MIN_LOC_LENGTH, XML_WHITESPACE

# Every character XML 1.0 forbids (control characters, lone surrogates, U+FFFE/U+FFFF).
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# Characters that may stand in the path, query and fragment of a URI as they are.
_URI_REST = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*")
# "%" not starting a valid escape: written as "%25".
LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SAFE_REST = "!$&'()*+,;=:@/?#%~"
_FRAGMENT_SAFE = _SAFE_REST.replace("#", "")
# XML's whitespace: data in a loc, at either end too. (Every other control character is
# forbidden in XML, so a loc holding one is refused before it reaches a parser.)
WHITESPACE = XML_WHITESPACE
# urlsplit strips leading C0 controls and spaces and deletes tab, CR and LF anywhere (as
# WHATWG parsers do): escape the whitespace first so an absolute loc keeps it, as a
# relative one does.
_URL_WHITESPACE = str.maketrans({" ": "%20", "\t": "%09", "\n": "%0A", "\r": "%0D"})
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([^/?#]*)")
# A path segment that starts with a dot, written or %-escaped: maybe "." or "..".
_DOTTED = re.compile(r"/(?:\.|%2e)", re.I)
_DOT_SEGMENTS = frozenset({".", "%2e", "..", ".%2e", "%2e.", "%2e%2e"})
# A %XX escape, for the comparison form of a URI (RFC 3986 §6.2.2), and one that the
# comparison form changes: lowercase hex, or an unreserved character (ALPHA, DIGIT, -._~).
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_CHANGED_ESCAPE = re.compile(
    r"%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-Fa-f]|3[0-9]|[46][1-9A-F]|[57][0-9A]|2[DE]|5F|7E)"
)
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Beyond this many code points a quoter computes the rest each time (memory stays bounded).
_QUOTED_LIMIT = 4096


class _Quoter(dict[int, str]):
    """Code point -> its text as ``quote(char, safe=safe)`` writes it, filled on first use:
    ``str.translate`` with it percent-encodes a whole string in one C-level pass, with the
    bytes of ``quote`` (which encodes every UTF-8 byte of a character alone). A lone
    surrogate raises ``UnicodeEncodeError``, as ``quote`` does."""

    def __init__(self, safe: str) -> None:
        super().__init__()
        self.safe = safe

    def __missing__(self, point: int) -> str:
        text = quote(chr(point), safe=self.safe)
        if len(self) < _QUOTED_LIMIT:
            self[point] = text
        return text


_QUOTE_REST = _Quoter(_SAFE_REST)
_QUOTE_FRAGMENT = _Quoter(_FRAGMENT_SAFE)


def quote_rest(text: str) -> str:
    """``quote(text, safe="!$&'()*+,;=:@/?#%~")``: every other character percent-encoded."""
    return text.translate(_QUOTE_REST)


# RFC 9110 §7.2 Host: uri-host [ ":" port ]; a reg-name, an IPv4 address or an IPv6 literal.
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::([0-9]{1,5}))?")


def normalize_host(value: str, scheme: str) -> str | None:
    """``host[:port]`` in the form :class:`Site` writes it (lowercase, IDNA, no default port),
    or None when ``value`` is not a valid Host."""
    match = _HOST.fullmatch(value.strip())
    if match is None:
        return None
    host, port = match.group(1), match.group(2)
    try:
        number = int(port) if port else None
        if number is not None and not 0 < number < 65536:
            return None
        return _authority(scheme, host.strip("[]"), number)
    except (ValueError, UnicodeError):
        return None


class LocError(ValueError):
    """A loc that cannot be listed; the message says why."""


def iri_to_uri(rest: str) -> str:
    """Percent-encode the path/query/fragment part of an IRI, keeping ``%XX`` escapes.

    The first ``#`` starts the fragment; a fragment cannot hold another, so later ones
    are escaped (``a#b#c`` is no URI, and fails the XSD's ``anyURI``).
    """
    if (
        _URI_REST.fullmatch(rest)
        and ("%" not in rest or LONE_PERCENT.search(rest) is None)
        and rest.count("#") < 2
    ):
        return rest
    head, hash_, fragment = LONE_PERCENT.sub("%25", rest).partition("#")
    uri = head.translate(_QUOTE_REST)
    return uri + hash_ + fragment.translate(_QUOTE_FRAGMENT) if hash_ else uri


def has_dot_segment(path: str) -> bool:
    """Whether an absolute path holds a ``.`` or ``..`` segment, written or ``%2e``-escaped:
    a client removes it (RFC 3986 §5.2.4, WHATWG URL), so it would fetch another URL."""
    if _DOTTED.search(path) is None:
        return False
    return any(segment.lower() in _DOT_SEGMENTS for segment in path.split("/"))


def _path(rest: str) -> str:
    """The path of a URI's path, query and fragment."""
    cut = len(rest)
    for delimiter in "?#":
        at = rest.find(delimiter, 0, cut)
        if at >= 0:
            cut = at
    return rest[:cut]


def _unescape_unreserved(match: re.Match[str]) -> str:
    byte = int(match.group()[1:], 16)
    return chr(byte) if byte in _UNRESERVED else match.group().upper()


def comparison_form(uri: str) -> str:
    """The form in which two URIs naming one resource are equal (RFC 3986 §6.2.2.1-2):
    escapes in uppercase, escaped unreserved characters decoded (``%c3%bc`` = ``%C3%BC``,
    ``%41`` = ``A``). Locs this module writes are otherwise normalised already."""
    if "%" not in uri or _CHANGED_ESCAPE.search(uri) is None:
        return uri
    return _ESCAPE.sub(_unescape_unreserved, uri)


def _refuse_odd_start(text: str, noun: str) -> None:
    """A URL needs no whitespace around it, but a path may hold it: whitespace before a
    scheme or ``//`` would make a relative path of a URL, so that is refused."""
    start = text.lstrip(WHITESPACE)
    if not start:
        raise LocError(f"{noun} is empty or whitespace only")
    if len(start) != len(text) and (_SCHEME.match(start) or start.startswith("//")):
        raise LocError(f"{noun} has whitespace before its scheme or '//'")


def _refuse_dot_segments(rest: str, noun: str) -> None:
    if has_dot_segment(_path(rest)):
        raise LocError(
            f"{noun} has a dot segment ('.' or '..') in its path, which a client would "
            "resolve to another URL"
        )


def _authority(scheme: str, host: str, port: int | None) -> str:
    host = host.lower()
    # IPv6 literals keep their brackets; names become their ASCII (IDNA) form.
    host = f"[{host}]" if ":" in host else host.encode("idna").decode("ascii")
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return host
    return f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class Site:
    """The public URL of the application's root and the scope of one sitemap."""

    base_url: str
    """``scheme://host[:port]/prefix/``, always ending in ``/``."""
    origin: str
    """``scheme://host[:port]``."""
    prefix: str
    """The base URL's path, ``/`` or ``/shop/``."""
    scope: str
    """Every loc must start with this (the sitemap URL's directory)."""
    max_loc_length: int = MAX_LOC_LENGTH
    """Longer locs (once encoded) are bad rows."""

    @classmethod
    def build(cls, base_url: str, sitemap_path: str, max_loc_length: int = MAX_LOC_LENGTH) -> Site:
        """Normalise ``base_url``; raises ``ValueError`` naming what is wrong."""
        if not isinstance(base_url, str):
            raise ValueError("base_url must be a string such as 'https://example.com/'")
        parts = urlsplit(base_url.strip())
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ValueError(
                f"base_url must be an absolute http(s) URL such as 'https://example.com/', "
                f"got {base_url!r}"
            )
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(
                f"base_url must not carry a query, fragment or credentials, got {base_url!r}"
            )
        try:
            port = parts.port
            authority = _authority(scheme, parts.hostname, port)
        except (ValueError, UnicodeError) as exc:
            raise ValueError(f"base_url has an invalid host or port: {base_url!r}") from exc
        prefix = iri_to_uri(parts.path or "/")
        if has_dot_segment(prefix):
            raise ValueError(f"base_url must not hold '.' or '..' path segments, got {base_url!r}")
        if not prefix.endswith("/"):
            prefix += "/"
        origin = f"{scheme}://{authority}"
        directory = prefix + sitemap_path.lstrip("/").rpartition("/")[0]
        if not directory.endswith("/"):
            directory += "/"
        return cls(
            base_url=origin + prefix,
            origin=origin,
            prefix=prefix,
            scope=origin + directory,
            max_loc_length=max_loc_length,
        )

    def with_host(self, host: str, sitemap_path: str) -> Site:
        """The same site on another host (``host[:port]``, already checked)."""
        scheme = self.origin.partition(":")[0]
        return Site.build(f"{scheme}://{host}{self.prefix}", sitemap_path, self.max_loc_length)

    def url_for(self, path: str) -> str:
        """The absolute URL of an application path (``/sitemap.xml``)."""
        return self.base_url + iri_to_uri(path.lstrip("/"))

    def resolve(self, loc: str) -> str:
        """The absolute URI to list for ``loc``; raises ``LocError`` when it cannot be listed."""
        _refuse_odd_start(loc, "loc")
        bad = XML_FORBIDDEN.search(loc)
        if bad is not None:
            raise LocError(f"loc contains the character U+{ord(bad.group()):04X}, forbidden in XML")
        if _SCHEME.match(loc):
            url = self._absolute(loc)
        elif loc.startswith("//"):
            raise LocError("loc is a scheme-relative URL; give a path or an absolute URL")
        else:
            url = self.base_url + iri_to_uri(loc.lstrip("/"))
        # Every branch gives self.origin + "/...".
        _refuse_dot_segments(url[len(self.origin) :], "loc")
        if not url.startswith(self.scope):
            raise LocError(f"loc is outside the sitemap's scope {self.scope}")
        if len(url) > self.max_loc_length:
            raise LocError(f"loc is {len(url)} characters long; the limit is {self.max_loc_length}")
        if len(url) < MIN_LOC_LENGTH:
            raise LocError(f"loc is shorter than {MIN_LOC_LENGTH} characters")
        return url

    def resolve_link(self, link: str) -> str:
        """An extension's URL (image, video, alternate): absolute on any http(s) host, or
        relative to the base URL; encoded like a loc, but not bound to the sitemap's scope."""
        if not isinstance(link, str):
            raise LocError(f"a URL must be a string, not {type(link).__name__}")
        _refuse_odd_start(link, "URL")
        bad = XML_FORBIDDEN.search(link)
        if bad is not None:
            raise LocError(f"URL contains U+{ord(bad.group()):04X}, forbidden in XML")
        if link.startswith("//"):
            raise LocError("URL is scheme-relative; give a path or an absolute URL")
        if not _SCHEME.match(link):
            rest = self.base_url[len(self.origin) :] + iri_to_uri(link.lstrip("/"))
            url = self.origin + rest
        else:
            scheme, authority, rest = _split_absolute(link, "URL")
            # Any host may be named, but only in URI characters (IDNA keeps "{", "<", "|"...).
            if not _HOST.fullmatch(authority) or LONE_PERCENT.search(authority):
                raise LocError(f"URL has an invalid host {authority!r}")
            rest = iri_to_uri(rest)
            url = f"{scheme}://{authority}" + rest
        _refuse_dot_segments(rest, "URL")
        if len(url) > self.max_loc_length:
            raise LocError(f"URL is {len(url)} characters long; the limit is {self.max_loc_length}")
        return url

    def _absolute(self, loc: str) -> str:
        # Fast path: already in the base URL's own spelling.
        if loc.startswith(self.origin) and loc[len(self.origin) : len(self.origin) + 1] in "/?#":
            rest = loc[len(self.origin) :]
            # An empty path is "/" in http(s) (RFC 3986 §6.2.3), as urlsplit's path below.
            return self.origin + iri_to_uri(rest if rest[:1] == "/" else "/" + rest)
        scheme, authority, rest = _split_absolute(loc, "loc")
        origin = f"{scheme}://{authority}"
        if origin != self.origin:
            raise LocError(f"loc is not on {self.origin}")
        return origin + iri_to_uri(rest)


def _split_absolute(url: str, noun: str) -> tuple[str, str, str]:
    """Scheme, normalised authority and path/query/fragment of an absolute http(s) URL;
    ``LocError`` (naming the ``noun``) when it is not one."""
    head = _AUTHORITY.match(url)
    if head is not None and any(space in head.group(1) for space in WHITESPACE):
        raise LocError(f"{noun} has whitespace in its host")
    url = url.translate(_URL_WHITESPACE)
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise LocError(f"{noun} has an unsupported scheme {parts.scheme!r}")
        if parts.username is not None or parts.password is not None:
            raise LocError(f"{noun} carries credentials")
        authority = _authority(scheme, parts.hostname, parts.port)
    except (ValueError, UnicodeError) as exc:
        if isinstance(exc, LocError):
            raise
        raise LocError(f"{noun} is not a valid URL ({exc})") from None
    return scheme, authority, _rest(parts.path, parts.query, parts.fragment, url)


def _rest(path: str, query: str, fragment: str, url: str) -> str:
    """Path, query and fragment of a split URL, put back together (an empty query kept)."""
    rest = path or "/"
    if query or url.split("#", 1)[0].endswith("?"):
        rest += "?" + query
    if "#" in url:  # an empty fragment too, as the fast path keeps it
        rest += "#" + fragment
    return rest
