"""``python -m example_app.django_app`` beside ``python -m example_app`` on one database, both
real servers on 127.0.0.1: the same sitemap bytes and validators, document by document (the
article sources name their query with one ``query_id``: the QuerySet's SQL is other text than
the SQLAlchemy select's), each variant answering the other's ETag with a 304; and the same
pages."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import etree

from ..support import assert_valid_index, assert_valid_urlset, free_port
from ..uvicorn_process import serving

pytestmark = pytest.mark.e2e
DOCUMENTS = (
    "/sitemap.xml",
    "/sitemap-pages-1.xml",
    "/sitemap-articles-1.xml",
    "/sitemap-articles-1.xml.gz",
    "/sitemap.html",
    "/sitemap-articles-1.html",
)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("example")
    ports = {"starlette": free_port(), "django": free_port()}
    common = {"EXAMPLE_DB": str(folder / "example.sqlite3"), "EXAMPLE_ROWS": "120"}
    env = {name: {**common, "PORT": str(port)} for name, port in ports.items()}
    # One base URL for both: the documents name the same public site.
    for values in env.values():
        values["BASE_URL"] = "https://example.com/"
    starlette = [sys.executable, "-m", "example_app"]
    django = [sys.executable, "-m", "example_app.django_app"]
    with (
        serving(starlette, ports["starlette"], folder / "starlette.log", env["starlette"]) as one,
        serving(django, ports["django"], folder / "django.log", env["django"]) as other,
    ):
        yield {"starlette": one, "django": other}


def test_the_same_documents_and_validators(
    servers: dict[str, str], sitemap_schema: etree.XMLSchema
) -> None:
    for path in DOCUMENTS:
        for encoding in ("identity", "gzip"):
            headers = {"accept-encoding": encoding}
            a = httpx.get(servers["starlette"] + path, headers=headers)
            b = httpx.get(servers["django"] + path, headers=headers)
            assert a.status_code == b.status_code == 200, path
            assert a.content == b.content, path  # decoded by httpx: and the raw bytes below
            for name in ("etag", "last-modified", "content-type", "content-encoding", "vary"):
                assert a.headers.get(name) == b.headers.get(name), (path, encoding, name)
            for server, etag in (
                (servers["starlette"], b.headers["etag"]),
                (servers["django"], a.headers["etag"]),
            ):
                cached = httpx.get(server + path, headers={**headers, "if-none-match": etag})
                assert cached.status_code == 304 and cached.content == b"", path
            again = httpx.get(servers["django"] + path, headers=headers)
            assert again.headers["etag"] == b.headers["etag"], path
    index = httpx.get(servers["django"] + "/sitemap.xml").content
    assert_valid_index(index)
    articles = httpx.get(servers["django"] + "/sitemap-articles-1.xml").content
    urls = assert_valid_urlset(articles, sitemap_schema)
    assert len(urls) == 120 - 2  # every 50th article is a draft


def test_the_same_pages(servers: dict[str, str]) -> None:
    for path in ("/", "/about", "/articles", "/articles/caf%C3%A9-cr%C3%A8me", "/articles/a%26b"):
        a = httpx.get(servers["starlette"] + path)
        b = httpx.get(servers["django"] + path)
        assert a.status_code == b.status_code == 200, path
        assert a.text == b.text, path
    assert httpx.get(servers["django"] + "/articles/article-50").status_code == 404  # a draft
    robots = httpx.get(servers["django"] + "/robots.txt")
    assert "Sitemap: https://example.com/sitemap.xml" in robots.text


def test_a_bad_base_url_stops_it_at_start(tmp_path: Path) -> None:
    import subprocess

    env = {"EXAMPLE_DB": str(tmp_path / "x.sqlite3"), "EXAMPLE_ROWS": "3", "BASE_URL": "nope"}
    result = subprocess.run(
        [sys.executable, "-m", "example_app.django_app"],
        env={**__import__("os").environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "SITEMAP_MIDDLEWARE['base_url']" in result.stderr
