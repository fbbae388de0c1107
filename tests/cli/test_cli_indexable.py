"""``check --audit-indexable`` against a site with planted faults (:mod:`tests.indexable_site`):
each found with its kind and URL, nothing on the clean site; in process (``--app``) and over
HTTP; Starlette, Flask, and Django (also through ``manage.py sitemap_check``:
``tests/contrib/django/test_django_commands.py``); the baseline."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware.cli import main

from ..indexable_site import FAULTS, SOURCES, flask_app, serve_wsgi
from ..support import free_port
from ..uvicorn_process import pythonpath, serving, uvicorn

IN_PROCESS = "http://site.test/"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--json", "--no-conditional", "--audit-delay", "0", *args])
    report = json.loads(capsys.readouterr().out)
    assert report["exit_status"] == status
    return status, report


def found(report: dict[str, Any], base: str) -> set[tuple[str, str, str]]:
    """The findings as (code, path, subject path)."""
    origin = base.rstrip("/")
    return {
        (f["code"], f["url"].removeprefix(origin), f["subject"].removeprefix(origin))
        for f in report["indexable"]["found"]
    }


def assert_faults_found(status: int, report: dict[str, Any], base: str) -> None:
    assert status == 3, report["indexable"]
    assert report["errors"] == 0  # the sitemaps themselves are in order
    assert found(report, base) == FAULTS
    indexable = report["indexable"]
    assert indexable["findings"] == indexable["new"] == len(FAULTS)
    assert [s["source"] for s in indexable["sources"]] == list(SOURCES)
    pages, en, de = indexable["sources"]
    assert (pages["urls"], pages["sampled"], en["sampled"], de["sampled"]) == (10, 10, 2, 1)
    kinds = {f["code"]: f for f in pages["findings"]}
    assert {code: f["count"] for code, f in kinds.items()} == {
        "indexable.robots": 1,
        "indexable.redirect": 1,
        "indexable.status": 1,
        "indexable.canonical": 1,
        "indexable.noindex": 2,
    }
    assert all(f["of"] == 10 for f in kinds.values())
    origin = base.rstrip("/")
    assert kinds["indexable.redirect"]["examples"] == [f"{origin}/moved: 301 to {origin}/ok/1"]
    assert kinds["indexable.status"]["examples"] == [f"{origin}/gone: 404"]
    assert kinds["indexable.robots"]["examples"] == [
        f"{origin}/private/report: disallowed for Googlebot"
    ]
    assert kinds["indexable.canonical"]["examples"][0].startswith(
        f'{origin}/canonical: canonical {origin}/ok/2 (<link rel="canonical"'
    )
    noindex = kinds["indexable.noindex"]["examples"]
    assert f'{origin}/meta-noindex: <meta name="robots" content="noindex, follow">' in noindex[0]
    assert "(noindex for every crawler)" in noindex[0]
    assert noindex[1] == (
        f"{origin}/header-noindex: X-Robots-Tag: googlebot: noindex (noindex for Googlebot)"
    )
    (hreflang,) = en["findings"]
    assert hreflang["code"] == "indexable.hreflang" and hreflang["count"] == 1
    assert de["findings"] == []
    # One robots.txt, every URL once, and one alternate: /de/hallo, the only one no sitemap
    # entry lists back (/de/ueber lists /en/about from the other source's sitemap).
    assert (indexable["requests"], indexable["pages"], indexable["alternates"]) == (15, 13, 1)
    (robots,) = indexable["robots_txt"]
    assert (robots["url"], robots["status"]) == (f"{origin}/robots.txt", 200)


def assert_clean(status: int, report: dict[str, Any]) -> None:
    assert status == 0, report["indexable"]["found"]
    assert report["indexable"]["found"] == [] and report["indexable"]["findings"] == 0
    # The pages in order and the three hreflang pages; /de/hallo, which lists /en/hello
    # back from its page only, requested as an alternate.
    assert (report["indexable"]["sampled"], report["indexable"]["alternates"]) == (7, 1)


@pytest.mark.parametrize("framework", ["starlette", "flask"])
def test_in_process_each_fault_and_nothing_else(
    framework: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = f"tests.indexable_site:{framework}"
    status, report = check(
        capsys, "--app", app, "--audit-indexable", "all", IN_PROCESS + "sitemap.xml"
    )
    assert_faults_found(status, report, IN_PROCESS)
    status, report = check(
        capsys, "--app", app + "_clean", "--audit-indexable", "all", IN_PROCESS + "sitemap.xml"
    )
    assert_clean(status, report)


def test_n_per_source_spread_over_each(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(
        capsys,
        "--app",
        "tests.indexable_site:starlette",
        "--audit-indexable",
        "2",
        IN_PROCESS + "sitemap.xml",
    )
    pages, en, de = report["indexable"]["sources"]
    # The first and last URL of each source (at most 2 each).
    assert [p["url"].removeprefix("http://site.test") for p in pages["pages"]] == [
        "/ok/1",
        "/private/report",
    ]
    assert (pages["sampled"], en["sampled"], de["sampled"]) == (2, 2, 1)
    assert report["indexable"]["per_source"] == 2
    assert found(report, IN_PROCESS) == {
        ("indexable.robots", "/private/report", ""),
        ("indexable.hreflang", "/en/hello", "/de/hallo"),
    }
    assert status == 3


def test_flask_over_http(capsys: pytest.CaptureFixture[str]) -> None:
    for clean in (False, True):
        with serve_wsgi(lambda base: flask_app(base, clean)) as base:  # noqa: B023
            status, report = check(capsys, "--audit-indexable", "all", base + "sitemap.xml")
        if clean:
            assert_clean(status, report)
        else:
            assert_faults_found(status, report, base)


def test_readable_output(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "check",
            "--no-conditional",
            "--audit-delay",
            "0",
            "--app",
            "tests.indexable_site:starlette",
            "--audit-indexable",
            "all",
            IN_PROCESS + "sitemap.xml",
        ]
    )
    text = capsys.readouterr().out
    assert status == 3
    assert "indexability audit: 3 sources, 13 URLs sampled (all per source), 15 requests " in text
    assert "  http://site.test/robots.txt: 200: rules read\n" in text
    assert "  /sitemap-pages (1 sitemap, 10 URLs, 10 requested): 6 findings\n" in text
    assert "    FAIL  indexable.redirect: listed URLs that redirect" in text
    assert "            http://site.test/moved: 301 to http://site.test/ok/1\n" in text
    assert "  /sitemap-de (1 sitemap, 1 URL, 1 requested): no findings\n" in text
    assert "  7 findings\n" in text
    assert "(exit status 3)" in text


def test_a_baseline_fails_only_on_new_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = ("--app", "tests.indexable_site:starlette", "--audit-indexable", "all")
    url = IN_PROCESS + "sitemap.xml"
    status, report = check(capsys, *app, url)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(report))
    # Every finding known: the check passes, and says so.
    status, again = check(capsys, *app, "--baseline", str(baseline), url)
    assert status == 0
    assert (again["indexable"]["findings"], again["indexable"]["new"]) == (7, 0)
    assert again["indexable"]["baseline"] == str(baseline)
    assert not any(f["new"] for f in again["indexable"]["found"])
    # One finding not in the baseline: it alone is new, and fails the check.
    report["indexable"]["found"] = [
        f for f in report["indexable"]["found"] if f["code"] != "indexable.hreflang"
    ]
    baseline.write_text(json.dumps(report))
    status, again = check(capsys, *app, "--baseline", str(baseline), url)
    assert status == 3
    assert [(f["code"], f["subject"]) for f in again["indexable"]["found"] if f["new"]] == [
        ("indexable.hreflang", "http://site.test/de/hallo")
    ]
    main(
        ["check", "--no-conditional", "--audit-delay", "0", *app, "--baseline", str(baseline), url]
    )
    text = capsys.readouterr().out
    assert "    known indexable.redirect:" in text and "known: http://site.test/moved" in text
    assert "    FAIL  indexable.hreflang:" in text
    assert f"  7 findings, 1 new (not in {baseline})\n" in text
    # The clean site's report as the baseline: every finding is new.
    _, clean = check(capsys, "--app", "tests.indexable_site:starlette_clean", *app[2:], url)
    baseline.write_text(json.dumps(clean))
    status, again = check(capsys, *app, "--baseline", str(baseline), url)
    assert (status, again["indexable"]["new"]) == (3, 7)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read"),
        ("{not json", "not JSON"),
        ('{"url": "http://site.test/sitemap.xml"}', "no indexability findings in it"),
        ('{"indexable": {"found": [{"code": 3}]}}', "not a finding"),
    ],
)
def test_a_baseline_that_is_none_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    baseline = tmp_path / "baseline.json"
    if content is not None:
        baseline.write_text(content)
    status = main(
        ["check", "--audit-indexable", "5", "--baseline", str(baseline), IN_PROCESS + "x.xml"]
    )
    assert status == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["--audit-indexable", "0"],
        ["--audit-indexable", "some"],
        ["--baseline", "baseline.json"],  # without the audit
    ],
)
def test_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *args, "http://127.0.0.1:9/sitemap.xml"]) == 2
    capsys.readouterr()


def test_the_lastmod_audit_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(
        capsys,
        "--app",
        "tests.indexable_site:flask_clean",
        "--audit-indexable",
        "1",
        "--audit-lastmod",
        "3",
        IN_PROCESS + "sitemap.xml",
    )
    assert status == 0
    assert report["audit"]["sampled"] == 3 and report["indexable"]["sampled"] == 3


# --- Over HTTP, against real servers in subprocesses ---------------------------------------


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """uvicorn serving the Starlette site and the Django project, faulty and clean."""
    folder = tmp_path_factory.mktemp("indexable")
    bases = {}
    with (
        _started(folder, bases, "starlette", False),
        _started(folder, bases, "starlette_clean", True),
        _started(folder, bases, "django", False),
        _started(folder, bases, "django_clean", True),
    ):
        yield bases


def _started(folder: Path, bases: dict[str, str], name: str, clean: bool) -> Any:
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    env = {
        "INDEXABLE_BASE": base,
        "INDEXABLE_CLEAN": "1" if clean else "",
        "PYTHONPATH": pythonpath(),
    }
    if name.startswith("django"):
        env["DJANGO_SETTINGS_MODULE"] = "tests.indexable_django"
        command = [*uvicorn("django.core.asgi:get_asgi_application", port), "--factory"]
    else:
        command = uvicorn(f"tests.indexable_site:{name}", port)
    bases[name] = base
    return serving(command, port, folder / f"{name}.log", env, "/robots.txt")


@pytest.mark.e2e
@pytest.mark.parametrize("framework", ["starlette", "django"])
def test_over_http_under_uvicorn(
    servers: dict[str, str], framework: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = servers[framework]
    status, report = check(capsys, "--audit-indexable", "all", base + "sitemap.xml")
    assert_faults_found(status, report, base)
    clean = servers[framework + "_clean"]
    status, report = check(capsys, "--audit-indexable", "all", clean + "sitemap.xml")
    assert_clean(status, report)


@pytest.mark.e2e
def test_manage_py_over_http(servers: dict[str, str], tmp_path: Path) -> None:
    import subprocess

    base = servers["django"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.indexable_django",
        "PYTHONPATH": pythonpath(),
    }
    command = [sys.executable, "-m", "django", "sitemap_check", "--json", "--no-conditional"]
    args = ["--audit-delay", "0", "--audit-indexable", "all", base + "sitemap.xml"]
    result = subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=120)
    report = json.loads(result.stdout)
    assert result.returncode == 3, result.stderr
    assert_faults_found(result.returncode, report, base)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(result.stdout)
    known = subprocess.run(
        [*command, "--baseline", str(baseline), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert known.returncode == 0, known.stdout + known.stderr
