"""``query_id``: a name for a source's query that stands for its SQL text in validators."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from sitemap_middleware import Limits, SitemapWSGIApp
from sitemap_middleware.settings import ConfigurationTypeError

from ...adapters import call_wsgi
from ...support import article_source, articles

BASE = "https://example.com/"
DOCUMENTS = ("/sitemap.xml", "/sitemap-articles-1.xml", "/sitemap-articles-2.xml")
PLAIN = select(articles.c.id, articles.c.slug, articles.c.updated_at)
# Other SQL text, the same rows (every key is above 0).
FILTERED = PLAIN.where(articles.c.id > 0)


def bodies_and_etags(engine: Engine, **options: Any) -> list[tuple[bytes, str]]:
    app = SitemapWSGIApp(
        base_url=BASE, sources=[article_source(engine, **options)], limits=Limits(max_urls=1000)
    )
    answers = [call_wsgi(app, path=path) for path in DOCUMENTS]
    assert all(answer.status == 200 for answer in answers)
    return [(answer.body, answer.headers["etag"]) for answer in answers]


def test_one_query_id_gives_two_texts_of_one_query_the_same_validators(engine: Engine) -> None:
    plain, filtered = bodies_and_etags(engine, stmt=PLAIN), bodies_and_etags(engine, stmt=FILTERED)
    assert [body for body, _ in plain] == [body for body, _ in filtered]
    # By default the SQL text is part of every ETag: other text, other ETags.
    assert all(a != b for (_, a), (_, b) in zip(plain, filtered, strict=True))
    named = bodies_and_etags(engine, stmt=PLAIN, query_id="articles-v1")
    assert named == bodies_and_etags(engine, stmt=FILTERED, query_id="articles-v1")
    # Renaming the query (as after changing it) changes every ETag.
    renamed = bodies_and_etags(engine, stmt=PLAIN, query_id="articles-v2")
    assert all(a != b for (_, a), (_, b) in zip(named, renamed, strict=True))


@pytest.mark.parametrize("bad", ["", 3, b"v1"])
def test_a_query_id_is_a_non_empty_string(engine: Engine, bad: object) -> None:
    with pytest.raises(ConfigurationTypeError, match="query_id: source 'articles'"):
        article_source(engine, query_id=bad)
