"""Two replicas of the example site behind a real nginx, under a path prefix, with proxy_cache.

nginx runs docs/deployment.md's configuration as written: the ``nginx`` block is read from
the Markdown and only its cache folder, the replicas' ports and a ``listen`` line are
replaced (``tests/docs_support.py:nginx_config``). Around it the test adds what a test needs
and the guide does not show: temporary paths, an access log naming each request's
``X-Step`` header, and a second server of its own (other port) for the failures the guide
explains. The replicas answer for two host names (``allowed_hosts``), as a site served
under two domains does.

nginx (Debian's package) runs as a child of the test, on free 127.0.0.1 ports: no system
service. Without nginx these tests skip, unless ``SITEMAP_REQUIRE_NGINX=1`` (set by
``.ci/run``) turns the skip into a failure.

What uvicorn and Starlette do with proxies (checked in their source and below):

* ``--root-path /shop`` (``root_path=`` in ``uvicorn.run``) *prepends* the prefix to the path it
  receives: nginx must strip it (``location /shop/ { proxy_pass http://app/; }``). A path
  that still carries it arrives as ``/shop/shop/...`` and is not the sitemap.
* ``X-Forwarded-Proto`` only sets ``scope["scheme"]``, and only from trusted addresses
  (``--forwarded-allow-ips``, default 127.0.0.1). ``X-Forwarded-Host``, ``X-Forwarded-Prefix``
  and ``Forwarded`` are ignored by both. Locs come from ``base_url`` whatever they say.
"""

from __future__ import annotations

import gzip
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import STDOUT, Popen
from typing import NoReturn

import pytest
from lxml import etree
from sqlalchemy import create_engine

from ..docs_support import deployment_nginx, nginx_config
from ..support import assert_valid_index, assert_valid_urlset, check_served, free_port, locs, seed

pytestmark = pytest.mark.nginx
ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/shop"
HOST = "www.example.com"  # the base URL's
OTHER_HOST = "shop.example.org"  # the other name the site answers for
BASE = f"https://{HOST}/shop/"
ROWS = 9_000  # three article pages of 4,225 rows (default max_loc_length)
REQUIRED = os.environ.get("SITEMAP_REQUIRE_NGINX") == "1"

# $http_x_step: each request names itself, so its log line can be found. {deployment} is the
# guide's configuration; the server on {extra} is the test's own.
NGINX_CONF = """
daemon off;
{user}
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
events {{ worker_connections 128; }}
http {{
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy_temp;
    fastcgi_temp_path {tmp}/fastcgi_temp;
    uwsgi_temp_path {tmp}/uwsgi_temp;
    scgi_temp_path {tmp}/scgi_temp;
    log_format steps '$http_x_step $request_method $request_uri $status '
                     'cache=$upstream_cache_status upstream=$upstream_status '
                     'addr=$upstream_addr host=$host';
    access_log {tmp}/access.log steps;
{deployment}
    upstream broken {{ server 127.0.0.1:{broken}; keepalive 2; }}
    server {{
        listen 127.0.0.1:{extra};
        proxy_set_header Host $host;  # a host the replicas answer for
        location /as-sent/ {{
            proxy_pass http://app/;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Connection "";
            proxy_cache sitemaps;
            proxy_cache_key as-sent$request_uri;  # apart from the guide's copies
            proxy_cache_valid 200 1m;
        }}
        location /broken/ {{
            proxy_pass http://broken/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache sitemaps;
            proxy_ignore_headers Cache-Control Expires;
            proxy_cache_valid 200 1m;
        }}
        location /http10/ {{
            proxy_pass http://127.0.0.1:{replica_a}/;
        }}
        location /broken-http10/ {{
            proxy_pass http://127.0.0.1:{broken}/;
            proxy_cache sitemaps;
            proxy_ignore_headers Cache-Control Expires;
            proxy_cache_valid 200 1m;
        }}
    }}
}}
"""


def unavailable(reason: str) -> NoReturn:
    if REQUIRED:
        pytest.fail(f"{reason} (SITEMAP_REQUIRE_NGINX=1: nginx must run here)")
    pytest.skip(reason)


def launch(command: list[str], log: Path, env: dict[str, str] | None = None) -> Popen[bytes]:
    with log.open("wb") as out:
        return Popen(
            command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out, stderr=STDOUT
        )


def listening(port: int, process: Popen[bytes]) -> bool:
    """Wait until ``port`` accepts connections; False if the process ends or a minute passes."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def validators(self) -> tuple[str | None, str | None]:
        return self.headers.get("etag"), self.headers.get("last-modified")


def fetch(
    port: int,
    path: str,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    check: bool = True,
) -> Reply:
    """One request (``Host`` the base URL's unless given); the body as sent (de-chunked, never
    decompressed), checked when a sitemap."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Host": HOST, "Accept-Encoding": "identity", **(headers or {})}
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        reply = Reply(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()
    if method == "GET" and check:
        check_served(
            reply.status,
            reply.headers.get("content-type", ""),
            reply.body,
            reply.headers.get("content-encoding"),
        )
    return reply


@dataclass
class Site:
    replicas: tuple[int, int]
    nginx: int
    extra: int  # the test's own server: the failures the guide explains
    tmp: Path
    cache_valid: int  # the guide's proxy_cache_valid for 200, in seconds

    def steps(self, step: str) -> list[str]:
        """nginx's log lines of the requests sent with ``X-Step: step``.

        nginx writes a request's line once the response is sent, which may be just after
        the client has read it: wait a moment for it.
        """
        deadline = time.monotonic() + 5
        while True:
            lines = (self.tmp / "access.log").read_text().splitlines()
            found = [line for line in lines if line.split(" ", 1)[0] == step]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def replica_log(self) -> str:
        return "".join((self.tmp / f"replica-{p}.log").read_text() for p in self.replicas)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if nginx is None:
        unavailable("nginx is not installed (Debian: apt-get install nginx)")
    tmp = tmp_path_factory.mktemp("nginx")
    replica_ports = (free_port(), free_port())
    broken, port, extra = free_port(), free_port(), free_port()
    broken_db = tmp / "broken.sqlite3"
    engine = create_engine(f"sqlite:///{broken_db}")
    seed(engine, 1200)
    engine.dispose()
    processes: list[Popen[bytes]] = []
    try:
        for replica in replica_ports:  # both at once on one new database file
            env = {
                "EXAMPLE_DB": str(tmp / "site.sqlite3"),
                "EXAMPLE_ROWS": str(ROWS),
                "BASE_URL": BASE,
                "ALLOWED_HOSTS": f"{HOST},{OTHER_HOST}",
            }
            log = tmp / f"replica-{replica}.log"
            # As the guide runs each replica (uvicorn app:app --host ... --port ... --root-path).
            command = [sys.executable, "-m", "uvicorn", "tests.nginx_replica:app"]
            command += ["--host", "127.0.0.1", "--port", str(replica), "--root-path", PREFIX]
            processes.append(launch([*command, "--lifespan", "on"], log, env))
        uvicorn = [sys.executable, "-m", "uvicorn", "tests.e2e_server:app", "--port", str(broken)]
        env = {"E2E_DB": str(broken_db), "E2E_FAIL_AT": "900"}
        processes.append(launch(uvicorn, tmp / "broken.log", env))
        for server, process in zip([*replica_ports, broken], processes, strict=True):
            if not listening(server, process):
                logs = "".join(log.read_text() for log in tmp.glob("*.log"))
                pytest.fail(f"a server on {server} did not start:\n{logs}")
        guide = deployment_nginx()
        deployment = nginx_config(guide, cache=tmp / "cache", replicas=replica_ports, listen=port)
        conf = tmp / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(
                user="user root;" if os.geteuid() == 0 else "",  # workers write the cache in tmp
                tmp=tmp,
                deployment=deployment,
                extra=extra,
                replica_a=replica_ports[0],
                broken=broken,
            )
        )
        valid = re.search(r"proxy_cache_valid 200 (\d+)s;", guide)
        assert valid, "the guide's proxy_cache_valid is for 200 in seconds"
        command = [nginx, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "error.log")]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
        if checked.returncode != 0:
            unavailable(f"nginx rejects its test configuration: {checked.stderr.strip()}")
        processes.append(launch(command, tmp / "nginx.out"))
        if not listening(port, processes[-1]):
            unavailable(f"nginx did not start: {(tmp / 'error.log').read_text()[-2000:]}")
        yield Site(replica_ports, port, extra, tmp, int(valid.group(1)))
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


GZIP = {"Accept-Encoding": "gzip"}
DOCUMENTS = [
    ("/sitemap.xml", {}),
    ("/sitemap-articles-2.xml", {}),
    ("/sitemap-articles-2.xml.gz", {}),
    ("/sitemap.xml", GZIP),
    ("/sitemap-articles-2.xml", GZIP),
]


@pytest.mark.parametrize(("path", "headers"), DOCUMENTS)
def test_each_replica_and_nginx_send_the_same_bytes_and_validators(
    site: Site, path: str, headers: dict[str, str]
) -> None:
    replica_a, replica_b = (fetch(port, path, headers=headers) for port in site.replicas)
    proxied = fetch(site.nginx, PREFIX + path, headers=headers)
    for reply in (replica_a, replica_b, proxied):
        assert reply.status == 200
        assert reply.validators[0] and reply.validators[0].startswith('W/"')
        assert reply.validators[1]
    assert replica_a.body == replica_b.body == proxied.body
    assert replica_a.validators == replica_b.validators == proxied.validators
    for name in ("content-type", "content-encoding", "vary", "cache-control", "x-robots-tag"):
        assert replica_a.headers.get(name) == replica_b.headers.get(name)
        assert replica_a.headers.get(name) == proxied.headers.get(name)
    if headers or path.endswith(".gz"):
        assert proxied.body[:2] == b"\x1f\x8b"
        plain = fetch(site.replicas[0], path.removesuffix(".gz"))
        assert gzip.decompress(proxied.body) == plain.body


def test_proxy_cache_revalidates_with_the_replicas_304(site: Site) -> None:
    """proxy_cache_valid, proxy_cache_revalidate on: once stale, each variant is revalidated
    with its own validators, a replica answers 304 and nginx serves the body it cached."""
    path = PREFIX + "/sitemap-articles-3.xml"
    variants: dict[str, dict[str, str]] = {"plain": {}, "gzip": GZIP}
    first, again = {}, {}
    for name, headers in variants.items():
        first[name] = fetch(site.nginx, path, headers={**headers, "X-Step": name + "-1"})
        again[name] = fetch(site.nginx, path, headers={**headers, "X-Step": name + "-2"})
    # nginx counts validity in whole seconds: then the copies are stale.
    time.sleep(site.cache_valid + 1.1)
    for name, headers in variants.items():
        revalidated = fetch(site.nginx, path, headers={**headers, "X-Step": name + "-3"})
        etag = first[name].validators[0] or ""
        conditional = fetch(
            site.nginx, path, headers={**headers, "X-Step": name + "-4", "If-None-Match": etag}
        )
        assert first[name].status == again[name].status == revalidated.status == 200
        assert first[name].body == again[name].body == revalidated.body
        assert first[name].validators == again[name].validators == revalidated.validators
        assert first[name].headers.get("content-encoding") == ("gzip" if headers else None)
        assert conditional.status == 304 and conditional.body == b""
        assert conditional.validators == first[name].validators
        [miss] = site.steps(name + "-1")
        [hit] = site.steps(name + "-2")
        [revalidation] = site.steps(name + "-3")
        assert "cache=MISS upstream=200" in miss
        assert "cache=HIT upstream=-" in hit
        assert "cache=REVALIDATED upstream=304" in revalidation
    assert first["plain"].validators[0] != first["gzip"].validators[0]
    # The replicas logged the conditional requests nginx sent them.
    assert site.replica_log().count(f'"GET {path} HTTP/1.1" 304') >= 2


def test_locs_come_from_base_url_whatever_the_request_says(site: Site) -> None:
    spoofed = {
        "X-Forwarded-Proto": "http",
        "X-Forwarded-Host": "attacker.example",
        "X-Forwarded-Prefix": "/elsewhere",
        "Forwarded": "host=attacker.example;proto=http",
    }
    for path in ("/sitemap.xml", "/sitemap-articles-1.xml"):
        plain = fetch(site.replicas[0], path)
        direct = fetch(site.replicas[1], path, headers=spoofed)
        proxied = fetch(site.nginx, PREFIX + path, headers={**spoofed, "X-Step": "spoof" + path})
        assert plain.body == direct.body == proxied.body
        assert plain.validators == direct.validators == proxied.validators
        # A Host the site does not answer for is refused, and nothing of it is echoed.
        for port, prefix in ((site.replicas[0], ""), (site.nginx, PREFIX)):
            foreign = fetch(port, prefix + path, headers={**spoofed, "Host": "attacker.example"})
            assert foreign.status == 400 and b"attacker" not in foreign.body
    index = assert_valid_index(fetch(site.replicas[0], "/sitemap.xml").body)
    assert all(loc.startswith(BASE) for loc, _ in index)


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-articles-1.xml"])
@pytest.mark.parametrize("headers", [{}, GZIP], ids=["plain", "gzip"])
def test_each_host_gets_its_own_cached_sitemap(
    site: Site, path: str, headers: dict[str, str]
) -> None:
    """With allowed_hosts, each host's documents list that host's URLs: nginx's cache keeps
    them apart (the host is in proxy_cache_key), and never serves one host another's."""
    step = f"hosts-{path}-{bool(headers)}"
    replies: dict[str, list[Reply]] = {}
    for n, host in enumerate((HOST, OTHER_HOST, HOST, OTHER_HOST)):
        reply = fetch(
            site.nginx, PREFIX + path, headers={**headers, "Host": host, "X-Step": f"{step}-{n}"}
        )
        direct = fetch(site.replicas[n % 2], path, headers={**headers, "Host": host})
        assert reply.status == 200
        assert (reply.body, reply.validators) == (direct.body, direct.validators)
        body = gzip.decompress(reply.body) if headers else reply.body
        listed = re.findall(rb"<loc>([^<]*)</loc>", body)
        assert listed and all(loc.startswith(f"https://{host}/shop/".encode()) for loc in listed)
        replies.setdefault(host, []).append(reply)
    for host, (first, again) in replies.items():
        assert first.body == again.body and first.validators == again.validators, host
    assert replies[HOST][0].validators[0] != replies[OTHER_HOST][0].validators[0]
    statuses = [site.steps(f"{step}-{n}")[0] for n in range(4)]
    # The base host's copy may be cached by an earlier test; the other host's is not.
    assert "cache=MISS upstream=200" in statuses[1], statuses
    assert all("cache=HIT upstream=-" in line for line in statuses[2:]), statuses


def test_the_site_and_its_sitemap_answer_under_the_prefix(
    site: Site, sitemap_schema: etree.XMLSchema
) -> None:
    index = fetch(site.nginx, PREFIX + "/sitemap.xml")
    children = [loc for loc, _ in assert_valid_index(index.body)]
    assert children == [BASE + "sitemap-pages-1.xml"] + [
        BASE + f"sitemap-articles-{n}.xml" for n in (1, 2, 3)
    ]
    urls: list[str] = []
    for child in children:
        page = fetch(site.nginx, PREFIX + "/" + child.removeprefix(BASE))
        assert page.status == 200
        urls += locs(assert_valid_urlset(page.body, sitemap_schema))
    assert len(urls) == 4 + ROWS - ROWS // 50  # static pages + public articles
    assert all(url.startswith(BASE) for url in urls)
    for url in [*urls[:4], urls[-1], BASE + "articles/caf%C3%A9-cr%C3%A8me"]:
        assert url in urls
        assert fetch(site.nginx, PREFIX + "/" + url.removeprefix(BASE)).status == 200, url

    head = fetch(site.nginx, PREFIX + "/sitemap.xml", method="HEAD")
    assert head.status == 200 and head.body == b""
    assert head.validators == index.validators
    post = fetch(site.nginx, PREFIX + "/sitemap.xml", method="POST")
    assert post.status == 405 and post.headers["allow"] == "GET, HEAD"
    assert fetch(site.nginx, PREFIX + "/sitemap-articles-4.xml").status == 404
    # uvicorn prepends its root_path to the path it receives: the proxy must strip the prefix.
    assert fetch(site.replicas[0], PREFIX + "/sitemap.xml").status == 404


def test_without_ignoring_cache_control_nginx_stores_nothing(site: Site) -> None:
    """Why the guide sets proxy_ignore_headers: nginx does not store a ``no-cache`` response."""
    for step in ("as-sent-1", "as-sent-2"):
        reply = fetch(site.extra, "/as-sent/sitemap-pages-1.xml", headers={"X-Step": step})
        assert reply.status == 200 and reply.headers["cache-control"] == "no-cache"
        [line] = site.steps(step)
        assert "cache=MISS upstream=200" in line


def test_an_aborted_transfer_is_neither_passed_on_whole_nor_cached(site: Site) -> None:
    """With proxy_http_version 1.1 the replica's cut chunked body reaches the client cut."""
    for step in ("broken-1", "broken-2"):
        with pytest.raises(http.client.IncompleteRead):
            fetch(site.extra, "/broken/broken.xml", headers={"X-Step": step})
        [line] = site.steps(step)
        assert "cache=MISS upstream=200" in line  # asked again: nothing was cached


def test_http10_to_the_upstream_never_gets_a_cut_body(site: Site) -> None:
    """nginx's default upstream protocol (1.0) has no chunked framing: a closed connection
    would read as the end of a complete body. So an HTTP/1.0 request gets the document only
    whole, with a Content-Length, and a failure while it is generated is a 503 that nothing
    caches. (The guide still asks for proxy_http_version 1.1: it streams.)"""
    for step in ("http10-1", "http10-2"):
        reply = fetch(
            site.extra, "/broken-http10/broken.xml", headers={"X-Step": step}, check=False
        )
        assert reply.status == 503 and b"<" not in reply.body
    assert "upstream=503" in site.steps("http10-1")[0]
    assert "cache=HIT" not in site.steps("http10-2")[0]
    whole = fetch(site.extra, "/http10/sitemap.xml", check=False)
    assert whole.status == 200 and whole.body.rstrip().endswith(b"</sitemapindex>")
