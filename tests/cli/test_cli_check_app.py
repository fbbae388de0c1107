"""``check --app MODULE:ATTR URL``: the whole check against an application in-process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sitemap_middleware.cli import main


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    assert report["exit_status"] == status
    return status, report


@pytest.mark.parametrize("app", ["tests.cli_site:app", "tests.cli_wsgi_site:create_flask_app"])
def test_the_middleware_passes_every_check_in_process(
    app: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The conditional probes (304s, HEAD, Vary) included: every method goes to the app.
    status, report = check(capsys, "--app", app, "https://example.com/sitemap.xml")
    assert status == 0, report
    assert report["children"] == {"listed": 4, "checked": 4}
    assert all(d["ok"] and d["status"] == 200 for d in report["documents"])
    codes = {f["code"] for d in report["documents"] for f in d["findings"]}
    assert codes <= {"http.last-modified"}  # the info on the page without lastmods


def test_a_transfer_aborted_in_process_is_a_broken_transfer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, report = check(
        capsys, "--app", "tests.cli_site:broken_midstream", "https://example.com/sitemap.xml"
    )
    assert status == 1
    flaky = next(d for d in report["documents"] if "flaky" in d["url"])
    assert [f["code"] for f in flaky["findings"]] == ["http.incomplete"]


def test_an_application_that_cannot_start_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["check", "--app", "tests.cli_site:failing_startup", "https://example.com/sitemap.xml"]
    assert main(args) == 2
    assert "startup failed" in capsys.readouterr().err


def test_in_process_the_application_gets_a_servers_date_and_its_own_is_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No server: the check's transport adds the Date one writes when the application has none
    # (the middleware's documents pass above); a field the application writes twice is seen.
    status, report = check(
        capsys, "--app", "tests.cli_broken:app", "http://example.com/two-types/sitemap.xml"
    )
    assert status == 1
    (document,) = report["documents"]
    assert {f["code"] for f in document["findings"]} == {"http.repeated"}
    # The application's own Date is kept, not doubled: in-process it is the only one.
    status, report = check(
        capsys, "--app", "tests.cli_broken:app", "http://example.com/two-dates/sitemap.xml"
    )
    assert status == 0, report
