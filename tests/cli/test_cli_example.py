"""Both commands against the example site (the middleware over SQLite) run by uvicorn:
``check`` finds nothing wrong, and ``render`` writes exactly the bytes the server sends."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitemap_middleware.cli import main

from ..support import SCHEMAS, _schema, assert_valid_index, assert_valid_urlset, free_port
from ..uvicorn_process import serving

pytestmark = pytest.mark.e2e
ROWS = 5000  # two article pages at the default page size (4,225 rows)
CHILDREN = ["sitemap-pages-1.xml", "sitemap-articles-1.xml", "sitemap-articles-2.xml"]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("example")
    port = free_port()
    env = {
        "EXAMPLE_DB": str(folder / "site.sqlite3"),
        "EXAMPLE_ROWS": str(ROWS),
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    command = [sys.executable, "-m", "example_app"]
    with serving(command, port, folder / "server.log", env, "/sitemap.xml") as url:
        yield url, folder / "site.sqlite3"


def run_check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_the_example_site_passes_every_check(
    example: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = example
    status, report = run_check(capsys, "--schemas", str(SCHEMAS), url + "/sitemap.xml")
    assert status == 0, json.dumps(report, indent=1)
    assert report["children"] == {"listed": 3, "checked": 3}
    assert [d["url"] for d in report["documents"]] == [url + "/sitemap.xml"] + [
        f"{url}/{child}" for child in CHILDREN
    ]
    assert all(d["findings"] == [] for d in report["documents"])
    assert [d["kind"] for d in report["documents"]] == ["sitemapindex"] + ["urlset"] * 3
    assert [d["codings"] for d in report["documents"]] == [["content-encoding gzip"]] * 4
    # Three static pages, then the published articles (every 50th is a draft).
    assert sum(d["entries"] for d in report["documents"][1:]) == 4 + ROWS - ROWS // 50
    # The gzip files beside them: the index's and a page's.
    for path in ("/sitemap.xml.gz", "/sitemap-articles-2.xml.gz"):
        status, report = run_check(capsys, "--max-children", "0", url + path)
        assert status == 0, json.dumps(report, indent=1)
        (document,) = report["documents"]
        assert document["codings"] == ["gzip file"] and document["findings"] == []


def test_bounding_the_children(
    example: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = example
    _, first = run_check(capsys, "--max-children", "1", "--no-conditional", url + "/sitemap.xml")
    assert first["children"] == {"listed": 3, "checked": 1}
    assert [d["url"] for d in first["documents"][1:]] == [f"{url}/{CHILDREN[0]}"]
    _, spread = run_check(capsys, "--sample", "2", "--no-conditional", url + "/sitemap.xml")
    assert [d["url"] for d in spread["documents"][1:]] == [
        f"{url}/{CHILDREN[0]}",
        f"{url}/{CHILDREN[2]}",
    ]


def test_the_byte_limit(example: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = example
    status, report = run_check(
        capsys, "--max-bytes", "200000", "--no-conditional", url + "/sitemap-articles-1.xml"
    )
    assert status == 1
    (document,) = report["documents"]
    assert {f["code"] for f in document["findings"]} == {"limit.bytes"}
    assert document["bytes"] > 200_000


def test_render_writes_what_the_server_sends(
    example: tuple[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, database = example
    monkeypatch.setenv("CLI_EXAMPLE_DB", str(database))
    monkeypatch.setenv("CLI_EXAMPLE_BASE", url + "/")
    out = tmp_path / "public"
    assert main(["render", "--app", "tests.cli_site:example", "--out", str(out)]) == 0
    documents = ["sitemap.xml", *CHILDREN]
    expected = sorted([*documents, *(d + ".gz" for d in documents)])
    assert sorted(p.name for p in out.iterdir()) == expected
    for name in expected:
        served = httpx.get(f"{url}/{name}", headers={"accept-encoding": "identity"})
        assert served.status_code == 200
        assert "content-encoding" not in served.headers
        assert (out / name).read_bytes() == served.content, name
    for name in documents:
        plain = (out / name).read_bytes()
        assert gzip.decompress((out / (name + ".gz")).read_bytes()) == plain
        if name == "sitemap.xml":
            locs = [loc for loc, _ in assert_valid_index(plain)]
            assert locs == [f"{url}/{child}" for child in CHILDREN]
        else:
            assert assert_valid_urlset(plain, _schema("sitemap.xsd"))
    size = sum((out / name).stat().st_size for name in expected)
    assert capsys.readouterr().out == f"wrote {len(expected)} files ({size:,} bytes) to {out}\n"
