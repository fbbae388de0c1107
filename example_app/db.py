"""The example's database: articles in SQLite, created and seeded on first start."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Boolean, DateTime, Engine, Integer, String, delete, func, insert, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Slugs that need entity-escaping or percent-encoding in a sitemap.
AWKWARD_SLUGS = (
    "café-crème",
    "a&b",
    'quote\'s "double"',
    "space in slug",
    "<angle>",
    "100%-natural",
    "emoji-🚀",
    "日本語",
)
BASE_TIME = datetime(2024, 1, 1, 8, 0, 0)


class Base(DeclarativeBase):
    pass


class Article(Base):
    __tablename__ = "articles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String, unique=True)
    title: Mapped[str] = mapped_column(String)
    updated_at: Mapped[datetime] = mapped_column(DateTime, index=True)
    published: Mapped[bool] = mapped_column(Boolean, default=True)


def article_rows(count: int) -> list[dict[str, object]]:
    """The same rows every time for the same count (no clock, no randomness)."""
    rows: list[dict[str, object]] = []
    for i in range(1, count + 1):
        awkward = AWKWARD_SLUGS[i - 1] if i <= len(AWKWARD_SLUGS) else None
        slug = awkward or f"article-{i}"
        rows.append(
            {
                "id": i,
                "slug": slug,
                "title": f"Article {i}" if awkward is None else f"Article {i}: {awkward}",
                "updated_at": BASE_TIME + timedelta(minutes=7 * i),
                # Every 50th article is a draft: not public, so not in the sitemap.
                "published": i % 50 != 0,
            }
        )
    return rows


def seed(engine: Engine, count: int) -> bool:
    """Create the table and fill it with ``count`` articles unless it holds exactly that many.

    Returns True when it (re)seeded.
    """
    with engine.connect() as conn:
        # One writer from the start: replicas starting together on a new file would otherwise
        # both create the table, or both count 0 and seed twice.
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        Base.metadata.create_all(conn)
        existing = conn.scalar(select(func.count()).select_from(Article))
        if existing == count:
            conn.rollback()
            return False
        conn.execute(delete(Article))
        rows = article_rows(count)
        for start in range(0, count, 10_000):
            conn.execute(insert(Article), rows[start : start + 10_000])
        conn.commit()
    return True
