"""The answer to a GET or HEAD of a document, from its parts' summaries and the clock:
its status (200, 304, 412, or 404 for nothing to list), validators and headers.

The entity tag and ``Last-Modified`` come from the data and the settings only
(see :mod:`.validators`), so every replica plans the same answer; the
conditional decision is :func:`.http.evaluate_preconditions`'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ..output import html
from ..settings import Settings
from ..sources.base import AnySource
from ..state.robots_rules import RobotsRules
from .exchange import (
    DocumentPlan,
    Head,
    HeadPlan,
    IndexPlan,
    Part,
    Plan,
    Request,
    Response,
    TablePlan,
    UrlsetPlan,
)
from .hosts import SiteForHost
from .http import accepts_gzip, evaluate_preconditions, format_http_date
from .responses import not_found
from .routing import DocumentTarget, PageTarget
from .spec import NEWS_WINDOW
from .surrogate_keys import SurrogateKeys
from .validators import DATE_LAG, Summary, last_modified, make_etag

_GZ, _GZIP, _IDENTITY = "gz", "gzip", "identity"
"""A document's representations: a ``.gz`` file, gzip content coding, or plain."""


class Planner:
    """Plans the answers of one sitemap's documents."""

    def __init__(
        self,
        settings: Settings,
        sources: Sequence[AnySource],
        page_sizes: Mapping[str, int],
        keys: SurrogateKeys | None = None,
        robots: RobotsRules | None = None,
    ) -> None:
        """``robots``: with ``robots_filter``, the rules of the site's robots.txt (their
        digest is part of every ETag)."""
        self._settings = settings
        self._robots = robots
        self._sources = sources
        self._page_sizes = page_sizes
        self._keys = keys
        # Tags already made, by what they are made of: a revalidation of an unchanged
        # document (the common request) then hashes nothing.
        self._tags: dict[tuple[Any, ...], str] = {}

    def is_index(self, target: DocumentTarget, summaries: Sequence[Summary]) -> bool:
        """The root is an index unless it is one source that fits on one page (index="auto")."""
        if isinstance(target, PageTarget):
            return False
        if self._settings.index == "always" or len(self._sources) > 1:
            return True
        count = summaries[0].count
        return count is None or count > self._page_sizes[self._sources[0].name]

    def respond(
        self,
        request: Request,
        target: DocumentTarget,
        parts: Sequence[Part],
        summaries: Sequence[Summary],
        now: datetime,
        host_site: SiteForHost,
    ) -> Response | Plan:
        """The answer to a GET or HEAD of a target, given its parts' summaries and the clock:
        complete (404, 304, 412), or the plan of a 200."""
        if all(summary.count == 0 for summary in summaries):
            # An empty urlset or sitemapindex fails the XSD: there is nothing to list.
            return not_found()
        index = self.is_index(target, summaries)
        coding = self._representation(request, target)
        news_cutoff, tick = self._news(parts, now)
        # One read of the rules: the ETag and the body are made with the same ones.
        robots = None if self._robots is None else self._robots.current
        etag = self._etag(
            host_site,
            target,
            index,
            parts,
            summaries,
            tick,
            coding,
            robots.digest if robots else None,
        )
        newest = [summary.newest for summary in summaries]
        # The server writes the Date (see validators.DATE_LAG): the clock caps Last-Modified
        # below any Date it can write for this request (RFC 9110 §8.8.2.1).
        modified = last_modified(newest if tick is None else [*newest, tick], now)
        headers = self._headers(etag, modified, coding, target)
        status = evaluate_preconditions(request.method, dict(request.headers), etag, modified)
        if status in (304, 412):
            return Response(status, headers)
        head = Head(200, self._with_content_headers(headers, target, coding))
        gzip = coding != _IDENTITY
        listed_until_values = tuple(summary.listed_until for summary in summaries)
        document: DocumentPlan
        if index:
            document = IndexPlan(head, tuple(parts), host_site, gzip, target.html)
        elif target.html:
            document = TablePlan(
                head, target, tuple(parts), host_site, gzip, listed_until_values, robots
            )
        else:
            document = UrlsetPlan(
                head,
                target,
                tuple(parts),
                host_site,
                gzip,
                news_cutoff,
                listed_until_values,
                robots,
            )
        return document if request.method == "GET" else HeadPlan(document)

    def _representation(self, request: Request, target: DocumentTarget) -> str:
        """A ``.gz`` file, or the content coding the client accepts and the settings allow."""
        if target.gz:
            return _GZ
        accepted = accepts_gzip(request.headers.get("accept-encoding"))
        return _GZIP if self._settings.gzip is not False and accepted else _IDENTITY

    def _news(
        self, parts: Sequence[Part], now: datetime
    ) -> tuple[datetime | None, datetime | None]:
        """For documents with news: (the cutoff of news still news, the clock's tick)."""
        if not any(source.shape.news for source, _ in parts):
            return None, None
        # News older than two days lose their news:news: the document changes with the
        # clock, a tick at a time, and its validators say so.
        # Ticks start DATE_LAG late, so that no tick is newer than the Last-Modified cap.
        tick = self._settings.lastmods.news_tick
        moment = datetime.fromtimestamp((now - DATE_LAG).timestamp() // tick * tick, UTC)
        return moment - NEWS_WINDOW, moment

    def _etag(
        self,
        host_site: SiteForHost,
        target: DocumentTarget,
        index: bool,
        parts: Sequence[Part],
        summaries: Sequence[Summary],
        tick: datetime | None,
        coding: str,
        robots: str | None = None,
    ) -> str:
        # Each representation has its own tag (RFC 9110 §8.8.3.3).
        representation = coding + "+html" if target.html else coding
        if robots is not None:  # what robots.txt leaves out changes the bytes
            representation += f"+robots:{robots}"
        key = (
            host_site.fingerprint,
            target,
            index,
            tick,
            representation,
            *[
                (source.name, source.fingerprint(), keys, summary.token)
                for (source, keys), summary in zip(parts, summaries, strict=True)
            ],
        )
        tag = self._tags.get(key)
        if tag is None:
            tag = _make_tag(key)
            if len(self._tags) >= _TAGS_KEPT:
                self._tags.clear()  # tokens moved on: the old tags are of no more use
            self._tags[key] = tag
        return tag

    def _headers(
        self, etag: str, modified: datetime | None, coding: str, target: DocumentTarget
    ) -> list[tuple[str, str]]:
        """The headers of a 200 and of a 304 alike: validators, caching and surrogate keys
        (no ``Date``: the server's, see :data:`.validators.DATE_LAG`)."""
        settings = self._settings
        headers = [("etag", etag)]
        if modified is not None:
            headers.append(("last-modified", format_http_date(modified)))
        if settings.headers.cache_control is not None:
            headers.append(("cache-control", settings.headers.cache_control))
        if settings.gzip is not False and coding != _GZ:
            headers.append(("vary", "Accept-Encoding"))
        if settings.headers.x_robots_tag is not None:
            headers.append(("x-robots-tag", settings.headers.x_robots_tag))
        if self._keys is not None:
            headers += self._keys.headers(target)
        return headers

    def _with_content_headers(
        self, headers: list[tuple[str, str]], target: DocumentTarget, coding: str
    ) -> list[tuple[str, str]]:
        """A 200's headers: what the body is, then the validators and caching."""
        if coding == _GZ:
            content = [("content-type", "application/gzip")]
        else:
            content_type = html.CONTENT_TYPE if target.html else self._settings.headers.content_type
            content = [("content-type", content_type)]
            if coding == _GZIP:
                content.append(("content-encoding", "gzip"))
        tail = [("content-security-policy", html.CONTENT_SECURITY_POLICY)] if target.html else []
        return [*content, *headers, *tail]


_TAGS_KEPT = 4096
"""Entity tags a planner remembers (each some 200 bytes), at most."""


def _make_tag(key: tuple[Any, ...]) -> str:
    """The entity tag of what :meth:`Planner._etag` keys it by."""
    fingerprint, target, index, tick, representation, *parts = key
    tag_parts = [fingerprint, target.tag_text, "index" if index else "urlset"]
    for name, source_fingerprint, keys, token in parts:
        tag_parts += (name, source_fingerprint, repr(keys), token)
    if tick is not None:
        tag_parts.append(f"news:{tick.isoformat()}")
    return make_etag([*tag_parts, representation])
