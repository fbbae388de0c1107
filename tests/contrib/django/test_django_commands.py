"""Django's side of the middleware, in projects of their own (subprocesses): the system checks
name the setting, ``sitemap_render`` and ``sitemap_check`` take the CLI's options and give its
exit statuses, and a project wrapping ``wsgi.py`` instead of listing the middleware renders the
same bytes. The project: :mod:`tests.django_commands`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lxml import etree

from sitemap_middleware import Limits, SitemapWSGIApp

from ... import django_commands
from ...adapters import wsgi_reply
from ...support import assert_valid_index, assert_valid_urlset, free_port, served
from ...uvicorn_process import pythonpath

GZIP_FIRST = (
    "django.middleware.gzip.GZipMiddleware,sitemap_middleware.contrib.django.SitemapMiddleware"
)


def manage(
    *args: str, setting: str = "{}", middleware: str | None = None, sites: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.django_commands",
        "PYTHONPATH": pythonpath(),
        "SITEMAP_TEST_SETTING": setting,
    }
    if sites:  # SITEMAP_MIDDLEWARE = {"sites": django_commands.site_for}
        env["SITEMAP_TEST_SITES"] = "1"
    if middleware is not None:
        env["SITEMAP_TEST_MIDDLEWARE"] = middleware
    command = [sys.executable, "-m", "django", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_check_names_the_setting_and_the_fix() -> None:
    assert manage("check").returncode == 0
    for setting, named in (
        ("{'base_url': 'example.com'}", "SITEMAP_MIDDLEWARE['base_url']"),
        ("{'changefreq': 'often'}", "SITEMAP_MIDDLEWARE['changefreq']"),
        ("{'sources': 'tests.nowhere.sources'}", "SITEMAP_MIDDLEWARE['sources']: cannot import"),
        ("{'sources': 42}", "SITEMAP_MIDDLEWARE['sources']"),
    ):
        result = manage("check", setting=setting)
        assert result.returncode == 1, (setting, result.stderr)
        assert "sitemap_middleware.E001" in result.stderr and named in result.stderr, result.stderr


def test_check_warns_of_middleware_that_rewrite_the_answers() -> None:
    result = manage("check", middleware=GZIP_FIRST)
    assert result.returncode == 0
    assert "sitemap_middleware.W001" in result.stderr and "GZipMiddleware" in result.stderr


def test_render_writes_what_the_adapters_serve(
    tmp_path: Path, sitemap_schema: etree.XMLSchema
) -> None:
    for middleware in (None, ""):  # listed in MIDDLEWARE, or wrapping the project (wsgi.py)
        out = tmp_path / f"out-{middleware}"
        result = manage("sitemap_render", "--out", str(out), "--quiet", middleware=middleware)
        assert result.returncode == 0, result.stderr
        names = sorted(p.name for p in out.iterdir())
        assert names == sorted(
            f"{name}{ext}"
            for name in ("sitemap", "sitemap-pages-1", "sitemap-pages-2", "sitemap-pages-3")
            for ext in (".xml", ".xml.gz")
        )
        # What another adapter serves for the same sources and settings.
        app = SitemapWSGIApp(
            sources=django_commands.sources(),
            base_url="https://example.com/",
            limits=Limits(max_urls=50),
        )
        try:
            for name in names:
                assert (out / name).read_bytes() == served(app, "/" + name), name
        finally:
            app.close()
        assert_valid_index((out / "sitemap.xml").read_bytes())
        assert_valid_urlset((out / "sitemap-pages-3.xml").read_bytes(), sitemap_schema)


def test_render_exit_statuses(tmp_path: Path) -> None:
    out = tmp_path / "out"
    usage = manage("sitemap_render", "--out", str(out), "--html")  # no human view configured
    assert usage.returncode == 2 and "--html" in usage.stderr
    failed = manage(
        "sitemap_render",
        "--out",
        str(out),
        "--quiet",
        setting="{'sources': 'tests.django_commands.broken'}",
    )
    assert failed.returncode == 1 and "nothing was written" in failed.stderr
    assert not out.exists() or not any(out.iterdir())
    assert manage("sitemap_render").returncode == 2  # --out is required


def test_sitemap_check_in_process_and_over_the_network() -> None:
    passed = manage("sitemap_check", "--json")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert '"https://example.com/sitemap-pages-3.xml"' in passed.stdout
    too_large = manage("sitemap_check", "--max-bytes", "1000")
    assert too_large.returncode == 1, too_large.stdout
    unreachable = manage("sitemap_check", f"http://127.0.0.1:{free_port()}/sitemap.xml")
    assert unreachable.returncode == 2, unreachable.stdout


def test_render_and_check_one_host_of_the_sites(tmp_path: Path) -> None:
    for middleware in (None, ""):  # listed in MIDDLEWARE, or wrapping the project (wsgi.py)
        for host in django_commands.SITE_HOSTS:
            out = tmp_path / f"{host}-{middleware}"
            rendered = manage(
                "sitemap_render",
                "--out",
                str(out),
                "--quiet",
                "--host",
                host,
                sites=True,
                middleware=middleware,
            )
            assert rendered.returncode == 0, rendered.stderr
            # What another adapter serves that host for the same site.
            app = SitemapWSGIApp(
                sites={host: django_commands.site_for(host)}, limits=Limits(max_urls=50)
            )
            try:
                names = sorted(p.name for p in out.iterdir())
                assert len(names) == 8, names  # the index and three pages, .xml and .xml.gz
                for name in names:
                    expected = wsgi_reply(
                        app, "GET", f"/{name}".encode(), [(b"host", host.encode())]
                    )
                    assert (out / name).read_bytes() == expected.body, name
            finally:
                app.close()
            page = (out / "sitemap-pages-1.xml").read_text()
            assert f"<loc>https://{host}/{host.split('.')[0]}/0</loc>" in page

            checked = manage(
                "sitemap_check", "--json", "--host", host, sites=True, middleware=middleware
            )
            assert checked.returncode == 0, checked.stdout + checked.stderr
            report = json.loads(checked.stdout)
            assert report["url"] == f"https://{host}/sitemap.xml"
            assert [d["url"] for d in report["documents"]] == [f"https://{host}/sitemap.xml"] + [
                f"https://{host}/sitemap-pages-{n}.xml" for n in (1, 2, 3)
            ]
            assert all(d["ok"] for d in report["documents"]), report


def test_the_sites_commands_need_a_host_with_a_site(tmp_path: Path) -> None:
    unnamed = manage("sitemap_check", sites=True)
    assert unnamed.returncode == 2 and "--host" in unnamed.stderr, unnamed.stderr
    unknown = manage("sitemap_check", "--host", "three.example", sites=True)
    assert unknown.returncode == 2 and "no site for 'three.example'" in unknown.stderr
    out = tmp_path / "out"
    unrendered = manage("sitemap_render", "--out", str(out), "--host", "three.example", sites=True)
    assert unrendered.returncode == 2 and "no site for 'three.example'" in unrendered.stderr
    assert not out.exists() or not any(out.iterdir())


def test_sitemap_check_audits_indexability_in_process() -> None:
    """``--audit-indexable`` of the project itself (tests.indexable_django): each planted fault
    found, through Django's views and the middleware's robots.txt; nothing on the clean one."""
    from ...indexable_site import FAULTS

    for clean in ("", "1"):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.indexable_django",
            "PYTHONPATH": pythonpath(),
            "INDEXABLE_CLEAN": clean,
        }
        command = [sys.executable, "-m", "django", "sitemap_check", "--json"]
        command += ["--audit-delay", "0", "--audit-indexable", "all"]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        report = json.loads(result.stdout)
        found = {
            (f["code"], f["url"].removeprefix("http://site.test"), f["subject"])
            for f in report["indexable"]["found"]
        }
        if clean:
            assert (result.returncode, found) == (0, set()), result.stderr
        else:
            assert result.returncode == 3, result.stderr
            expected = {
                (code, path, subject and f"http://site.test{subject}")
                for code, path, subject in FAULTS
            }
            assert found == expected
            assert report["errors"] == 0
