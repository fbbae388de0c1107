"""``check --host`` (the lastmod audit with it): one host's sitemap of an application given
``sites=``, checked in-process; and over HTTP, two hosts of one server each checked by its
own URL."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from sitemap_middleware import (
    Entry,
    IterableSource,
    SiteConfig,
    SitemapMiddleware,
    SitemapWSGIMiddleware,
)
from sitemap_middleware.cli import main
from sitemap_middleware.core.http import format_http_date

from ..support import free_port
from ..uvicorn_process import pythonpath, serving, uvicorn

HOSTS = ("one.example", "two.example")
START = datetime(2024, 5, 1, tzinfo=UTC)
PAGES = 12


def lastmod(host: str, n: int) -> datetime:
    return START + timedelta(days=HOSTS.index(host) * 30, hours=n)


def site(base_url: str, host: str) -> SiteConfig:
    """A site of 12 pages (two sitemaps of six: an index), each page's lastmod its own."""
    entries = [Entry(f"/{host.split('.')[0]}/{n}", lastmod(host, n)) for n in range(PAGES)]
    return SiteConfig(
        base_url=base_url, sources=[IterableSource(entries, name="pages")], limits={"max_urls": 6}
    )


SITES = {host: site(f"https://{host}/", host) for host in HOSTS}
asked: list[tuple[str, str]] = []
"""(host, path) of each request the application behind the middleware answered."""
lock = threading.Lock()


def page(host: str, path: str) -> tuple[int, list[tuple[str, str]]]:
    """The application's own page: its Last-Modified the lastmod its sitemap lists."""
    with lock:
        asked.append((host, path))
    prefix, _, n = path.strip("/").partition("/")
    if prefix != host.split(".")[0] or not n.isdigit():
        return 404, [("content-type", "text/plain")]
    modified = format_http_date(lastmod(host, int(n)))
    return 200, [("content-type", "text/html"), ("last-modified", modified)]


async def asgi_pages(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    host = dict(scope["headers"])[b"host"].decode()
    status, headers = page(host, scope["path"])
    lines = [(k.encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": lines})
    await send({"type": "http.response.body", "body": b"<p>page</p>"})


def wsgi_pages(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    status, headers = page(environ["HTTP_HOST"], environ["PATH_INFO"])
    start_response(f"{status} {'OK' if status == 200 else 'Not Found'}", headers)
    return [b"<p>page</p>"]


async def resolver(host: str) -> SiteConfig | None:
    return SITES.get(host)


asgi = SitemapMiddleware(asgi_pages, sites=SITES)
wsgi = SitemapWSGIMiddleware(wsgi_pages, sites=resolver)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    status = main(["check", "--json", *args])
    captured = capsys.readouterr()
    report = json.loads(captured.out) if captured.out else {}
    if report:
        assert report["exit_status"] == status
    return status, report, captured.err


@pytest.fixture(autouse=True)
def fresh() -> None:
    with lock:
        asked.clear()


@pytest.mark.parametrize("app", ["asgi", "wsgi"])
@pytest.mark.parametrize("host", HOSTS)
def test_check_host_checks_that_hosts_sitemap_in_process(
    app: str, host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # No URL: the root sitemap of that host's site.
    status, report, err = check(capsys, "--app", f"{__name__}:{app}", "--host", host)
    assert (status, err) == (0, ""), report
    assert report["url"] == f"https://{host}/sitemap.xml"
    urls = [d["url"] for d in report["documents"]]
    assert urls == [f"https://{host}/sitemap.xml"] + [
        f"https://{host}/sitemap-pages-{n}.xml" for n in (1, 2)
    ]
    assert all(d["ok"] and d["status"] == 200 for d in report["documents"]), report
    # The same with the URL named, on that host.
    status, same, _ = check(
        capsys, "--app", f"{__name__}:{app}", "--host", host, f"https://{host}/sitemap.xml"
    )
    assert status == 0 and [d["url"] for d in same["documents"]] == urls


@pytest.mark.parametrize("app", ["asgi", "wsgi"])
def test_the_audit_of_one_host_requests_that_hosts_pages_only(
    app: str, capsys: pytest.CaptureFixture[str]
) -> None:
    host, other = HOSTS[1], HOSTS[0]
    status, report, err = check(
        capsys,
        "--app",
        f"{__name__}:{app}",
        "--host",
        host,
        "--no-conditional",
        "--audit-lastmod",
        "6",
        "--audit-delay",
        "0",
    )
    assert (status, err) == (0, ""), report
    assert report["audit"]["requests"] == 6
    audited = [d["audit"] for d in report["documents"] if "audit" in d]
    assert len(audited) == 2
    findings = {f["code"]: f["verdict"] for a in audited for f in a["findings"]}
    assert findings.get("audit.older", "pass") == "pass"
    assert findings.get("audit.status", "pass") == "pass"
    # Every page request reached the application with that host, for that host's pages.
    assert len(asked) == 6
    assert {h for h, _ in asked} == {host}
    assert all(path.startswith(f"/{host.split('.')[0]}/") for _, path in asked)
    assert not any(other.split(".")[0] in path for _, path in asked)


def test_check_host_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    app = f"{__name__}:wsgi"
    status, _, err = check(capsys, "--app", app, "--host", "three.example")
    assert status == 2 and "--host: no site for 'three.example'" in err
    status, _, err = check(
        capsys, "--app", app, "--host", "one.example", "https://two.example/sitemap.xml"
    )
    assert status == 2 and "is not on the site of 'one.example'" in err
    status, _, err = check(capsys, "--host", "one.example", "https://one.example/sitemap.xml")
    assert status == 2 and "--host names a site of an application checked in-process" in err
    status, _, err = check(capsys, "--app", app)
    assert status == 2 and "URL is required" in err
    status, _, err = check(capsys, "--app", "tests.cli_site:app", "--host", "one.example")
    assert status == 2 and "--host: the application has no middleware given sites=" in err
    assert asked == []


# --- over HTTP: two hosts of one server ----------------------------------------------------

# The server imports this module too: it gets the port from the test's process.
PORT = int(os.environ.get("SITEMAP_TEST_SITES_PORT") or free_port())
NAMES = ("localhost", "127.0.0.1")
"""Two names of the loopback interface: two hosts of one server, each its own site."""
SERVED = {
    f"{name}:{PORT}": site(f"http://{name}:{PORT}/", host)
    for name, host in zip(NAMES, HOSTS, strict=True)
}
served = SitemapMiddleware(asgi_pages, sites=SERVED)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    log = tmp_path_factory.mktemp("sites") / "uvicorn.log"
    env = {"SITEMAP_TEST_SITES_PORT": str(PORT), "PYTHONPATH": pythonpath()}
    with serving(uvicorn(f"{__name__}:served", PORT), PORT, log, env, "/sitemap.xml"):
        yield


@pytest.mark.e2e
def test_two_hosts_of_one_server_are_each_checked_by_their_own_url(
    server: None, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, host in zip(NAMES, HOSTS, strict=True):
        origin = f"http://{name}:{PORT}"
        status, report, err = check(capsys, f"{origin}/sitemap.xml")
        assert (status, err) == (0, ""), report
        assert [d["url"] for d in report["documents"]] == [f"{origin}/sitemap.xml"] + [
            f"{origin}/sitemap-pages-{n}.xml" for n in (1, 2)
        ]
        assert all(d["ok"] and d["status"] == 200 for d in report["documents"]), report
        # What was checked is that host's own sitemap: its pages, on its own origin.
        body = httpx.get(f"{origin}/sitemap-pages-1.xml").text
        locs = [f"<loc>{origin}/{host.split('.')[0]}/{n}</loc>" for n in range(6)]
        assert all(loc in body for loc in locs), body
        assert body.count("<loc>") == 6
