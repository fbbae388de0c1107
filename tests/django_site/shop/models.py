"""The models the Django tests read."""

from __future__ import annotations

import uuid

from django.db import models


class Article(models.Model):
    """A bigint primary key, and the columns a sitemap reads."""

    id = models.BigAutoField(primary_key=True)
    slug = models.CharField(max_length=200)
    title = models.CharField(max_length=200, default="")
    updated_at = models.DateTimeField(null=True, db_index=True)
    changefreq = models.CharField(max_length=20, null=True)
    priority = models.FloatField(null=True)
    image = models.CharField(max_length=200, blank=True, default="")
    published = models.BooleanField(default=True)

    def get_absolute_url(self) -> str:
        return f"/articles/{self.slug}"


class Page(models.Model):
    """A text primary key: pages are cut, not ranged."""

    path = models.CharField(max_length=200, primary_key=True)
    updated_at = models.DateTimeField(null=True, db_index=True)

    def get_absolute_url(self) -> str:
        return f"/{self.path}"


class Product(models.Model):
    """A UUID primary key."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    sku = models.CharField(max_length=40, unique=True)
    updated_at = models.DateTimeField(null=True)


class ModelRow(models.Model):
    """The reference model test's table (tests/e2e/test_model.py): a surrogate key, the sitemap's
    nullable unique key ``k``; written through SQLAlchemy with hostile values, read here."""

    id = models.IntegerField(primary_key=True)
    k = models.BigIntegerField(null=True, unique=True)
    slug = models.TextField(null=True)
    lastmod = models.DateTimeField(null=True)
    cf = models.TextField(null=True)
    pr = models.DecimalField(null=True, max_digits=30, decimal_places=10)
    img = models.TextField(null=True)

    class Meta:
        db_table = "pages"
        managed = False
