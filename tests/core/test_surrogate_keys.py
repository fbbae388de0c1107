"""Surrogate keys (``core/surrogate_keys.py``) and the Cache-Control presets, without a
server: the scheme's scope (one document, one source, one site), its escaping, its bounds,
and the 503s and 404s that carry neither keys nor a cacheable ``Cache-Control``."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import ConfigurationError, Headers, Load, cdn_cache_control, purge_keys
from sitemap_middleware.core.handler import handle, run_effects
from sitemap_middleware.core.routing import PageTarget, RootTarget
from sitemap_middleware.core.sitemap import Request, Response, Sitemap
from sitemap_middleware.core.surrogate_keys import key_field
from sitemap_middleware.servers.sync_effects import SyncEffectRunner
from sitemap_middleware.settings import Settings, make_settings
from sitemap_middleware.sources.base import Page
from sitemap_middleware.state.current_pages import CountedPages, moved_pages

BASE = "https://example.com/"
CDN = "public, max-age=0, s-maxage=300, stale-while-revalidate=60, stale-if-error=86400"


def urls(name: str, count: int) -> list[str]:
    return [f"{BASE}{name}/{n}" for n in range(count)]


def keyed(**options: object) -> Sitemap:
    settings = {
        "base_url": BASE,
        "headers": Headers.cdn(surrogate_keys=["surrogate-key", "cache-tag"]),
        "limits": {"max_urls": 10},
        **options,
    }
    return Sitemap({"posts": urls("p", 25), "tags": urls("t", 3)}, make_settings(settings))


def test_the_presets() -> None:
    assert Headers().cache_control == "no-cache" and Headers().surrogate_keys == ()
    assert Headers.cdn().cache_control == CDN == cdn_cache_control()
    assert Headers.cdn().surrogate_keys == ("surrogate-key",)
    assert cdn_cache_control(600, 0, 0) == "public, max-age=0, s-maxage=600"
    custom = Headers.cdn(60, 30, 3600, surrogate_keys=["Cache-Tag"], x_robots_tag=None)
    assert custom.cache_control == (
        "public, max-age=0, s-maxage=60, stale-while-revalidate=30, stale-if-error=3600"
    )
    assert (custom.surrogate_keys, custom.x_robots_tag) == (("cache-tag",), None)
    for bad in ({"s_maxage": 0}, {"stale_while_revalidate": -1}, {"stale_if_error": 1.5}):
        (name,) = bad
        with pytest.raises(ConfigurationError, match=rf"^headers\.cdn\({name}\): "):
            Headers.cdn(**bad)
    with pytest.raises(ConfigurationError, match=r"^headers\.surrogate_keys: "):
        Headers.cdn(surrogate_keys="surrogate-key")  # a string, not a list of fields


def test_the_keys_scope_one_document_one_source_one_site() -> None:
    keys = keyed().keys
    site, posts, tags = "sm-site_example.com", "sm-src_example.com_posts", "sm-src_example.com_tags"
    root = "sm-doc_example.com_sitemap.xml"
    assert keys.of(RootTarget()) == (site, posts, tags, root)
    # Every form of a document has its key; pages differ by source and by number.
    page = keys.of(PageTarget("posts", 2))
    assert page == (site, posts, "sm-doc_example.com_sitemap-posts-2.xml")
    assert keys.of(PageTarget("posts", 2, gz=True, html=True)) == page
    documents = {
        keys.document(PageTarget(name, n)) for name in ("posts", "tags") for n in (1, 2, 10, 11)
    }
    assert len(documents) == 8 and root not in documents
    # A change of pages purges them and the root; of the pages themselves, the source
    # (the root and every page carry it); an explicit purge, the source or the site.
    assert keys.of_pages("posts", [3, 1, 3]) == [
        "sm-doc_example.com_sitemap-posts-1.xml",
        "sm-doc_example.com_sitemap-posts-3.xml",
        root,
    ]
    assert keys.of_pages("posts", []) == []
    assert keys.of_pages("posts", None) == [posts]
    assert keys.of_source(None) == [site] and keys.of_source("tags") == [tags]
    with pytest.raises(ValueError, match="'nope'"):
        keys.of_source("nope")
    # The same keys for a process that serves no sitemap.
    assert purge_keys("https://EXAMPLE.com:443/") == [site]
    assert purge_keys(BASE, "tags") == [tags]
    fields = dict(keys.headers(PageTarget("tags", 1)))
    assert fields == {
        "surrogate-key": f"{site} {tags} sm-doc_example.com_sitemap-tags-1.xml",
        "cache-tag": f"{site},{tags},sm-doc_example.com_sitemap-tags-1.xml",
    }


def test_the_fields_of_a_key_are_escaped_and_never_collide() -> None:
    site = Sitemap(
        {"a_b": urls("a", 1), "a-b": urls("b", 1)},
        Settings(
            base_url="https://Ex-ample.com:8443/Shop/",
            path="/maps/sitemap.xml",
            headers=Headers(surrogate_keys=("surrogate-key",)),
        ),
    )
    keys = site.keys
    assert keys.site == "sm-site_ex-ample.com~3a8443"
    assert keys.sources == {
        "a_b": "sm-src_ex-ample.com~3a8443_a~5fb",
        "a-b": "sm-src_ex-ample.com~3a8443_a-b",
    }
    assert keys.root == "sm-doc_ex-ample.com~3a8443_~53hop~2fmaps~2fsitemap.xml"


@given(st.text(max_size=20), st.text(max_size=20))
def test_key_fields_keep_key_characters_and_are_one_to_one(a: str, b: str) -> None:
    assert re.fullmatch(r"[a-z0-9.~-]*", key_field(a))
    assert (key_field(a) == key_field(b)) == (a == b)


def test_keys_past_the_cdns_bounds_are_a_configuration_error() -> None:
    headers = Headers.cdn()
    with pytest.raises(ConfigurationError, match=r"^headers\.surrogate_keys: the key "):
        Sitemap({"posts": []}, Settings(base_url=BASE + "a" * 1100 + "/", headers=headers))
    many = {f"source-{n:03}-{'x' * 40}": urls("p", 1) for n in range(300)}
    with pytest.raises(ConfigurationError, match=r"^headers\.surrogate_keys: the root's keys"):
        Sitemap(many, Settings(base_url=BASE, headers=headers))
    # Without keys, nothing to bound.
    Sitemap(many, Settings(base_url=BASE))


def test_a_purger_needs_keys_to_purge() -> None:
    class Nothing:
        def purge(self, keys: object) -> None:
            pass

    with pytest.raises(ConfigurationError, match=r"^purger: the documents carry no "):
        Sitemap({"posts": []}, Settings(base_url=BASE), Nothing())
    with pytest.raises(TypeError, match=r"^purger: must have a purge\(keys\) method"):
        Sitemap({"posts": []}, Settings(base_url=BASE, headers=Headers.cdn()), object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^purger: none is configured"):
        keyed().purge()


def answer(site: Sitemap, path: str, method: str = "GET", **headers: str) -> Response:
    target = site.routes.match(path)
    assert target is not None
    request = Request(method, {name.replace("_", "-"): [v] for name, v in headers.items()})
    runner = SyncEffectRunner()
    try:
        outcome = run_effects(handle(site, request, target, datetime.now(UTC)), runner.perform)
    finally:
        runner.close()
    if isinstance(outcome, Response):
        return outcome
    outcome.close()
    return outcome.plan.head.response()


def test_keys_on_200_304_and_head_never_on_404_or_503() -> None:
    site = keyed(load=Load(max_generations=1))
    for path in ("/sitemap.xml", "/sitemap-posts-3.xml", "/sitemap-tags-1.xml.gz"):
        ok = dict(answer(site, path).headers)
        assert "sm-site_example.com" in ok["surrogate-key"].split(), path
        assert ok["cache-control"] == CDN
        again = dict(answer(site, path, if_none_match=ok["etag"]).headers)
        head = dict(answer(site, path, "HEAD").headers)
        for name in ("surrogate-key", "cache-tag", "cache-control"):
            assert again[name] == head[name] == ok[name], (path, name)
    missing = answer(site, "/sitemap-posts-9.xml")
    assert missing.status == 404
    slot = site.slots.acquire()  # every generation busy: a page's 200 is a 503
    busy = answer(site, "/sitemap-posts-1.xml")
    assert slot is not None
    slot.release()
    assert busy.status == 503
    for response in (missing, busy):
        names = {name for name, _ in response.headers}
        assert not names & {"surrogate-key", "cache-tag"}
        assert dict(response.headers)["cache-control"] == "no-store"


def counted(tokens: dict[int, str]) -> CountedPages:
    pages = {i: Page(i, 1, None, None, token) for i, token in tokens.items()}
    return CountedPages.of(pages, datetime.now(UTC))


def test_the_pages_a_count_moved() -> None:
    before = counted({0: "a", 1: "b", 2: "c"})
    assert moved_pages(before, counted({0: "a", 1: "B", 2: "c"})) == [2]
    assert moved_pages(before, before) == []
    assert moved_pages(before, counted({0: "a", 1: "b"})) is None  # one page less
    assert moved_pages(before, None) is None  # cut now
    assert moved_pages(None, None) == []
