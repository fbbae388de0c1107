"""The benchmark's table: a bigint key, a slug and an indexed lastmod."""

from __future__ import annotations

from django.db import models


class Article(models.Model):
    id = models.BigAutoField(primary_key=True)
    slug = models.CharField(max_length=200)
    updated_at = models.DateTimeField(null=True, db_index=True)

    class Meta:
        db_table = "articles"
