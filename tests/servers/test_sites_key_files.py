"""``sites=`` with IndexNow: each host serves its own site's key file, and only it.

A key path is resolved by host first: the host's site answers with its own key, a host
without IndexNow or with another key answers 404, and the fail-closed answers of ``sites=``
(400 without a Host, 503 when the resolver fails) hold for key paths too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from sitemap_middleware import (
    ConfigurationError,
    IndexNowSettings,
    SiteConfig,
    SitemapApp,
    SitemapWSGIApp,
)

from ..adapters import Reply, asgi_reply, wsgi_reply

KEY_A = "aaaa1111bbbb2222"
KEY_B = "cccc3333dddd4444"
A, B, C = "a.example.com", "b.example.com", "c.example.com"


def urls(host: str) -> list[str]:
    return [f"https://{host}/one", f"https://{host}/two"]


def configs() -> dict[str, SiteConfig]:
    return {
        A: SiteConfig(
            base_url=f"https://{A}/", sources=urls(A), indexnow=IndexNowSettings(key=KEY_A)
        ),
        B: SiteConfig(
            base_url=f"https://{B}/", sources=urls(B), indexnow=IndexNowSettings(key=KEY_B)
        ),
        C: SiteConfig(base_url=f"https://{C}/", sources=urls(C)),
    }


def reply(interface: str, app: Any, host: str | None, path: str) -> Reply:
    headers = [] if host is None else [(b"host", host.encode())]
    if interface == "asgi":
        return asyncio.run(asgi_reply(app, "GET", path.encode(), headers))
    return wsgi_reply(app, "GET", path.encode(), headers)


APPS: dict[str, Callable[..., Any]] = {"asgi": SitemapApp, "wsgi": SitemapWSGIApp}


@pytest.mark.parametrize("interface", APPS)
@pytest.mark.parametrize("resolver", [False, True], ids=["mapping", "resolver"])
def test_each_host_serves_its_own_key_file_only(interface: str, resolver: bool) -> None:
    known = configs()
    sites: object = known.get if resolver else known
    app = APPS[interface](sites=sites)
    for host, key in ((A, KEY_A), (B, KEY_B)):
        answer = reply(interface, app, host, f"/{key}.txt")
        assert answer.status == 200, (host, answer)
        assert answer.body == key.encode()
        assert answer.header("content-type") == "text/plain; charset=utf-8"
    # Another site's key, a host without IndexNow, a host with no site: 404.
    assert reply(interface, app, A, f"/{KEY_B}.txt").status == 404
    assert reply(interface, app, B, f"/{KEY_A}.txt").status == 404
    assert reply(interface, app, C, f"/{KEY_A}.txt").status == 404
    assert reply(interface, app, "d.example.com", f"/{KEY_A}.txt").status == 404
    # No Host: 400, never another site's key.
    assert reply(interface, app, None, f"/{KEY_A}.txt").status == 400
    # The sitemaps themselves are unchanged.
    assert reply(interface, app, A, "/sitemap.xml").status == 200


@pytest.mark.parametrize("interface", APPS)
def test_a_failing_resolver_answers_503_for_a_key_path(interface: str) -> None:
    def broken(host: str) -> SiteConfig | None:
        raise RuntimeError("the sites database is down")

    app = APPS[interface](sites=broken)
    answer = reply(interface, app, A, f"/{KEY_A}.txt")
    assert answer.status == 503
    assert answer.header("retry-after") is not None


def test_a_mapping_claims_only_its_sites_key_paths() -> None:
    """A mapping's key paths are known: another ``.txt`` path of key shape is the app's."""
    calls: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        calls.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})

    from sitemap_middleware import SitemapMiddleware

    app = SitemapMiddleware(inner, sites=configs())
    answer = asyncio.run(asgi_reply(app, "GET", b"/llms-full.txt", [(b"host", A.encode())]))
    assert (answer.status, answer.body, calls) == (200, b"app", ["/llms-full.txt"])
    # A site's key path on a host whose site has none is a 404, not the app's page.
    answer = asyncio.run(asgi_reply(app, "GET", f"/{KEY_A}.txt".encode(), [(b"host", C.encode())]))
    assert answer.status == 404


def test_site_config_checks_its_indexnow() -> None:
    with pytest.raises(ConfigurationError, match=r"indexnow\.key"):
        SiteConfig(base_url="https://a.example.com/", sources=[], indexnow={"key": "short"})  # type: ignore[arg-type]
    config = SiteConfig(
        base_url="https://a.example.com/",
        sources=[],
        indexnow={"key": KEY_A},  # type: ignore[arg-type]
    )
    assert config.indexnow == IndexNowSettings(key=KEY_A)


def test_shared_indexnow_beside_sites_names_the_site_setting() -> None:
    with pytest.raises(ConfigurationError, match=r"SiteConfig\(indexnow=\.\.\.\)"):
        SitemapApp(sites=configs(), indexnow=IndexNowSettings(key=KEY_A))
