"""An adopted class's instances made from ``values_list()`` rows are the instances Django's
iterator gives; any QuerySet or model that customises how instances are made takes Django's
own way."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ...django_setup import database, setup

setup()

from django.db.models import F, signals  # noqa: E402
from django.db.models.query import QuerySet  # noqa: E402

from sitemap_middleware.contrib.django.instances import instances, plain_instances  # noqa: E402

from ...django_site.shop.models import Article, Page  # noqa: E402


@pytest.fixture(scope="module")
def rows() -> Iterator[None]:
    database()
    Article.objects.all().delete()
    Page.objects.all().delete()
    Article.objects.bulk_create(
        Article(
            slug=f"s{i}",
            updated_at=None if i % 3 == 0 else datetime(2024, 1, 1, i, tzinfo=UTC),
            priority=None if i % 2 else i / 10,
            published=i % 4 != 0,
        )
        for i in range(9)
    )
    Page.objects.bulk_create(Page(path=p) for p in ("a", "b b", "caf\u00e9"))
    yield
    Article.objects.all().delete()
    Page.objects.all().delete()


def state(item: Any) -> tuple[Any, ...]:
    # repr: the same type and zone too, not only an equal value
    fields = {f.attname: repr(getattr(item, f.attname)) for f in type(item)._meta.concrete_fields}
    return type(item), item.pk, fields, list(vars(item)), item._state.adding, item._state.db


@pytest.mark.parametrize(
    "queryset",
    [
        lambda: Article.objects.order_by("pk"),
        lambda: Article.objects.filter(published=True, pk__gt=2).order_by("pk"),
        lambda: Page.objects.order_by("pk"),
    ],
)
def test_the_same_instances_as_django_s_iterator(rows: None, queryset: Any) -> None:
    made = list(instances(queryset(), chunk_size=2))
    django = [(item.pk, item) for item in queryset().iterator(chunk_size=2)]
    assert [key for key, _ in made] == [key for key, _ in django]
    assert [state(item) for _, item in made] == [state(item) for _, item in django]
    assert all(item == other for (_, item), (_, other) in zip(made, django, strict=True))
    assert made and made[0][1].get_absolute_url() == django[0][1].get_absolute_url()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.none()
        | st.datetimes(
            min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 5),
)
def test_any_stored_datetimes_give_django_s_values(
    rows: None, moments: list[datetime | None], chunk_size: int
) -> None:
    """Whole chunks of aware values are made from their texts: the same values, zone object
    and all, as Django's converters give (microseconds, any year, NULLs between)."""
    Article.objects.filter(slug__startswith="moment-").delete()
    Article.objects.bulk_create(
        Article(slug=f"moment-{i}", updated_at=moment) for i, moment in enumerate(moments)
    )
    try:
        queryset = Article.objects.filter(slug__startswith="moment-").order_by("pk")
        made = list(instances(queryset, chunk_size))
        django = [(item.pk, item) for item in queryset.iterator(chunk_size=chunk_size)]
        assert [state(item) for _, item in made] == [state(item) for _, item in django]
        assert [item.updated_at for _, item in made] == moments
        assert all(
            item.updated_at is None or item.updated_at.tzinfo is other.updated_at.tzinfo
            for (_, item), (_, other) in zip(made, django, strict=True)
        )
    finally:
        Article.objects.filter(slug__startswith="moment-").delete()


def test_customised_querysets_and_models_take_django_s_way(rows: None) -> None:
    plain: QuerySet[Any] = Article.objects.order_by("pk")
    assert plain_instances(plain)
    for other in (
        plain.only("slug"),
        plain.defer("title"),
        plain.annotate(twice=F("priority") * 2),
        plain.select_related(),
        plain.prefetch_related("pk"),
        plain.values(),
        plain.values_list("slug"),
    ):
        assert not plain_instances(other)

    def listener(**kwargs: Any) -> None:
        pass

    signals.post_init.connect(listener, sender=Article)
    try:
        assert not plain_instances(plain)
    finally:
        signals.post_init.disconnect(listener, sender=Article)
    assert plain_instances(plain)

    class Tracked(Article):
        class Meta:
            proxy = True
            app_label = "shop"

        @classmethod
        def from_db(cls, db: Any, field_names: Any, values: Any) -> Any:
            return super().from_db(db, field_names, values)

    assert not plain_instances(Tracked.objects.all())
