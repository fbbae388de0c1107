"""Helpers several test modules use, each defined once: a free port, what an app serves for
a plain GET (its body, or its locs), the schema check of a document a test wrote by hand."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

import anyio
from lxml import etree

from sitemap_middleware.cli.loader import interface
from sitemap_middleware.testing import ASGIClient, Response, WSGIClient

from .adapters import call
from .conftest import (
    EXTENSION_NAMESPACES,
    NS,
    _schema,
    assert_valid_urlset,
    check_served,
    locs,
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a server a test starts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served(app: Any, path: str, headers: Mapping[str, str] | None = None) -> bytes:
    """The body an app (ASGI or WSGI) answers to a plain GET of ``path`` (no
    Accept-Encoding) on https://example.com/, through :mod:`sitemap_middleware.testing`: a
    complete 200, not content-coded, checked against the schema when a sitemap."""
    base_url = "https://example.com/"
    response: Response
    if interface(app) == "wsgi":
        response = WSGIClient(app, base_url).request("GET", path, headers)
    else:
        response = anyio.run(ASGIClient(app, base_url).request, "GET", path, headers)
    assert response.status == 200 and response.complete, (path, response.status, response.error)
    assert response.header("content-encoding") is None, path
    check_served(200, response.header("content-type") or "", response.body)
    return response.body


def xsd_valid(body: bytes) -> bool:
    """Whether the official schemas accept a document: a sitemapindex by siteindex.xsd, a
    urlset by sitemap.xsd, or by urlset-with-extensions.xsd when it declares an extension."""
    root = etree.fromstring(body)
    if root.tag == f"{NS}sitemapindex":
        name = "siteindex.xsd"
    elif any(ns.encode() in EXTENSION_NAMESPACES for ns in root.nsmap.values()):
        name = "urlset-with-extensions.xsd"
    else:
        name = "sitemap.xsd"
    return bool(_schema(name).validate(root))


async def served_locs(
    app: Any, schema: etree.XMLSchema, path: str = "/sitemap.xml", none_listed_ok: bool = False
) -> list[str]:
    """The locs of the urlset ``app`` serves at ``path``, validated against ``schema``;
    ``none_listed_ok``: a 404 (every row was a bad row) is no loc."""
    reply = await call(app, path=path)
    if none_listed_ok and reply.status == 404:
        return []
    assert reply.status == 200, reply.body
    return locs(assert_valid_urlset(reply.body, schema))
