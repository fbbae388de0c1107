"""``check --audit-lastmod N`` against a real site on 127.0.0.1 whose lastmods and pages are
scripted (:mod:`tests.audit_site`), over HTTP and in-process (``--app``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_middleware.cli import main

from ..audit_site import ScriptedSite, serve

CHILDREN = ("stamp", "future", "older", "missing", "nohead", "status", "good")
PAGES = 84


@pytest.fixture(scope="module")
def site() -> Iterator[ScriptedSite]:
    scripted = ScriptedSite()
    with serve(scripted):
        yield scripted


@pytest.fixture(autouse=True)
def fresh(request: pytest.FixtureRequest) -> None:
    if "site" in request.fixturenames:
        request.getfixturevalue("site").reset()


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["check", "--json", "--no-conditional", "--audit-delay", "0", *args])
    report = json.loads(capsys.readouterr().out)
    assert report["exit_status"] == status
    return status, report


def audits(report: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Child name -> audit code -> finding."""
    found = {}
    for document in report["documents"]:
        if "audit" in document:
            name = document["url"].rsplit("/sitemap-", 1)[1].removesuffix(".xml")
            found[name] = {f["code"]: f for f in document["audit"]["findings"]}
    return found


def verdicts(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {
        name: {code: f["verdict"] for code, f in findings.items() if f["verdict"] != "pass"}
        for name, findings in audits(report).items()
    }


EXPECTED = {
    "stamp": {"audit.stamp": "fail"},
    "future": {"audit.future": "fail"},
    "older": {"audit.older": "fail"},
    "missing": {"audit.no-last-modified": "warn", "audit.last-modified-now": "warn"},
    "nohead": {},
    "status": {"audit.status": "fail"},
    "good": {},
}


def sampled(site: ScriptedSite) -> dict[str, set[int]]:
    """Child -> the page numbers the server was asked for."""
    pages: dict[str, set[int]] = {name: set() for name in CHILDREN}
    for _, path in site.requests:
        _, _, child, number = path.split("/")
        pages[child].add(int(number))
    return pages


def test_each_finding_on_its_sitemap(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = check(
        capsys, "--audit-lastmod", "200", "--audit-concurrency", "4", site.origin + "/sitemap.xml"
    )
    assert status == 1
    assert verdicts(report) == EXPECTED
    found = audits(report)
    stamp = found["stamp"]["audit.stamp"]
    assert (stamp["count"], stamp["of"], stamp["share"]) == (20, 20, 1.0)
    assert stamp["examples"][0].endswith("on 20 of 20")
    future = found["future"]["audit.future"]
    assert (future["count"], future["of"]) == (3, 12)
    assert all(f"/p/future/{i})" in e for i, e in zip((1, 5, 9), future["examples"], strict=True))
    older = found["older"]["audit.older"]
    assert (older["count"], older["of"]) == (8, 12)
    assert older["examples"][0].startswith(site.loc("older", 0) + ": lastmod ")
    missing = found["missing"]
    assert (
        missing["audit.no-last-modified"]["count"],
        missing["audit.no-last-modified"]["of"],
    ) == (4, 10)
    assert missing["audit.last-modified-now"]["count"] == 3
    assert (missing["audit.older"]["verdict"], missing["audit.older"]["of"]) == ("pass", 3)
    status_examples = found["status"]["audit.status"]["examples"]
    # (GET once the host refused HEAD: the sitemaps before "status" are requested first.)
    assert [e.rsplit(" ", 1) for e in status_examples] == [
        [f"{site.loc('status', 3)}: GET", "404"],
        [f"{site.loc('status', 6)}: GET", "301"],
    ]
    assert found["good"]["audit.older"] == {**found["good"]["audit.older"], "count": 0, "of": 10}
    # HEAD everywhere, GET where HEAD was refused, and every page once (N is more than them).
    summary = report["audit"]
    assert summary["sampled"] == PAGES
    assert summary["requests"] == site.page_requests() == PAGES + summary["head_refused"]
    assert 1 <= summary["head_refused"] <= 4  # the HEADs in flight when the first 405 came
    # Every page is requested with GET once, and HEAD is no longer tried once the host has
    # refused it (only the HEADs already in flight are refused too).
    heads = [p for (m, p) in site.requests if m == "HEAD"]
    gets = {p: n for (m, p), n in site.requests.items() if m == "GET"}
    assert sum(1 for p in heads if "/nohead/" in p) == summary["head_refused"]
    assert {p.split("/")[2] for p in heads if "/nohead/" not in p} <= {
        "stamp",
        "future",
        "older",
        "missing",
    }
    assert (
        all(n == 1 for n in gets.values())
        and len(gets) + len(heads) - summary["head_refused"] == PAGES
    )


def test_the_budget_is_never_exceeded(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    # 14 pages over 7 sitemaps: the first and last of each, one at a time in the index's
    # order; the GET after the refused HEAD takes the last page's request.
    _, report = check(
        capsys, "--audit-lastmod", "14", "--audit-concurrency", "1", site.origin + "/sitemap.xml"
    )
    assert site.page_requests() == report["audit"]["requests"] == 14
    assert report["audit"]["skipped"] == report["audit"]["head_refused"] == 1
    last = {name: len(pages) - 1 for name, pages in site.children.items()}
    expected = {name: {0, last[name]} for name in CHILDREN}
    expected["good"] = {0}
    assert sampled(site) == expected
    good = next(d for d in report["documents"] if d["url"].endswith("-good.xml"))["audit"]
    assert (good["pages_sampled"], good["pages_requested"]) == (2, 1)


def chosen(report: dict[str, Any]) -> dict[str, list[str]]:
    """Child -> the locs the audit sampled from it (requested or skipped)."""
    return {
        document["url"].rsplit("/sitemap-", 1)[1].removesuffix(".xml"): [
            page["loc"] for page in document["audit"]["pages"]
        ]
        for document in report["documents"]
        if "audit" in document
    }


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pages=st.integers(1, 100), concurrency=st.integers(1, 4), seed=st.none() | st.integers(0, 9))
def test_the_sample_is_spread_bounded_and_deterministic(
    site: ScriptedSite,
    capsys: pytest.CaptureFixture[str],
    pages: int,
    concurrency: int,
    seed: int | None,
) -> None:
    seeded = () if seed is None else ("--seed", str(seed))
    samples = []
    for run_concurrency in (concurrency, 1):
        site.reset()
        args = ("--audit-lastmod", str(pages), "--audit-concurrency", str(run_concurrency), *seeded)
        _, report = check(capsys, *args, site.origin + "/sitemap.xml")
        summary = report["audit"]
        # Never more than N page requests, nor more than --audit-concurrency at once.
        assert site.page_requests() == summary["requests"] <= pages
        assert site.peak <= summary["peak_concurrency"] <= run_concurrency
        sample = chosen(report)
        locs = [loc for child in sample.values() for loc in child]
        assert len(locs) == len(set(locs)) == summary["sampled"] == min(pages, PAGES)
        # Every page answered was requested; a skipped one at most with a refused HEAD.
        requested = {site.origin + path for _, path in site.requests}
        pages_json = [p for d in report["documents"] if "audit" in d for p in d["audit"]["pages"]]
        answered = {p["loc"] for p in pages_json if not p["skipped"]}
        assert answered <= requested <= set(locs)
        assert len(answered) == summary["sampled"] - summary["skipped"]
        samples.append(sample)
    first, again = samples
    assert first == again  # the same pages, whatever the concurrency
    sizes = {name: len(site.children[name]) for name in CHILDREN}
    counts = {name: len(first[name]) for name in CHILDREN}
    assert all(set(first[n]) <= {site.loc(n, i) for i in range(sizes[n])} for n in CHILDREN)
    # Shared as evenly as the sizes allow: a sitemap with pages left has at most one less
    # than any other.
    for name in CHILDREN:
        if counts[name] < sizes[name]:
            assert counts[name] >= max(counts.values()) - 1
    if seed is None:
        for name in CHILDREN:  # spread evenly: both ends of each sitemap from two pages on
            if counts[name] >= 2:
                assert {site.loc(name, 0), site.loc(name, sizes[name] - 1)} <= set(first[name])


def test_concurrency_is_bounded_and_used(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    site.page_seconds = 0.03
    try:
        for concurrency in (1, 3):
            site.reset()
            check(
                capsys,
                "--audit-lastmod",
                "24",
                "--audit-concurrency",
                str(concurrency),
                site.origin + "/sitemap.xml",
            )
            assert site.peak <= concurrency
        assert site.peak >= 2  # three at once do overlap on a server that takes its time
    finally:
        site.page_seconds = 0.0


def test_each_connection_pauses_between_requests(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    main(
        [
            "check",
            "--json",
            "--no-conditional",
            "--audit-lastmod",
            "5",
            "--audit-concurrency",
            "1",
            "--audit-delay",
            "0.1",
            site.origin + "/sitemap.xml",
        ]
    )
    capsys.readouterr()
    gaps = [b - a for a, b in zip(site.starts, site.starts[1:], strict=False)]
    assert len(gaps) == 4 and min(gaps) >= 0.095


def test_the_user_agent_option(site: ScriptedSite, capsys: pytest.CaptureFixture[str]) -> None:
    check(
        capsys,
        "--audit-lastmod",
        "3",
        "--user-agent",
        "Mozilla/5.0 (compatible; TestBot/1.0)",
        site.origin + "/sitemap.xml",
    )
    assert site.agents == {"Mozilla/5.0 (compatible; TestBot/1.0)"}
    check(capsys, "--audit-lastmod", "3", site.origin + "/sitemap.xml")
    assert site.agents == {"Mozilla/5.0 (compatible; TestBot/1.0)", "sitemap-middleware-check/1"}


def test_readable_output(site: ScriptedSite, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "check",
            "--no-conditional",
            "--audit-lastmod",
            "200",
            "--audit-delay",
            "0",
            site.origin + "/sitemap.xml",
        ]
    )
    text = capsys.readouterr().out
    assert status == 1
    stamp = text[text.index("/sitemap-stamp.xml") : text.index("/sitemap-future.xml")]
    assert stamp.startswith("/sitemap-stamp.xml  (urlset, 20 URLs;")
    assert "lastmod audit: 20 of 20 URLs with a lastmod; 20 of 20 sampled pages requested" in stamp
    assert "FAIL audit.stamp: 100% of the lastmods are one instant" in stamp
    assert "(20 of 20)\n" in stamp and "on 20 of 20\n" in stamp
    passed = "pass audit.future, audit.status, audit.unreachable, audit.no-last-modified, "
    assert passed + "audit.last-modified-now, audit.older\n" in stamp
    assert "FAIL audit.status: listed pages that do not answer 2xx" in text
    assert f"{site.loc('status', 3)}: GET 404" in text
    assert "WARN audit.no-last-modified" in text and "WARN audit.last-modified-now" in text
    assert "lastmod audit: 84 of 200 pages sampled, " in text
    assert "(--audit-concurrency 2, --audit-delay 0)" in text
    assert "FAIL http://127.0.0.1:" in text  # the failing sitemaps are marked as failed


def test_in_process_gives_the_same_verdicts(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    from .. import audit_site

    audit_site.app.reset()
    status, report = check(
        capsys,
        "--app",
        "tests.audit_site:app",
        "--audit-lastmod",
        "200",
        "http://site.test/sitemap.xml",
    )
    assert status == 1
    assert verdicts(report) == EXPECTED
    assert (
        report["audit"]["requests"]
        == audit_site.app.page_requests()
        == PAGES + report["audit"]["head_refused"]
    )
    assert site.page_requests() == 0  # nothing went over the network


def test_the_middleware_through_asgi_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(
        capsys,
        "--app",
        "tests.audit_site:middleware_app",
        "--audit-lastmod",
        "20",
        "https://example.com/sitemap.xml",
    )
    assert status == 1
    first, second = (d for d in report["documents"] if "audit" in d)
    assert [f["verdict"] for f in first["audit"]["findings"]] == ["pass"] * 7
    older = {f["code"]: f for f in second["audit"]["findings"]}["audit.older"]
    assert (older["verdict"], older["count"], older["of"]) == ("fail", 10, 10)
    assert all(d["findings"] == [] or d["ok"] for d in report["documents"] if d is not second)
    assert second["findings"] == [] and not second["ok"]


def test_without_the_option_nothing_is_audited(
    site: ScriptedSite, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = check(capsys, site.origin + "/sitemap-good.xml")
    assert "audit" not in report and "audit" not in report["documents"][0]
    assert site.page_requests() == 0


def test_a_urlset_alone_is_audited(site: ScriptedSite, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = check(capsys, "--audit-lastmod", "4", site.origin + "/sitemap-older.xml")
    assert status == 1 and site.page_requests() == 4
    assert sampled(site)["older"] == {0, 4, 7, 11}
    (document,) = report["documents"]
    assert {f["code"]: f["verdict"] for f in document["audit"]["findings"]}["audit.older"] == "fail"


@pytest.mark.parametrize(
    "args",
    [
        ["--audit-lastmod", "0"],
        ["--audit-lastmod", "5", "--audit-delay", "-1"],
        ["--audit-lastmod", "5", "--audit-concurrency", "0"],
        ["--app", "tests.no_such_module:app"],
    ],
)
def test_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *args, "http://127.0.0.1:9/sitemap.xml"]) == 2
    capsys.readouterr()
