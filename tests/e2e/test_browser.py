"""The human view rendered by a real browser (Debian's headless Chromium) from the example
app under uvicorn: what a person sees is what crawlers get.

Skipped with a reason when Chromium is not installed; ``SITEMAP_REQUIRE_BROWSER=1`` (set by
CI) turns that skip into a failure. ``SITEMAP_SCREENSHOT_DIR`` keeps the screenshots.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import html as lxml_html

from ..support import _schema, assert_valid_urlset, free_port, locs
from ..uvicorn_process import serving

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        message = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("SITEMAP_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browser")
    port = free_port()
    env = {"EXAMPLE_DB": str(folder / "example.sqlite3"), "EXAMPLE_ROWS": "300", "PORT": str(port)}
    command = [sys.executable, "-m", "example_app"]
    with serving(command, port, folder / "server.log", env) as url:
        yield url


def render(chromium: str, url: str, tmp_path: Path, *extra: str) -> str:
    result = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, url],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return result.stdout.decode("utf-8")


def screenshot(chromium: str, url: str, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    render(chromium, url, tmp_path, f"--screenshot={target}")
    keep = os.environ.get("SITEMAP_SCREENSHOT_DIR")
    if keep:
        shutil.copy(target, Path(keep) / name)
    return target


def test_the_index_page_as_a_browser_shows_it(chromium: str, site: str, tmp_path: Path) -> None:
    dom = lxml_html.fromstring(render(chromium, site + "/sitemap.html", tmp_path, "--dump-dom"))
    assert dom.findtext(".//h1") == "Sitemap index"
    rows = dom.xpath("//tbody/tr")
    assert [row.xpath("string(td[2])") for row in rows] == [
        "pages, page 1",
        "articles, page 1",
    ]
    assert [row.xpath("string(td[3])") for row in rows] == ["4", "294"]
    assert dom.xpath("//script") == []
    shot = screenshot(chromium, site + "/sitemap.html", tmp_path, "sitemap-index.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_page_as_a_browser_shows_it(chromium: str, site: str, tmp_path: Path) -> None:
    page = site + "/sitemap-articles-1.html"
    dom = lxml_html.fromstring(render(chromium, page, tmp_path, "--dump-dom"))
    assert dom.findtext(".//title") == "Sitemap: articles, page 1 of 1"
    shown = [row.xpath("string(td[2])") for row in dom.xpath("//tbody/tr")]
    xml = httpx.get(site + "/sitemap-articles-1.xml").content
    assert shown == locs(assert_valid_urlset(xml, _schema("sitemap.xsd")))
    assert shown[0] == site + "/articles/caf%C3%A9-cr%C3%A8me"
    assert dom.xpath("//nav/a[@rel='up']/@href") == ["sitemap.html"] * 2  # above and below
    shot = screenshot(chromium, page, tmp_path, "sitemap-page.png")
    assert shot.stat().st_size > 10_000  # a rendered table, not a blank page
