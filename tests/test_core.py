"""The pure core: settings, validators and the response plan, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sitemap_middleware import ConfigurationError, Entry, IterableSource, Settings
from sitemap_middleware.core import Request, Sitemap, build_sources
from sitemap_middleware.sources.base import ALL
from sitemap_middleware.validators import Summary

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def sitemap(**settings: object) -> Sitemap:
    options: dict[str, object] = {"base_url": "https://example.com/"}
    options.update(settings)
    return Sitemap(["/a", "/b"], Settings(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"base_url": "/relative"}, "base_url"),
        ({"base_url": "example.com"}, "base_url"),
        ({"path": "sitemap.xml"}, "path"),
        ({"path": "/sitemaps/"}, "path"),
        ({"path": "/site map.xml"}, "path"),
        ({"mode": "sometimes"}, "mode"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_urls": 50_001}, "max_urls"),
        ({"max_bytes": 60_000_000}, "max_bytes"),
        ({"cache_control": "a\r\nSet-Cookie: x"}, "cache_control"),
        ({"content_type": ""}, "content_type"),
        ({"naive_timezone": "UTC"}, "naive_timezone"),
        ({"retry_after": -1}, "retry_after"),
    ],
)
def test_misconfiguration_names_the_setting(settings: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{named}: "):
        sitemap(**settings)


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


def test_validators_come_from_data_and_settings_only() -> None:
    a, b = sitemap(), sitemap()
    doc_a, doc_b = a.document_for("/sitemap.xml"), b.document_for("/sitemap.xml")
    assert doc_a is not None and doc_b is not None
    tag_a, _ = a.validators(doc_a, [summary()], NOW)
    assert b.validators(doc_b, [summary()], NOW + timedelta(hours=1))[0] == tag_a
    assert tag_a.startswith('W/"') and tag_a.endswith('"')
    assert a.validators(doc_a, [summary(token="u")], NOW)[0] != tag_a
    other = sitemap(base_url="https://www.example.com/")
    doc_other = other.document_for("/sitemap.xml")
    assert doc_other is not None
    assert other.validators(doc_other, [summary()], NOW)[0] != tag_a


def test_last_modified_is_truncated_and_never_after_now() -> None:
    s = sitemap()
    doc = s.document_for("/sitemap.xml")
    assert doc is not None
    _, modified = s.validators(doc, [summary(NOW - timedelta(seconds=10, microseconds=700))], NOW)
    assert modified == NOW - timedelta(seconds=11)
    _, future = s.validators(doc, [summary(NOW + timedelta(days=3))], NOW)
    assert future == NOW
    _, none = s.validators(doc, [summary(None)], NOW)
    assert none is None


def test_plans() -> None:
    s = sitemap()
    doc = s.document_for("/sitemap.xml")
    assert doc is not None and s.document_for("/other") is None
    plan = s.respond(Request("GET"), doc, [summary()], NOW)
    assert plan.status == 200 and plan.stream
    headers = dict(plan.headers)
    assert headers["content-type"] == "text/xml; charset=utf-8"
    assert headers["x-robots-tag"] == "noindex"
    assert headers["cache-control"] == "no-cache"
    assert headers["last-modified"] == "Fri, 31 May 2024 12:00:00 GMT"
    head = s.respond(Request("HEAD"), doc, [summary()], NOW)
    assert head.status == 200 and not head.stream and head.headers == plan.headers
    cached = s.respond(Request("GET", {"if-none-match": [headers["etag"]]}), doc, [summary()], NOW)
    assert cached.status == 304 and cached.body == b""
    assert dict(cached.headers) == {k: v for k, v in headers.items() if k != "content-type"}
    empty = s.respond(Request("GET", {"if-none-match": ["*"]}), doc, [summary(count=0)], NOW)
    assert empty.status == 404  # preconditions only apply where a 200 would be
    refusal = s.method_not_allowed(Request("POST"))
    assert (
        refusal is not None and refusal.status == 405 and ("allow", "GET, HEAD") in refusal.headers
    )
    assert s.method_not_allowed(Request("HEAD")) is None


def test_more_rows_than_one_sitemap_holds_is_refused_not_truncated() -> None:
    s = sitemap(max_urls=10)
    doc = s.document_for("/sitemap.xml")
    assert doc is not None
    assert s.respond(Request("GET"), doc, [summary(count=11)], NOW).status == 500


def test_iterable_source_summary_changes_with_the_data() -> None:
    first = IterableSource([Entry("/a", "2024-01-01"), "/b"]).summarize(ALL, UTC)
    same = IterableSource([Entry("/a", "2024-01-01"), "/b"]).summarize(ALL, UTC)
    fewer = IterableSource([Entry("/a", "2024-01-01")]).summarize(ALL, UTC)
    assert first == same
    assert first.count == 2 and first.newest == datetime(2024, 1, 1, tzinfo=UTC)
    assert fewer.token != first.token
