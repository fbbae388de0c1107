"""What ``check --audit-indexable`` concludes about each URL it requested; pure, no I/O.

A sitemap lists the pages a site wants indexed: each listed URL should answer
``200``, be its own canonical, not be ``noindex`` and be open to crawlers. Each
finding names its kind (a stable code), the listed URL and what shows it:

* ``indexable.robots``: robots.txt disallows it for Googlebot, Bingbot or ``*``
  (or answered 5xx, which crawlers read as everything disallowed);
* ``indexable.unreachable``: no answer;
* ``indexable.redirect``: a ``3xx``, with its target; ``indexable.status``: any other
  status than ``200`` (a ``404``, a ``503``); neither page is read further;
* ``indexable.canonical``: its canonical (``<link rel="canonical">`` in the head, or a
  ``Link`` header) is another URL, or it names several different ones (which crawlers
  ignore);
* ``indexable.noindex``: ``noindex`` (or ``none``) for every crawler or for Googlebot or
  Bingbot, by ``<meta>`` or ``X-Robots-Tag``;
* ``indexable.hreflang``: an hreflang alternate the sitemap lists for it does not list it
  back, neither in the alternate's own sitemap entry nor on the alternate's page (its
  ``<link rel="alternate" hreflang>`` or ``Link`` header), or does not answer ``200``:
  Google ignores annotations that do not point both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .page_signals import GENERIC, Signals
from .robots_txt import RobotsTxt
from .scope import resource

MESSAGES = {
    "indexable.robots": "listed URLs that robots.txt closes to crawlers: they cannot be read",
    "indexable.unreachable": "listed URLs that did not answer",
    "indexable.redirect": "listed URLs that redirect: list the target instead",
    "indexable.status": "listed URLs that do not answer 200",
    "indexable.canonical": (
        "listed URLs whose canonical is another URL (or several): list the canonical URL"
    ),
    "indexable.noindex": "listed URLs marked noindex: a sitemap lists pages to be indexed",
    "indexable.hreflang": (
        "hreflang alternates that do not list the URL back (Google ignores annotations that "
        "do not point both ways)"
    ),
}
CODES = tuple(MESSAGES)
"""Every kind, in the order reports list them."""


@dataclass
class Visit:
    """What one URL answered to ``GET`` (redirects not followed)."""

    url: str
    status: int | None = None
    location: str | None = None
    """A redirect's target, absolute."""
    error: str | None = None
    signals: Signals = field(default_factory=Signals)

    @property
    def answer(self) -> str:
        """The answer in a few words: ``404``, ``301 to https://...``, or the error."""
        if self.error is not None:
            return f"no answer ({self.error})"
        if self.status is not None and 300 <= self.status < 400:
            return f"{self.status} to {self.location or '(no Location)'}"
        return str(self.status)


@dataclass(frozen=True)
class Found:
    """One finding: its kind, the listed URL, what shows it; ``subject`` another URL it is
    about (the alternate of an ``indexable.hreflang``)."""

    code: str
    url: str
    detail: str
    subject: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What names the finding from one run to the next (a baseline keeps these)."""
        return self.code, self.url, self.subject


def page_findings(visit: Visit, robots: RobotsTxt | None) -> list[Found]:
    """The findings of one listed URL, in :data:`CODES` order."""
    url = visit.url
    found = []
    closed = robots.disallowed(url) if robots is not None else []
    if closed and robots is not None:
        why = f" ({robots.note})" if robots.disallow_all else ""
        found.append(Found("indexable.robots", url, f"disallowed for {', '.join(closed)}{why}"))
    if visit.error is not None:
        return [*found, Found("indexable.unreachable", url, visit.error)]
    status = visit.status or 0
    if 300 <= status < 400:
        return [*found, Found("indexable.redirect", url, visit.answer)]
    if status != 200:
        return [*found, Found("indexable.status", url, visit.answer)]
    canonical = _canonical(url, visit.signals)
    if canonical is not None:
        found.append(Found("indexable.canonical", url, canonical))
    if visit.signals.noindex:
        crawlers = sorted({crawler for crawler, _ in visit.signals.noindex})
        whom = "every crawler" if GENERIC in crawlers else " and ".join(crawlers)
        said = "; ".join(dict.fromkeys(where for _, where in visit.signals.noindex))
        found.append(Found("indexable.noindex", url, f"{said} (noindex for {whom})"))
    return found


def _canonical(url: str, signals: Signals) -> str | None:
    """What is wrong with the page's canonicals, or None (its own, or none given)."""
    named: dict[str, list[str]] = {}
    for href, where in signals.canonicals:
        named.setdefault(resource(href), []).append(f"{href} ({where})")
    if len(named) > 1:
        return "several canonicals: " + "; ".join(spelt[0] for spelt in named.values())
    if named and resource(url) not in named:
        (spelt,) = named.values()
        return f"canonical {spelt[0]}"
    return None


def hreflang_findings(
    url: str,
    alternates: frozenset[str],
    listed_back: Callable[[str, str], bool],
    visits: Mapping[str, Visit],
) -> list[Found]:
    """The alternates the sitemap lists for ``url`` that do not list it back.

    ``listed_back(alternate, url)``: whether the alternate's sitemap entry lists ``url``;
    ``visits``: the alternates' pages requested, by :func:`~.scope.resource`."""
    own = resource(url)
    found = []
    for alternate in sorted(alternates):
        if resource(alternate) == own or listed_back(alternate, url):
            continue
        visit = visits.get(resource(alternate))
        if visit is None:
            continue  # not requested: not judged
        if visit.status != 200:
            detail = f"the alternate {alternate} answers {visit.answer}"
        elif own in {resource(back) for back in visit.signals.alternates}:
            continue
        else:
            detail = (
                f"the alternate {alternate} does not list it back (neither its sitemap entry "
                "nor its page)"
            )
        found.append(Found("indexable.hreflang", url, detail, alternate))
    return found
