"""``sitemap-middleware check`` against a real uvicorn server serving hand-written broken sitemaps.

Each scenario of :mod:`tests.cli_broken` breaks one thing; the report must
name exactly that (error codes), with the offending value, and exit 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware.cli import main

from ..support import SCHEMAS, free_port
from ..uvicorn_process import serving, uvicorn

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("broken") / "uvicorn.log"
    with serving(uvicorn("tests.cli_broken:app", port), port, log, {}) as url:
        yield url


@pytest.fixture(autouse=True)
def no_schema_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # The built-in rules alone unless a test passes --schemas.
    monkeypatch.delenv("SITEMAP_SCHEMAS", raising=False)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    assert report["exit_status"] == status
    return status, report


def codes(document: dict[str, Any]) -> set[str]:
    return {finding["code"] for finding in document["findings"] if finding["severity"] == "error"}


def examples(document: dict[str, Any], code: str) -> list[str]:
    return [e for f in document["findings"] if f["code"] == code for e in f["examples"]]


def test_a_correct_server_passes(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    for path in ("/good/sitemap.xml", "/good/sitemap.xml.gz"):
        status, report = check(capsys, "--schemas", str(SCHEMAS), site + path)
        assert status == 0, report
        (document,) = report["documents"]
        assert document["findings"] == []
        assert (document["kind"], document["entries"], document["status"]) == ("urlset", 2, 200)
    assert document["codings"] == ["gzip file"]


BROKEN = [
    ("/scope/sitemap.xml", {"scope.loc"}, ["/other/page", "http://example.org/scope/x"]),
    ("/dup/sitemap.xml", {"duplicate.loc"}, ["/dup/a (2 times)"]),
    (
        "/lastmod/sitemap.xml",
        {"schema.lastmod", "lastmod.w3c", "lastmod.future"},
        ["2024-01-02T03:04+00:00", "2024-01-02T03:04:05 (", "2999-01-01"],
    ),
    (
        "/schema/sitemap.xml",
        {"schema.changefreq", "schema.priority", "schema.order"},
        ["'Daily'", "1.5", "loc, priority, lastmod"],
    ),
    ("/ctype/sitemap.xml", {"http.content-type"}, ["text/html; charset=utf-8"]),
    (
        "/no304/sitemap.xml",
        {"conditional.if-none-match", "conditional.if-modified-since"},
        ["got 200"],
    ),
    ("/ims-wins/sitemap.xml", {"conditional.precedence"}, ["got 304"]),
    ("/novary/sitemap.xml", {"http.vary"}, ["Accept-Encoding: identity"]),
    ("/coded-gz/sitemap.xml.gz", {"http.content-type", "http.content-encoding"}, ["gzip"]),
    ("/truncated/sitemap.xml", {"http.incomplete"}, ["incomplete chunked read"]),
    ("/head/sitemap.xml", {"conditional.head"}, ["etag: 'W/\"other\"'"]),
    # The application's Date beside uvicorn's: two lines on the wire, in every answer.
    (
        "/two-dates/sitemap.xml",
        {"http.repeated"},
        ["GET: date: ", "If-None-Match (304): date: ", "If-Modified-Since (304): date: "],
    ),
    ("/two-types/sitemap.xml", {"http.repeated"}, ["GET: content-type: application/xml"]),
]


@pytest.mark.parametrize(("path", "expected", "shown"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_broken_server_is_reported_exactly(
    site: str,
    capsys: pytest.CaptureFixture[str],
    path: str,
    expected: set[str],
    shown: list[str],
) -> None:
    status, report = check(capsys, site + path)
    assert status == 1
    (document,) = report["documents"]
    assert codes(document) == expected
    found = [e for f in document["findings"] for e in f["examples"]]
    for text in shown:
        assert any(text in example for example in found), (text, found)
    assert report["ok"] is False
    assert report["errors"] == sum(f["severity"] == "error" for f in document["findings"])


def test_no_last_modified_is_information_not_an_error(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = check(capsys, site + "/no-lastmod/sitemap.xml")
    assert status == 0, report
    (document,) = report["documents"]
    assert document["ok"] is True
    (finding,) = document["findings"]
    assert (finding["code"], finding["severity"]) == ("http.last-modified", "info")
    assert "If-None-Match" in finding["message"]
    main(["check", site + "/no-lastmod/sitemap.xml"])
    text = capsys.readouterr().out
    assert "ok   " in text and "info    http.last-modified" in text


def test_head_and_get_are_compared_on_representation_headers(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A cache in front answers X-Cache: HIT to one request and MISS to the next, with an Age.
    status, report = check(capsys, site + "/proxied/sitemap.xml")
    assert status == 0, report
    assert report["documents"][0]["findings"] == []


def test_the_xsds_confirm_the_built_in_rules(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, plain = check(capsys, site + "/schema/sitemap.xml")
    _, validated = check(capsys, "--schemas", str(SCHEMAS), site + "/schema/sitemap.xml")
    assert "xsd" not in codes(plain["documents"][0])
    document = validated["documents"][0]
    assert codes(document) == codes(plain["documents"][0]) | {"xsd"}
    xsd = examples(document, "xsd")
    assert any("'Daily'" in e for e in xsd) and any("'1.5'" in e for e in xsd)
    assert any("lastmod': This element is not expected" in e for e in xsd)


def test_an_index_and_its_children(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, site + "/index/sitemap.xml")
    assert status == 1
    assert report["children"] == {"listed": 3, "checked": 2}
    root, a, b = report["documents"]
    assert [d["url"] for d in (a, b)] == [site + "/index/a.xml", site + "/index/b.xml.gz"]
    # The child outside the index's folder is reported, and not fetched.
    assert codes(root) == {"scope.child"}
    assert examples(root, "scope.child") == [site + "/elsewhere/c.xml"]
    assert codes(a) == set()
    assert b["codings"] == ["gzip file"] and codes(b) == {"duplicate.across"}
    assert examples(b, "duplicate.across") == [f"{site}/index/shared (also in {site}/index/a.xml)"]


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_duplicates_in_and_across_documents_however_spelt(
    site: str, capsys: pytest.CaptureFixture[str], concurrency: str
) -> None:
    """A loc's spellings are one loc; a loc in two children is reported on the later one in
    the index's order, whichever answered first."""
    status, report = check(capsys, "--concurrency", concurrency, site + "/spelt/sitemap.xml")
    assert status == 1
    _, a, b, c = report["documents"]
    assert codes(a) == {"duplicate.loc"}
    assert examples(a, "duplicate.loc") == [
        f"{site}/spelt/a (2 times, also spelt {site}/spelt/%61)"
    ]
    assert codes(b) == {"duplicate.across"}
    assert [e.partition(" (")[2] for e in examples(b, "duplicate.across")] == [
        f"also in {site}/spelt/a.xml)"
    ]
    assert codes(c) == {"duplicate.across"}
    assert examples(c, "duplicate.across")[0].endswith(f"(also in {site}/spelt/b.xml)")


def test_an_index_listing_an_index(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, site + "/nested/sitemap.xml")
    assert status == 1
    root, inner = report["documents"]
    assert codes(root) == set() and codes(inner) == {"index.nested"}
    assert report["children"] == {"listed": 1, "checked": 1}  # the inner index is not followed


def test_readable_output(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", site + "/scope/sitemap.xml"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {site}/scope/sitemap.xml  (urlset, 3 URLs;" in out
    assert "error   scope.loc: loc on another host (example.org)" in out
    assert "http://example.org/scope/x" in out
    assert out.rstrip().endswith("(exit status 1)")
    assert main(["check", site + "/good/sitemap.xml"]) == 0
    assert "0 failed: 0 errors, 0 warnings (exit status 0)" in capsys.readouterr().out


def test_no_conditional_skips_the_probes(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, "--no-conditional", site + "/no304/sitemap.xml")
    assert status == 0 and codes(report["documents"][0]) == set()


def test_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, "--timeout", "5", f"http://127.0.0.1:{free_port()}/sitemap.xml")
    assert status == 2
    assert codes(report["documents"][0]) == {"fetch.network"}


def test_a_missing_page_is_a_failure(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, site + "/nothing/sitemap.xml")
    assert status == 1
    assert examples(report["documents"][0], "http.status") == ["404"]


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "ftp://example.com/sitemap.xml"]) == 2
    assert "must be an http(s) URL" in capsys.readouterr().err
    assert main(["check", "--schemas", str(tmp_path), "http://127.0.0.1:1/sitemap.xml"]) == 2
    assert "must hold sitemap.xsd" in capsys.readouterr().err
    assert main(["check", "--sample", "2", "--max-children", "2", "http://x.test/"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_middleware_with_every_extension_passes(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = check(capsys, "--schemas", str(SCHEMAS), site + "/ext/sitemap.xml")
    assert status == 0, report
    assert [d["url"] for d in report["documents"]] == [
        site + "/ext/sitemap.xml",
        site + "/ext/sitemap-tour-1.xml",
        site + "/ext/sitemap-news-1.xml",
    ]
    assert [d["findings"] for d in report["documents"]] == [[], [], []]
    assert [d["entries"] for d in report["documents"]] == [2, 3, 6]
    # Its human view is not a sitemap: never followed, and named as such when asked for.
    status, report = check(capsys, "--no-conditional", site + "/ext/sitemap.html")
    assert status == 1
    (document,) = report["documents"]
    assert codes(document) == {"document.html"}
    assert examples(document, "document.html") == [
        f"text/html; charset=utf-8; the sitemap beside it is {site}/ext/sitemap.xml"
    ]


EXTENSION_BROKEN = [
    (
        "/ext-bad/alternates.xml",
        {"alternates.self", "alternates.return"},
        ["/ext-bad/fr", "/ext-bad/de does not list", "/ext-bad/en does not list"],
    ),
    ("/ext-bad/images.xml", {"image.limit"}, ["1001 ("]),
    ("/ext-bad/news.xml", {"news.limit", "news.language"}, ["1,001", "'en-GB'"]),
    (
        "/ext-bad/video.xml",
        {"video.required"},
        ["missing description, content_loc or player_loc"],
    ),
    ("/ext-bad/order.xml", {"schema.order"}, ["loc, image, lastmod"]),
    ("/ext-bad/undeclared.xml", {"xml.namespace"}, ["Namespace prefix image on image"]),
    (
        "/ext-bad/namespace.xml",
        {"schema.extension-namespace"},
        ["sitemap-image/1.0, not http://www.google.com/schemas/sitemap-image/1.1"],
    ),
]


def test_each_broken_extension_is_reported_exactly(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for path, expected, shown in EXTENSION_BROKEN:
        status, report = check(capsys, "--no-conditional", site + path)
        assert status == 1, path
        (document,) = report["documents"]
        assert codes(document) == expected, (path, document["findings"])
        found = [e for f in document["findings"] for e in f["examples"]]
        for text in shown:
            assert any(text in example for example in found), (path, text, found)
    # The XSDs agree where they can tell (tests/cli/test_cli_extensions.py compares them rule by
    # rule; the return links and counts are Google's rules alone).
    path = "/ext-bad/video.xml"
    _, report = check(capsys, "--no-conditional", "--schemas", str(SCHEMAS), site + path)
    assert codes(report["documents"][0]) == {"video.required", "xsd"}
