"""Two replicas of a two-site platform behind a real Varnish with the xkey module.

Varnish runs docs/deployment.md's VCL as written: the ``vcl`` block is read from the Markdown
and only the replicas' ports and the probe's host are replaced
(``tests/docs_support.py:vcl_config``). The replicas (``tests/varnish_replica.py``) serve one
SQLite table as ``a.example`` and ``b.example`` with ``sites=``, ``Headers.cdn()`` and an
``XkeyPurger`` pointed at that Varnish; Varnish round-robins between them.

What is checked, through the cache: an edit reaches it as a purge within the bound the guide
states, and the documents that did not change stay cached; with the database down, the last
good copies are served within ``stale-if-error`` and no 503 is stored; each host sees only
its own documents. The figures the guide quotes (the purge's delay, the hits) are printed:
``python -m pytest -s -p no:randomly tests/e2e/test_varnish.py``.

Varnish (Debian's ``varnish`` and ``varnish-modules``) runs as a child of the test, on free
127.0.0.1 ports, in a work folder of its own: no system service. Without it these tests skip,
unless ``SITEMAP_REQUIRE_VARNISH=1`` (set by ``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from subprocess import STDOUT, Popen
from typing import NoReturn

import pytest
from sqlalchemy import create_engine, insert, update
from sqlalchemy.pool import NullPool

from ..docs_support import deployment_vcl, vcl_config
from ..support import assert_valid_index, free_port
from ..uvicorn_process import pythonpath
from ..varnish_replica import HOSTS, metadata, pages

pytestmark = pytest.mark.varnish
ROOT = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("SITEMAP_REQUIRE_VARNISH") == "1"
ROWS = 600  # ids 1..600: the odd ones a.example's, the even ones b.example's; 6 pages each
EPOCH = datetime(2024, 1, 1)
PROBE = 1.0  # the guide's probe .interval, in seconds
R = 2.0  # freshness: an edit shows in a replica's answers within R (docs/freshness.md)
SHORT = 2 + 3  # b.example's s-maxage plus stale-while-revalidate (tests/varnish_replica.py)


def unavailable(reason: str) -> NoReturn:
    if REQUIRED:
        pytest.fail(f"{reason} (SITEMAP_REQUIRE_VARNISH=1: Varnish must run here)")
    pytest.skip(reason)


def launch(command: list[str], log: Path, env: dict[str, str] | None = None) -> Popen[bytes]:
    with log.open("wb") as out:
        return Popen(
            command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out, stderr=STDOUT
        )


def answering(port: int, process: Popen[bytes], host: str) -> bool:
    """Wait until ``port`` answers ``/sitemap.xml`` for ``host``; False if the process ends or
    a minute passes."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if fetch(port, "/sitemap.xml", host).status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def cache(self) -> str:
        """What Varnish's ``vcl_deliver`` says: HIT, MISS or STALE."""
        return self.headers.get("x-cache", "")

    @property
    def hits(self) -> int:
        """``obj.hits``: how many requests this stored copy has answered before."""
        return int(self.headers.get("x-cache-hits", "0"))


def fetch(port: int, path: str, host: str) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": host, "Accept-Encoding": "identity"})
        response = connection.getresponse()
        return Reply(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()


def locs(body: bytes) -> list[str]:
    return [loc.decode() for loc in re.findall(rb"<loc>([^<]*)</loc>", body)]


@dataclass
class Cache:
    varnishd: str
    port: int
    workdir: Path
    replicas: tuple[int, int]
    db: Path

    def get(self, path: str, host: str = "a.example") -> Reply:
        return fetch(self.port, path, host)

    def stat(self, name: str) -> int:
        """A counter of ``varnishstat`` (``MAIN.cache_hit``, ...)."""
        varnishstat = Path(self.varnishd).with_name("varnishstat")
        command = [str(varnishstat if varnishstat.exists() else "varnishstat"), "-1"]
        done = subprocess.run(
            [*command, "-n", str(self.workdir), "-f", name],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        [line] = [line for line in done.stdout.splitlines() if line.split()[0] == name]
        return int(line.split()[1])

    def backends_healthy(self) -> bool:
        varnishadm = Path(self.varnishd).with_name("varnishadm")
        if not varnishadm.exists():
            varnishadm = Path(shutil.which("varnishadm") or "varnishadm")
        done = subprocess.run(
            [str(varnishadm), "-n", str(self.workdir), "backend.list"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        rows = [line for line in done.stdout.splitlines() if ".replica_" in line]
        return len(rows) == 2 and all("healthy" in row for row in rows)

    def write(self, row: int, updated_at: datetime) -> None:
        """An edit, as the application writes it (SQLAlchemy's spelling of the datetime)."""
        engine = create_engine(
            f"sqlite:///{self.db}", poolclass=NullPool, connect_args={"timeout": 30}
        )
        with engine.begin() as connection:
            connection.execute(update(pages).where(pages.c.id == row).values(updated_at=updated_at))
        engine.dispose()


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cache]:
    varnishd = shutil.which("varnishd") or shutil.which("varnishd", path="/usr/sbin:/sbin")
    if varnishd is None:
        unavailable("Varnish is not installed (Debian: apt-get install varnish varnish-modules)")
    tmp = tmp_path_factory.mktemp("varnish")
    db = tmp / "pages.sqlite3"
    engine = create_engine(f"sqlite:///{db}")
    metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(
            insert(pages),
            [
                {
                    "id": n,
                    "host": HOSTS[(n + 1) % 2],
                    "slug": f"page-{n}",
                    "updated_at": EPOCH + timedelta(minutes=n),
                }
                for n in range(1, ROWS + 1)
            ],
        )
    engine.dispose()
    replicas = (free_port(), free_port())
    port = free_port()
    processes: list[Popen[bytes]] = []
    try:
        for replica in replicas:
            env = {
                "VARNISH_DB": str(db),
                "VARNISH_PURGE_URL": f"http://127.0.0.1:{port}/",
                "PYTHONPATH": pythonpath(),
            }
            command = [sys.executable, "-m", "uvicorn", "--factory", "tests.varnish_replica:create"]
            command += ["--host", "127.0.0.1", "--port", str(replica), "--lifespan", "on"]
            processes.append(launch(command, tmp / f"replica-{replica}.log", env))
        for replica, process in zip(replicas, processes, strict=True):
            if not answering(replica, process, "a.example"):
                logs = "".join(log.read_text() for log in tmp.glob("*.log"))
                pytest.fail(f"the replica on {replica} did not start:\n{logs}")
        vcl = tmp / "sitemap.vcl"
        vcl.write_text(vcl_config(deployment_vcl(), replicas=replicas, probe_host="a.example"))
        workdir = tmp / "work"
        # -j none: the user the tests run as (root would drop to Varnish's users, who cannot
        # read a pytest temporary folder); -F: in the foreground, a child of the test.
        command = [varnishd, "-j", "none", "-n", str(workdir), "-f", str(vcl)]
        checked = subprocess.run([*command[:5], "-C", "-f", str(vcl)], capture_output=True)
        if b"Could not find VMOD xkey" in checked.stderr:
            unavailable(
                "the xkey module is not installed (Debian: apt-get install varnish-modules)"
            )
        assert checked.returncode == 0, checked.stderr.decode()[-4000:]
        command += ["-F", "-a", f"127.0.0.1:{port}", "-s", "malloc,64m"]
        command += ["-P", str(tmp / "varnishd.pid"), "-T", "127.0.0.1:0"]
        processes.append(launch(command, tmp / "varnishd.log"))
        started = Cache(varnishd, port, workdir, replicas, db)
        if not answering(port, processes[-1], "a.example"):
            pytest.fail(f"Varnish did not start:\n{(tmp / 'varnishd.log').read_text()}")
        yield started
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def until(probe: Callable[[], bool], seconds: float, step: float = 0.02) -> float:
    """Call ``probe`` until it returns true; the seconds it took (fails past ``seconds``)."""
    began = time.monotonic()
    while not probe():
        assert time.monotonic() - began < seconds, f"not within {seconds} s"
        time.sleep(step)
    return time.monotonic() - began


def test_each_host_sees_only_its_own_documents(cache: Cache) -> None:
    """One cache key per host: the same paths, two sitemaps, never one for the other."""
    for path in ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-pages-4.xml"):
        replies: dict[str, list[Reply]] = {}
        for host in (*HOSTS, *HOSTS):
            reply = cache.get(path, host)
            assert reply.status == 200, (path, host, reply.body[:200])
            listed = locs(reply.body)
            assert listed and all(loc.startswith(f"http://{host}/") for loc in listed), host
            replies.setdefault(host, []).append(reply)
        for host, (first, again) in replies.items():
            assert again.cache == "HIT" and again.body == first.body, (path, host)
        a, b = (replies[host][0] for host in HOSTS)
        assert a.body != b.body and a.headers["etag"] != b.headers["etag"]
        if path != "/sitemap.xml":  # each host's rows: odd ids for a.example, even for b
            ids = {
                host: {int(loc.rsplit("-", 1)[1]) for loc in locs(replies[host][0].body)}
                for host in HOSTS
            }
            assert all(n % 2 == 1 for n in ids["a.example"]), ids
            assert all(n % 2 == 0 for n in ids["b.example"]), ids
    # A host without a site: a 404 of the origin's, not another site's sitemap, not stored.
    for _ in range(2):
        other = cache.get("/sitemap.xml", "c.example")
        assert other.status == 404 and other.cache == "MISS"


def test_an_edit_is_purged_and_the_other_documents_stay_cached(cache: Cache) -> None:
    """a.example keeps the preset's s-maxage=300: only a purge shows an edit within seconds."""
    documents = [f"/sitemap-pages-{n}.xml" for n in range(1, 7)]
    for path in ["/sitemap.xml", *documents]:
        cache.get(path)  # stored, if they were not
    before = {path: cache.get(path) for path in ["/sitemap.xml", *documents]}
    assert all(reply.cache == "HIT" for reply in before.values()), before
    hits, misses = cache.stat("MAIN.cache_hit"), cache.stat("MAIN.cache_miss")

    # Row 3 (a.example's, on its page 1) edited now, as an application writes it.
    edited = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    lastmod = edited.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    written = time.monotonic()
    cache.write(3, edited)
    seen: list[Reply] = []

    def page_is_new() -> bool:
        seen.append(cache.get("/sitemap-pages-1.xml"))
        return lastmod in seen[-1].body.decode()

    def index_is_new() -> bool:
        listed = assert_valid_index(cache.get("/sitemap.xml").body)
        return dict(listed)["http://a.example/sitemap-pages-1.xml"] == lastmod

    bound = PROBE + R  # the guide's bound: the probe's interval plus R
    until(page_is_new, bound, step=0.01)
    page_delay = time.monotonic() - written
    until(index_is_new, bound)
    index_delay = time.monotonic() - written
    # Until the purge, the stored copy (s-maxage=300); then a fetch of the new one.
    assert all(reply.body == before["/sitemap-pages-1.xml"].body for reply in seen[:-1])
    assert seen[-1].cache == "MISS"
    assert page_delay <= bound and index_delay <= bound

    # The other pages never left the cache: the same copies, still answering.
    after = {path: cache.get(path) for path in documents[1:]}
    for path, reply in after.items():
        assert reply.cache == "HIT" and reply.body == before[path].body, path
        assert reply.hits > before[path].hits, path
    hits_after, misses_after = cache.stat("MAIN.cache_hit"), cache.stat("MAIN.cache_miss")
    print(
        f"\nVarnish: the edit served after {page_delay:.2f} s (its page), "
        f"{index_delay:.2f} s (the index); bound {bound:.0f} s. During it: "
        f"{hits_after - hits} hits, {misses_after - misses} misses "
        f"({len(seen)} requests of the page); the {len(after)} other pages still cached, "
        f"{min(reply.hits for reply in after.values())}+ hits each."
    )


def test_with_the_database_down_the_last_good_copies_are_served(cache: Cache) -> None:
    """b.example lives 2 s in the cache and 3 s more while revalidated: past both, its copies
    are served within stale-if-error while the origin fails, and no 503 is stored."""
    documents = ["/sitemap.xml", "/sitemap-pages-2.xml", "/sitemap-pages-5.xml"]
    good = {path: cache.get(path, "b.example") for path in documents}
    assert all(reply.status == 200 for reply in good.values())
    fetched = time.monotonic()
    away = cache.db.with_name("pages.away")
    cache.db.rename(away)  # each read opens the file: every read now fails
    try:
        time.sleep(max(0.0, fetched + SHORT + 0.5 - time.monotonic()))
        never_stored = "/sitemap-pages-6.xml"  # never requested for b.example before
        failed = cache.get(never_stored, "b.example")
        assert failed.status == 503 and b"<url" not in failed.body
        # The last good copies, while the replicas answer 503 and once the probe has found
        # them sick (no replica to ask): until then, and once more after.
        deadline = time.monotonic() + 30
        sick = False
        while not sick:
            sick = not cache.backends_healthy()
            for path, reply in good.items():
                stale = cache.get(path, "b.example")
                assert (stale.status, stale.cache) == (200, "STALE"), (path, stale.status)
                assert stale.body == reply.body, path
                assert int(stale.headers["age"]) >= SHORT, path
            assert time.monotonic() < deadline, "the probe never found the replicas failing"
            time.sleep(0.25)
        assert cache.get(never_stored, "b.example").status == 503
    finally:
        away.rename(cache.db)
    until(cache.backends_healthy, 10 * PROBE, step=0.1)
    # The database is back: the next request is a 200 from the origin, no 503 was kept.
    recovered = cache.get(never_stored, "b.example")
    assert (recovered.status, recovered.cache) == (200, "MISS")
    for path, reply in good.items():
        fresh = cache.get(path, "b.example")
        assert (fresh.status, fresh.cache, fresh.body) == (200, "MISS", reply.body), path


def test_past_s_maxage_the_copy_is_served_while_fetched_again(cache: Cache) -> None:
    """b.example's copies: fresh 2 s (s-maxage), then served 3 s more while a background
    fetch replaces them (stale-while-revalidate), as Varnish reads those two directives."""
    path = "/sitemap-pages-3.xml"  # requested by no other test
    first = cache.get(path, "b.example")
    fetched = time.monotonic()
    assert first.status == 200 and first.cache == "MISS"
    fresh = cache.get(path, "b.example")
    assert (fresh.cache, fresh.body) == ("HIT", first.body)
    time.sleep(max(0.0, fetched + 2.5 - time.monotonic()))  # past s-maxage, within 5 s
    stale = cache.get(path, "b.example")
    assert (stale.cache, stale.body) == ("HIT", first.body)
    assert int(stale.headers["age"]) >= 2
    # The background fetch it started replaced the copy.
    until(lambda: int(cache.get(path, "b.example").headers["age"]) < 2, 5.0, step=0.1)
