"""The pure core: settings, validators and the response plan, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sitemap_middleware import ConfigurationError, IterableSource, KeyRange, Limits, Settings
from sitemap_middleware.core import responses
from sitemap_middleware.core.exchange import HeadPlan, IndexPlan, Plan, UrlsetPlan
from sitemap_middleware.core.routing import PageTarget, RootTarget
from sitemap_middleware.core.sitemap import Request, Response, Sitemap, build_sources
from sitemap_middleware.core.validators import Summary

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def sitemap(**settings: object) -> Sitemap:
    options: dict[str, object] = {"base_url": "https://example.com/"}
    options.update(settings)
    return Sitemap(["/a", "/b"], Settings(**options))  # type: ignore[arg-type]


def test_source_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="sources"):
        build_sources({"a": IterableSource(["/x"], name="b")})
    with pytest.raises(ConfigurationError, match="unique"):
        build_sources([IterableSource(["/x"], name="a"), IterableSource(["/y"], name="a")])
    with pytest.raises(ValueError, match="source name"):
        IterableSource(["/x"], name="Bad Name")
    with pytest.raises(TypeError, match="read only once"):
        IterableSource(iter(["/x"]))
    with pytest.raises(ConfigurationError, match="read only once"):
        build_sources(x for x in ["/x"])


def summary(
    newest: datetime | None = NOW - timedelta(days=1), count: int = 2, token: str = "t"
) -> Summary:
    return Summary(newest, count, token)


def plan(s: Sitemap, path: str, request: Request, *summaries: Summary) -> Response | Plan:
    target = s.routes.match(path)
    assert isinstance(target, RootTarget | PageTarget)
    parts = s.parts(target)
    assert parts is not None
    return s.planner.respond(request, target, parts, summaries, NOW, s.hosts.default)


def head_of(outcome: Response | Plan) -> Response:
    """The status line and header fields the outcome sends (a plan's: before its body)."""
    return outcome if isinstance(outcome, Response) else outcome.head.response()


def etag(s: Sitemap, *summaries: Summary, path: str = "/sitemap.xml", **headers: str) -> str:
    request = Request("HEAD", {k.replace("_", "-"): [v] for k, v in headers.items()})
    return dict(head_of(plan(s, path, request, *summaries)).headers)["etag"]


def test_validators_come_from_data_and_settings_only() -> None:
    first = etag(sitemap(), summary())
    assert etag(sitemap(), summary()) == first  # another process, another replica
    assert first.startswith('W/"') and first.endswith('"')
    assert etag(sitemap(), summary(token="u")) != first
    assert etag(sitemap(base_url="https://www.example.com/"), summary()) != first
    assert etag(sitemap(), summary(), path="/sitemap-urls-1.xml") != first
    assert etag(sitemap(), summary(), path="/sitemap.xml.gz") != first
    assert etag(sitemap(), summary(), accept_encoding="gzip") != first  # RFC 9110 §8.8.3.3


def test_last_modified_is_truncated_and_never_after_the_date() -> None:
    def headers(newest: datetime | None) -> dict[str, str]:
        outcome = plan(sitemap(), "/sitemap.xml", Request("HEAD"), summary(newest))
        return dict(head_of(outcome).headers)

    def modified(newest: datetime | None) -> str | None:
        return headers(newest).get("last-modified")

    assert (
        modified(NOW - timedelta(seconds=10, microseconds=700)) == "Sat, 01 Jun 2024 11:59:49 GMT"
    )
    # The Date is the server's: none is planned, and the cap leaves room for one cached up to
    # a second before the clock read for the request.
    assert "date" not in headers(None) and "date" not in headers(NOW)
    assert modified(NOW + timedelta(days=3)) == "Sat, 01 Jun 2024 11:59:58 GMT"
    assert modified(NOW - timedelta(seconds=1)) == "Sat, 01 Jun 2024 11:59:58 GMT"
    assert modified(None) is None


def test_plans() -> None:
    s = sitemap()
    assert s.routes.match("/other") is None
    get = plan(s, "/sitemap.xml", Request("GET"), summary())
    assert isinstance(get, UrlsetPlan) and get.head.status == 200 and not get.gzip
    headers = dict(get.head.headers)
    assert headers["content-type"] == "text/xml; charset=utf-8"
    assert headers["x-robots-tag"] == "noindex"
    assert headers["cache-control"] == "no-cache"
    assert headers["vary"] == "Accept-Encoding"
    assert headers["last-modified"] == "Fri, 31 May 2024 12:00:00 GMT"
    head = plan(s, "/sitemap.xml", Request("HEAD"), summary())
    assert isinstance(head, HeadPlan) and isinstance(head.document, UrlsetPlan)
    assert head.head.status == 200 and head.head.headers == get.head.headers
    cached = plan(
        s, "/sitemap.xml", Request("GET", {"if-none-match": [headers["etag"]]}), summary()
    )
    assert isinstance(cached, Response) and cached.status == 304 and cached.body == b""
    assert dict(cached.headers) == {k: v for k, v in headers.items() if k != "content-type"}
    empty = plan(s, "/sitemap.xml", Request("GET", {"if-none-match": ["*"]}), summary(count=0))
    assert isinstance(empty, Response)
    assert empty.status == 404  # preconditions only apply where a 200 would be
    refusal = responses.method_not_allowed(Request("POST"))
    assert (
        refusal is not None and refusal.status == 405 and ("allow", "GET, HEAD") in refusal.headers
    )
    assert responses.method_not_allowed(Request("HEAD")) is None


def test_gzip_representations() -> None:
    s = sitemap()
    coded = plan(s, "/sitemap.xml", Request("GET", {"accept-encoding": ["br, gzip"]}), summary())
    assert isinstance(coded, UrlsetPlan)
    assert coded.gzip and ("content-encoding", "gzip") in coded.head.headers
    refused = plan(s, "/sitemap.xml", Request("GET", {"accept-encoding": ["gzip;q=0"]}), summary())
    assert isinstance(refused, UrlsetPlan)
    assert not refused.gzip and "content-encoding" not in dict(refused.head.headers)
    file = plan(s, "/sitemap.xml.gz", Request("GET", {"accept-encoding": ["gzip"]}), summary())
    assert isinstance(file, UrlsetPlan)
    headers = dict(file.head.headers)
    assert file.gzip and headers["content-type"] == "application/gzip"
    assert "content-encoding" not in headers and "vary" not in headers


def test_root_is_an_index_past_one_page() -> None:
    s = sitemap(limits=Limits(max_urls=10))
    assert s.page_size(s.sources[0]) == 10
    assert isinstance(plan(s, "/sitemap.xml", Request("GET"), summary(count=10)), UrlsetPlan)
    assert isinstance(plan(s, "/sitemap.xml", Request("GET"), summary(count=11)), IndexPlan)
    always = sitemap(index="always")
    assert isinstance(plan(always, "/sitemap.xml", Request("GET"), summary()), IndexPlan)


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-urls-0.xml",
        "/sitemap-urls--1.xml",
        "/sitemap-urls-01.xml",
        "/sitemap-urls-x.xml",
        "/sitemap-urls-1.5.xml",
        "/sitemap-other-1.xml",
        "/sitemap-urls-99999999999999999999.xml",
        "/sitemap-.xml",
    ],
)
def test_bad_page_paths_are_ours_and_name_nothing(path: str) -> None:
    s = sitemap()
    target = s.routes.match(path)
    assert target is not None and s.parts(target) is None


def test_page_key_ranges() -> None:
    s = sitemap(limits=Limits(max_urls=100))
    target = s.routes.match("/sitemap-urls-3.xml.gz")
    assert target == PageTarget("urls", 3, gz=True)
    parts = s.parts(target)
    assert parts is not None
    assert parts[0][1] == KeyRange((199,), (299,))  # keys 200..299
