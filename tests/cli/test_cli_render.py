"""``sitemap-middleware render``: files byte-identical to what the application serves, written
all-or-nothing, for every form ``--app`` may name."""

from __future__ import annotations

import gzip
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sitemap_middleware.cli import main
from sitemap_middleware.cli.loader import find_sitemaps, is_factory

from .. import cli_site
from ..support import _schema, assert_valid_index, assert_valid_urlset, served

SITE_FILES = [
    "sitemap.xml",
    "sitemap-pages-1.xml",
    "sitemap-articles-1.xml",
    "sitemap-articles-2.xml",
    "sitemap-articles-3.xml",
]


def render(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["render", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", ["app", "create_app"])
def test_a_starlette_app_and_a_factory(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = render(capsys, "--app", f"tests.cli_site:{name}", "--out", str(tmp_path))
    assert (status, err) == (0, "")  # no progress: stderr is not a terminal
    expected = sorted([*SITE_FILES, *(f + ".gz" for f in SITE_FILES)])
    assert files(tmp_path) == expected
    for name_ in expected:
        assert (tmp_path / name_).read_bytes() == served(cli_site.app, "/" + name_), name_
    children = [loc for loc, _ in assert_valid_index((tmp_path / "sitemap.xml").read_bytes())]
    assert children == [f"https://example.com/{f}" for f in SITE_FILES[1:]]
    for child in SITE_FILES[1:]:
        plain = (tmp_path / child).read_bytes()
        assert assert_valid_urlset(plain, _schema("sitemap.xsd"))
        assert gzip.decompress((tmp_path / (child + ".gz")).read_bytes()) == plain
    assert out.startswith(f"wrote {len(expected)} files (")
    assert oct((tmp_path / "sitemap.xml").stat().st_mode & 0o777) != oct(0o600)


def test_a_sitemap_app_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, _ = render(capsys, "--app", "tests.cli_site:standalone", "--out", str(tmp_path))
    assert status == 0
    assert files(tmp_path) == ["sitemap.xml", "sitemap.xml.gz"]
    body = (tmp_path / "sitemap.xml").read_bytes()
    assert body == served(cli_site.standalone, "/sitemap.xml")
    assert len(assert_valid_urlset(body, _schema("sitemap.xsd"))) == 3
    assert (tmp_path / "sitemap.xml.gz").read_bytes() == served(
        cli_site.standalone, "/sitemap.xml.gz"
    )


def test_a_mounted_sitemap_app(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [m.path for m in find_sitemaps(cli_site.mounted)] == ["/maps/sitemap.xml"]
    status, _, _ = render(capsys, "--app", "tests.cli_site:mounted", "--out", str(tmp_path))
    assert status == 0
    assert files(tmp_path) == ["maps/sitemap.xml", "maps/sitemap.xml.gz"]
    body = (tmp_path / "maps" / "sitemap.xml").read_bytes()
    assert body == served(cli_site.mounted, "/maps/sitemap.xml")
    assert len(assert_valid_urlset(body, _schema("sitemap.xsd"))) == 250


def test_an_index_of_gzip_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pages = [f"sitemap-articles-{n}.xml.gz" for n in (1, 2, 3)]
    args = ["--app", "tests.cli_site:gz_index", "--quiet"]
    # --no-gz still writes the files the index lists: they are its children.
    assert render(capsys, *args, "--no-gz", "--out", str(tmp_path / "listed"))[0] == 0
    assert files(tmp_path / "listed") == sorted(["sitemap.xml", *pages])
    for name in files(tmp_path / "listed"):
        assert (tmp_path / "listed" / name).read_bytes() == served(cli_site.gz_index, "/" + name)
    assert render(capsys, *args, "--out", str(tmp_path / "all"))[0] == 0
    plain = [page.removesuffix(".gz") for page in pages]
    assert files(tmp_path / "all") == sorted(["sitemap.xml", "sitemap.xml.gz", *pages, *plain])


def test_paths_and_no_gz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--app", "tests.cli_site:app", "--out", str(tmp_path), "--no-gz", "--quiet"]
    status, out, _ = render(capsys, *args, "--path", "/sitemap.xml")
    assert (status, out) == (0, "")
    assert files(tmp_path) == sorted(SITE_FILES)
    status, _, err = render(capsys, *args, "--path", "/elsewhere.xml")
    assert status == 1
    assert "/elsewhere.xml: status 404" in err


def test_a_failing_source_leaves_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "sitemap.xml"
    old.write_bytes(b"the previous sitemap")
    for name, reason in [
        ("broken_midstream", "/sitemap-flaky-1.xml: the application raised SitemapAborted"),
        ("broken_before", "/sitemap.xml: status 503: Sitemap temporarily unavailable"),
    ]:
        status, out, err = render(capsys, "--app", f"tests.cli_site:{name}", "--out", str(tmp_path))
        assert status == 1
        assert reason in err and "nothing was written" in err
        assert out == ""
        # The root and the sound child rendered before the failure are not left behind.
        assert files(tmp_path) == ["sitemap.xml"]
        assert old.read_bytes() == b"the previous sitemap"
    fresh = tmp_path / "new"
    assert render(capsys, "--app", "tests.cli_site:broken_before", "--out", str(fresh))[0] == 1
    assert not fresh.exists()


def test_a_failing_startup_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = render(
        capsys, "--app", "tests.cli_site:failing_startup", "--out", str(tmp_path)
    )
    assert status == 2
    assert "startup failed" in err and "cannot reach the database" in err
    assert files(tmp_path) == []


def test_loading_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for spec, message in [
        ("tests.cli_site", "must be MODULE:ATTRIBUTE"),
        ("tests.no_such_module:app", "cannot import module 'tests.no_such_module'"),
        ("tests.cli_site:nothing", "has no attribute 'nothing'"),
        ("tests.cli_site:BASE", "names a str, not an ASGI or WSGI application"),
    ]:
        status, _, err = render(capsys, "--app", spec, "--out", str(tmp_path))
        assert status == 2, spec
        assert message in err
    assert files(tmp_path) == []


def test_factories_are_told_apart_from_apps() -> None:
    assert is_factory(cli_site.create_app) and is_factory(cli_site.example)
    assert not is_factory(cli_site.app) and not is_factory(cli_site.standalone)

    async def asgi(scope: object, receive: object, send: object) -> None: ...

    assert not is_factory(asgi)


def test_progress_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = pty.openpty()
    terminal = os.fdopen(follower, "w")
    monkeypatch.setattr(sys, "stderr", terminal)
    try:
        assert main(["render", "--app", "tests.cli_site:app", "--out", str(tmp_path)]) == 0
        terminal.flush()
        shown = os.read(leader, 65536).decode()
    finally:
        terminal.close()
        os.close(leader)
    assert "render: 10/10 documents" in shown
    assert "\r" in shown


def test_the_installed_command(tmp_path: Path) -> None:
    command = Path(sys.executable).parent / "sitemap-middleware"
    result = subprocess.run(
        [str(command), "render", "--app", "tests.cli_site:standalone", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert files(tmp_path) == ["sitemap.xml", "sitemap.xml.gz"]
    module = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert module.stdout.startswith("sitemap-middleware ")


@pytest.mark.parametrize("command", [[], ["check"], ["render"]])
def test_help_explains_with_examples(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "examples:" in text
    assert f"sitemap-middleware {command[0] if command else 'check'} " in text
