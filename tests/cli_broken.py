"""Hand-written sitemap servers for the ``check`` tests: one ASGI app, a scenario per folder.

``/good/sitemap.xml`` does everything right; every other scenario breaks one
thing, so the tests can assert that ``check`` reports exactly that. Locs are
built from the ``Host`` the client used, so they are in scope unless the
scenario says otherwise. ``/ext-bad/`` scenarios break one rule of the
extensions each; ``/ext/`` is the middleware serving every extension right
(:mod:`tests.cli_extension_site`).
"""

from __future__ import annotations

import gzip
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sitemap_middleware import SitemapApp
from sitemap_middleware.core.http import format_http_date
from sitemap_middleware.servers.types import Message

from .support import DECLARATION, EXTENSIONS, image, lastmod, news, url, urlset, xmlns

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
ETAG = 'W/"v1"'
LAST_MODIFIED = "Mon, 06 May 2024 12:00:00 GMT"
IMS_EXACT = {LAST_MODIFIED}  # good enough for these servers: compare the exact string


def alternates(*pairs: tuple[str, str]) -> str:
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>' for lang, href in pairs
    )


def sitemapindex(*locs: str) -> str:
    children = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'{DECLARATION}<sitemapindex xmlns="{NS}">{children}</sitemapindex>\n'


@dataclass(frozen=True)
class Scenario:
    document: Callable[[str], str | bytes]
    """The XML, given the site's origin (``http://127.0.0.1:PORT``)."""
    content_type: str = "application/xml; charset=utf-8"
    gzip_file: bool = False
    coding: str = "negotiate"  # "negotiate" | "never" | "always"
    vary: bool = True
    conditional: str = "rfc"  # "rfc" | "ignore" | "ims-first"
    abort: bool = False
    head_etag: str | None = None
    last_modified: bool = True
    """False: no Last-Modified header (a document without lastmods)."""
    proxy: bool = False
    """A cache in front: X-Cache and Age differ between answers (not representation headers)."""
    repeated: str | None = None
    """A singleton field the application writes itself on every answer: ``date`` (uvicorn
    writes its own too: two lines), or ``content-type`` (written twice)."""


def _good(o: str) -> str:
    return urlset(
        url(f"{o}/good/", lastmod("2024-05-01")),
        url(f"{o}/good/about", lastmod("2024-05-02T10:00:00+02:00")),
    )


SCENARIOS: dict[str, Scenario] = {
    "/good/sitemap.xml": Scenario(_good),
    "/good/sitemap.xml.gz": Scenario(_good, "application/gzip", gzip_file=True, coding="never"),
    "/scope/sitemap.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/scope/fine", lastmod("2024-05-01")),
            url(f"{o}/other/page", lastmod("2024-05-01")),  # outside the directory
            url("http://example.org/scope/x", lastmod("2024-05-01")),  # another host
        )
    ),
    "/dup/sitemap.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/dup/a", lastmod("2024-05-01")),
            url(f"{o}/dup/b", lastmod("2024-05-01")),
            url(f"{o}/dup/a", lastmod("2024-05-01")),
        )
    ),
    "/lastmod/sitemap.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/lastmod/minutes", lastmod("2024-01-02T03:04+00:00")),  # W3C, not XSD
            url(f"{o}/lastmod/no-zone", lastmod("2024-01-02T03:04:05")),  # XSD, not W3C
            url(f"{o}/lastmod/future", lastmod("2999-01-01")),
        )
    ),
    "/schema/sitemap.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/schema/a", "<changefreq>Daily</changefreq>"),
            url(f"{o}/schema/b", "<priority>1.5</priority>"),
            f"<url><loc>{o}/schema/c</loc><priority>0.5</priority><lastmod>2024-01-01</lastmod>"
            "</url>",
        )
    ),
    "/ctype/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/ctype/", lastmod("2024-05-01"))),
        content_type="text/html; charset=utf-8",
    ),
    "/no304/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/no304/", lastmod("2024-05-01"))), conditional="ignore"
    ),
    "/ims-wins/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/ims-wins/", lastmod("2024-05-01"))), conditional="ims-first"
    ),
    "/novary/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/novary/", lastmod("2024-05-01"))), vary=False
    ),
    "/coded-gz/sitemap.xml.gz": Scenario(
        # A .gz file handed out as gzip-coded XML: clients store it inflated under a .gz name.
        lambda o: urlset(url(f"{o}/coded-gz/", lastmod("2024-05-01"))),
        coding="always",
    ),
    "/truncated/sitemap.xml": Scenario(
        lambda o: urlset(*(url(f"{o}/truncated/{i}", lastmod("2024-05-01")) for i in range(200))),
        abort=True,
    ),
    "/head/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/head/", lastmod("2024-05-01"))), head_etag='W/"other"'
    ),
    "/two-dates/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/two-dates/", lastmod("2024-05-01"))), repeated="date"
    ),
    "/two-types/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/two-types/", lastmod("2024-05-01"))), repeated="content-type"
    ),
    # Not problems: a document without lastmods (no Last-Modified), a proxy's own headers.
    "/no-lastmod/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/no-lastmod/")), last_modified=False
    ),
    "/proxied/sitemap.xml": Scenario(
        lambda o: urlset(url(f"{o}/proxied/", lastmod("2024-05-01"))), proxy=True
    ),
    "/index/sitemap.xml": Scenario(
        lambda o: sitemapindex(f"{o}/index/a.xml", f"{o}/index/b.xml.gz", f"{o}/elsewhere/c.xml")
    ),
    "/index/a.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/index/one", lastmod("2024-05-01")),
            url(f"{o}/index/shared", lastmod("2024-05-01")),
        )
    ),
    "/index/b.xml.gz": Scenario(
        lambda o: urlset(
            url(f"{o}/index/two", lastmod("2024-05-01")),
            url(f"{o}/index/shared", lastmod("2024-05-01")),
        ),
        "application/gzip",
        gzip_file=True,
        coding="never",
    ),
    "/elsewhere/c.xml": Scenario(lambda o: urlset(url(f"{o}/elsewhere/c", lastmod("2024-05-01")))),
    # One resource, spelt differently in two children (and twice in the first one).
    "/spelt/sitemap.xml": Scenario(
        lambda o: sitemapindex(f"{o}/spelt/a.xml", f"{o}/spelt/b.xml", f"{o}/spelt/c.xml")
    ),
    "/spelt/a.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/spelt/m%C3%BCsli", lastmod("2024-05-01")),
            url(f"{o}/spelt/a", lastmod("2024-05-01")),
            url(f"{o}/spelt/%61", lastmod("2024-05-01")),
        )
    ),
    "/spelt/b.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/spelt/b", lastmod("2024-05-01")),
            url(f"{o}/spelt/m%c3%bcsli", lastmod("2024-05-01")),
            url(f"{o}/spelt/x", lastmod("2024-05-01")),
        )
    ),
    "/spelt/c.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/spelt/x", lastmod("2024-05-01")), url(f"{o}/spelt/c", lastmod("2024-05-01"))
        )
    ),
    "/nested/sitemap.xml": Scenario(lambda o: sitemapindex(f"{o}/nested/inner.xml")),
    "/nested/inner.xml": Scenario(lambda o: sitemapindex(f"{o}/nested/leaf.xml")),
    # Extensions, one broken rule each.
    "/ext-bad/alternates.xml": Scenario(
        lambda o: urlset(
            url(
                f"{o}/ext-bad/en",
                lastmod("2024-05-01"),
                alternates(("en", f"{o}/ext-bad/en"), ("de", f"{o}/ext-bad/de")),
            ),
            url(f"{o}/ext-bad/de", lastmod("2024-05-01"), alternates(("de", f"{o}/ext-bad/de"))),
            url(f"{o}/ext-bad/fr", lastmod("2024-05-01"), alternates(("en", f"{o}/ext-bad/en"))),
            attributes=xmlns(EXTENSIONS),
        )
    ),
    "/ext-bad/images.xml": Scenario(
        lambda o: urlset(
            url(
                f"{o}/ext-bad/gallery",
                lastmod("2024-05-01"),
                "".join(image(f"{o}/i/{n}.jpg") for n in range(1001)),
            ),
            attributes=xmlns(EXTENSIONS),
        )
    ),
    "/ext-bad/news.xml": Scenario(
        lambda o: urlset(
            *(
                url(
                    f"{o}/ext-bad/n/{n}",
                    lastmod("2024-05-01"),
                    news("en", "2024-05-01", "<news:title>T</news:title>"),
                )
                for n in range(1000)
            ),
            url(
                f"{o}/ext-bad/n/british",
                lastmod("2024-05-01"),
                news("en-GB", "2024-05-01", "<news:title>T</news:title>"),
            ),
            attributes=xmlns(EXTENSIONS),
        )
    ),
    "/ext-bad/video.xml": Scenario(
        lambda o: urlset(
            url(
                f"{o}/ext-bad/video",
                lastmod("2024-05-01"),
                "<video:video><video:thumbnail_loc>https://cdn.example.net/t.jpg"
                "</video:thumbnail_loc><video:title>Tour</video:title></video:video>",
            ),
            attributes=xmlns(EXTENSIONS),
        )
    ),
    "/ext-bad/order.xml": Scenario(
        lambda o: urlset(
            f"<url><loc>{o}/ext-bad/a</loc>{image(o + '/a.jpg')}"
            "<lastmod>2024-05-01</lastmod></url>",
            attributes=xmlns(EXTENSIONS),
        )
    ),
    "/ext-bad/undeclared.xml": Scenario(
        lambda o: urlset(url(f"{o}/ext-bad/u", lastmod("2024-05-01"), image(o + "/u.jpg")))
    ),
    "/ext-bad/namespace.xml": Scenario(
        lambda o: urlset(
            url(f"{o}/ext-bad/ns", lastmod("2024-05-01"), image(o + "/ns.jpg")),
            attributes=xmlns({"image": "http://www.google.com/schemas/sitemap-image/1.0"}),
        )
    ),
}


def _status(scenario: Scenario, headers: dict[str, str], etag: str) -> int:
    inm, ims = headers.get("if-none-match"), headers.get("if-modified-since")
    inm_match = inm is not None and inm.removeprefix("W/") == etag.removeprefix("W/")
    ims_match = ims in IMS_EXACT
    if scenario.conditional == "ignore":
        return 200
    if scenario.conditional == "ims-first":
        return 304 if ims_match or inm_match else 200
    if inm is not None:
        return 304 if inm_match else 200
    return 304 if ims_match else 200


async def app(
    scope: MutableMapping[str, Any],
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] != "http":
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    if scope["path"].startswith("/ext/"):
        return await _extension_app(f"http://{headers['host']}")(scope, receive, send)
    scenario = SCENARIOS.get(scope["path"])
    if scenario is None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"not found"})
        return
    document = scenario.document(f"http://{headers['host']}")
    body = document if isinstance(document, bytes) else document.encode()
    etag = ETAG
    if scenario.gzip_file:
        body = gzip.compress(body, mtime=0)
    coded = scenario.coding == "always" or (
        scenario.coding == "negotiate" and "gzip" in headers.get("accept-encoding", "")
    )
    response = [("etag", etag), ("last-modified", LAST_MODIFIED)]
    if not scenario.last_modified:
        del response[1]
    if scenario.proxy:  # each answer comes "from" the cache or the origin in turn
        _proxied[0] += 1
        response += [("x-cache", ("MISS", "HIT")[_proxied[0] % 2]), ("age", str(_proxied[0]))]
    if scenario.vary and scenario.coding == "negotiate":
        response.append(("vary", "Accept-Encoding"))
    if scenario.repeated == "date":
        response.append(("date", format_http_date(datetime.now(UTC))))
    if coded:
        body = gzip.compress(body, mtime=0)
        response[0] = ("etag", 'W/"v1-gzip"')
    if scope["method"] == "HEAD" and scenario.head_etag:
        response[0] = ("etag", scenario.head_etag)
    status = _status(scenario, headers, response[0][1])
    if status == 304:
        await send({"type": "http.response.start", "status": 304, "headers": _encode(response)})
        await send({"type": "http.response.body", "body": b""})
        return
    response.insert(0, ("content-type", scenario.content_type))
    if scenario.repeated == "content-type":
        response.insert(0, ("content-type", scenario.content_type))
    if coded:
        response.append(("content-encoding", "gzip"))
    if scenario.abort:
        await send({"type": "http.response.start", "status": 200, "headers": _encode(response)})
        await send(
            {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
        )
        return  # never the final message: uvicorn closes the connection mid-body
    response.append(("content-length", str(len(body))))
    await send({"type": "http.response.start", "status": 200, "headers": _encode(response)})
    await send({"type": "http.response.body", "body": body})


_proxied = [0]
_extension_apps: dict[str, SitemapApp] = {}


def _extension_app(origin: str) -> SitemapApp:
    from .cli_extension_site import build

    if origin not in _extension_apps:
        _extension_apps[origin] = build(origin)
    return _extension_apps[origin]


def _encode(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in headers]
