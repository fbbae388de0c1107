"""The example's ``articles`` table as a Django model (created and seeded by
:func:`example_app.db.seed`, as for the other variants: Django does not manage it)."""

from __future__ import annotations

from django.db import models


class Article(models.Model):  # type: ignore[misc]  # Django ships no types
    id = models.IntegerField(primary_key=True)
    slug = models.CharField(max_length=200, unique=True)
    title = models.CharField(max_length=200)
    updated_at = models.DateTimeField(db_index=True)
    published = models.BooleanField(default=True)

    class Meta:
        db_table = "articles"
        managed = False
