"""A purger for Varnish with the xkey module (varnish-modules), or any cache that purges by
keys named in a request's header.

Each purge is one ``PURGE`` request to every URL given, the keys space-separated in an
``xkey-purge`` field (split over several requests when they would pass
:data:`MAX_FIELD_BYTES`); the VCL answers it with ``xkey.purge()`` (see the deployment
guide, "Behind a CDN"). Only the standard library: no extra to install.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import urlsplit

from ..settings import ConfigurationError

MAX_FIELD_BYTES = 7_680
"""The most bytes of keys in one request's field (Varnish refuses a header field line past
``http_req_hdr_len``, 8 KiB by default)."""


class PurgeFailed(RuntimeError):
    """A cache did not answer a purge with a 2xx (the purge is tried again)."""


class XkeyPurger:
    """Sends ``PURGE`` with an ``xkey-purge: <keys>`` field to each of ``urls``.

    ``urls``: one ``http(s)://`` URL, or several (a Varnish per replica); ``field``: the
    request field the VCL reads (``xkey-softpurge`` is another common choice); ``timeout``:
    seconds to connect and to wait for each answer; ``headers``: more request fields (a
    shared secret the VCL checks, say). A purge that any cache does not accept raises, so
    that it is tried again (purging twice is harmless)."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        field: str = "xkey-purge",
        method: str = "PURGE",
        timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.urls = (urls,) if isinstance(urls, str) else tuple(urls)
        for url in self.urls:
            parts = urlsplit(url) if isinstance(url, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigurationError(
                    f"purger: the URL of a cache must be http(s), such as "
                    f"'http://127.0.0.1:6081/', got {url!r}"
                )
        if not self.urls:
            raise ConfigurationError("purger: give the URL of at least one cache")
        self.field = field
        self.method = method
        self.timeout = timeout
        self.headers = dict(headers or {})

    def purge(self, keys: Sequence[str]) -> None:
        """Purge ``keys`` at every cache; raises :class:`PurgeFailed` (or the connection's
        error) when one did not accept it."""
        for url in self.urls:
            for group in _groups(keys):
                self._send(url, group)

    def _send(self, url: str, keys: str) -> None:
        parts = urlsplit(url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        connection = kind(parts.hostname or "", parts.port, timeout=self.timeout)
        try:
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request(self.method, target, headers={**self.headers, self.field: keys})
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
        if not 200 <= response.status < 300:
            raise PurgeFailed(f"{self.method} {url}: {response.status} {response.reason}")


def _groups(keys: Sequence[str]) -> Iterator[str]:
    """The keys space-separated, in fields of at most :data:`MAX_FIELD_BYTES`."""
    group: list[str] = []
    size = 0
    for key in keys:
        if group and size + 1 + len(key) > MAX_FIELD_BYTES:
            yield " ".join(group)
            group, size = [], 0
        group.append(key)
        size += len(key) + (1 if size else 0)
    if group:
        yield " ".join(group)
