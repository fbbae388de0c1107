"""Sitemaps with every extension, served by the middleware (with the human view), for the
``check`` tests: :mod:`tests.cli_broken` passes every ``/ext/`` request to :func:`build`'s
app, made for the origin the server answers on.

``/ext/sitemap.xml`` is an index of two children: ``tour`` (hreflang
alternates in two languages, images, a video) and ``news`` (recent articles,
and one too old to keep its ``news:news``); ``/ext/sitemap.html`` is its
human view.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from sitemap_middleware import Entry, Image, IterableSource, News, SitemapApp, Video

PATH = "/ext/sitemap.xml"


def build(origin: str) -> SitemapApp:
    """The app for a server at ``origin`` (``http://127.0.0.1:PORT``)."""
    now = datetime.now(UTC)
    languages = {"en": "/ext/en/tour", "de": "/ext/de/tour", "x-default": "/ext/en/tour"}
    video = Video(
        "/ext/thumbs/tour.jpg",
        "The tour",
        "A walk through the building",
        content_loc="https://media.example.net/tour.mp4",
        duration=120,
        family_friendly=True,
    )
    tour = [
        Entry(
            "/ext/en/tour",
            lastmod=date(2024, 5, 1),
            alternates=languages,
            images=[Image("/ext/img/1.jpg"), "https://cdn.example.net/2.jpg"],
            videos=[video],
        ),
        Entry("/ext/de/tour", lastmod=date(2024, 5, 1), alternates=languages),
        Entry("/ext/plain", changefreq="monthly"),
    ]
    news = [
        Entry(f"/ext/news/{i}", news=News("Example Times", "en", now - timedelta(hours=i), f"N{i}"))
        for i in range(1, 6)
    ]
    news.append(
        Entry("/ext/news/old", news=News("Example Times", "en", now - timedelta(days=3), "Old"))
    )
    return SitemapApp(
        base_url=origin + "/",
        path=PATH,
        html=True,
        sources=[
            IterableSource(tour, name="tour"),
            IterableSource(news, name="news"),
        ],
    )
