"""What ``check --audit-lastmod`` concludes about one sitemap's lastmods; pure, no I/O.

Over every lastmod of the sitemap (they cost nothing more to read):

* ``audit.stamp``: the share of lastmods naming the same instant (or day). At
  least half of 10 or more on one instant is a build or deploy stamp, not the
  pages' changes (fail); on one day, with date-only lastmods, a warning.
* ``audit.future``: lastmods later than now (the tolerance of the
  ``lastmod.future`` rule: a minute, or a whole day for a date) (fail).

Over the pages sampled, each requested once (HEAD, or GET where HEAD is refused):

* ``audit.status``: the page answered other than 2xx (fail);
* ``audit.no-last-modified``: no parseable ``Last-Modified``: the lastmod cannot
  be verified (warning);
* ``audit.last-modified-now``: ``Last-Modified`` within a second of ``Date``:
  the time of the response, not of a change; not compared (warning);
* ``audit.older``: the page's ``Last-Modified`` is later than the end of its
  lastmod (the second it names, the minute for minute precision, the day for a
  date, in the last timezone to end it). Some: a warning (an edit to page
  furniture changes Last-Modified and needs no new lastmod); half or more of
  the pages compared: fail.
* ``audit.unreachable``: the page did not answer (warning).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from ..core.http import parse_http_date
from ..core.spec import W3C_DATETIME, XML_WHITESPACE
from .audit_sample import Listed
from .values import day_ends_last, is_future, w3c_moment

PASS, WARN, FAIL, UNKNOWN = "pass", "warn", "fail", "n/a"
STAMP_SHARE = 0.5
STAMP_MIN = 10
MAX_EXAMPLES = 5
_ORIGIN = datetime(1, 1, 1, tzinfo=UTC)


@dataclass
class PageAnswer:
    """What one sampled page answered; ``error`` when it did not, ``skipped`` when it was not
    requested (the request budget went to GETs after refused HEADs)."""

    listed: Listed
    method: str | None = None
    status: int | None = None
    last_modified: str | None = None
    date: str | None = None
    error: str | None = None
    skipped: bool = False


@dataclass
class AuditFinding:
    code: str
    verdict: str
    message: str
    count: int = 0
    of: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def share(self) -> float | None:
        return round(self.count / self.of, 4) if self.of else None


@dataclass
class LastmodStats:
    """The lastmods of a whole sitemap, read as it is checked."""

    entries: int = 0
    with_lastmod: int = 0
    stamp: str | None = None
    stamp_count: int = 0
    stamp_is_date: bool = False
    future: int = 0
    future_examples: list[str] = field(default_factory=list)


def lastmod_stats(locs: list[str], lastmods: list[str | None], now: datetime) -> LastmodStats:
    stats = LastmodStats(entries=len(locs))
    instants: Counter[date | timedelta] = Counter()
    spelling: dict[date | timedelta, str] = {}
    for loc, value in zip(locs, lastmods, strict=True):
        if value is None:
            continue
        stats.with_lastmod += 1
        moment = w3c_moment(value)
        if moment is None:
            continue  # not a date: the lastmod rules report it
        # An instant by its distance from year 1 (no UTC form is needed: 9999-12-31T23-05).
        key = moment - _ORIGIN if isinstance(moment, datetime) else moment
        instants[key] += 1
        spelling.setdefault(key, value)
        if is_future(moment, now):
            stats.future += 1
            if len(stats.future_examples) < MAX_EXAMPLES:
                stats.future_examples.append(f"{value} ({loc})")
    if instants:
        key, stats.stamp_count = instants.most_common(1)[0]
        stats.stamp, stats.stamp_is_date = spelling[key], not isinstance(key, timedelta)
    return stats


def stamp_finding(stats: LastmodStats) -> AuditFinding:
    found = AuditFinding("audit.stamp", PASS, "", stats.stamp_count, stats.with_lastmod)
    if stats.stamp is not None:
        found.examples.append(f"{stats.stamp} on {stats.stamp_count} of {stats.with_lastmod}")
    share = found.share or 0.0
    if stats.with_lastmod < STAMP_MIN or share < STAMP_SHARE:
        found.message = "no single lastmod is shared by half the URLs"
    elif stats.stamp_is_date:
        found.verdict = WARN
        found.message = (
            f"{share:.0%} of the lastmods are one day: a date-only build stamp, unless the "
            "site really changed in one day"
        )
    else:
        found.verdict = FAIL
        found.message = (
            f"{share:.0%} of the lastmods are one instant: a build or deploy stamp, not the "
            "pages' changes; Google ignores lastmods that are not verifiably accurate"
        )
    return found


def future_finding(stats: LastmodStats) -> AuditFinding:
    if not stats.future:
        return AuditFinding("audit.future", PASS, "no lastmod in the future", 0, stats.with_lastmod)
    return AuditFinding(
        "audit.future",
        FAIL,
        "lastmods in the future: a clock or timezone error, and a reason for crawlers to "
        "stop believing the sitemap's lastmods",
        stats.future,
        stats.with_lastmod,
        list(stats.future_examples),
    )


def page_findings(answers: list[PageAnswer]) -> list[AuditFinding]:
    """The findings of the pages sampled from one sitemap, in a fixed order."""
    asked = [a for a in answers if not a.skipped]
    groups: dict[str, list[str]] = {k: [] for k in ("status", "unreachable", "none", "now")}
    compared, older = 0, []
    for answer in asked:
        kind, example = classify(answer)
        if kind == "older":
            older.append(example)
        if kind in ("older", "ok"):
            compared += 1
        elif kind in groups:
            groups[kind].append(example)
    return [
        _some("audit.status", FAIL, groups["status"], len(asked), _STATUS),
        _some("audit.unreachable", WARN, groups["unreachable"], len(asked), _UNREACHABLE),
        _some("audit.no-last-modified", WARN, groups["none"], len(asked), _NO_LAST_MODIFIED),
        _some("audit.last-modified-now", WARN, groups["now"], len(asked), _NOW),
        _older(older, compared),
    ]


_STATUS = (
    "listed pages that do not answer 2xx (a redirect, a missing page): a sitemap lists live, "
    "canonical URLs"
)
_UNREACHABLE = "listed pages that did not answer"
_NO_LAST_MODIFIED = "pages without Last-Modified: their lastmods cannot be verified"
_NOW = (
    "pages whose Last-Modified is the time of the response (within a second of Date), not "
    "of a change: their lastmods cannot be verified"
)


def _some(code: str, verdict: str, found: list[str], of: int, message: str) -> AuditFinding:
    if not found:
        return AuditFinding(code, PASS, "none", 0, of)
    return AuditFinding(code, verdict, message, len(found), of, found[:MAX_EXAMPLES])


def _older(older: list[str], compared: int) -> AuditFinding:
    found = AuditFinding("audit.older", PASS, "", len(older), compared, older[:MAX_EXAMPLES])
    if not compared:
        found.verdict, found.message = UNKNOWN, "no page could be compared with its lastmod"
    elif not older:
        found.message = "no page changed after its lastmod"
    else:
        most = 2 * len(older) >= compared
        found.verdict = FAIL if most else WARN
        found.message = (
            "pages changed after their lastmod (Last-Modified later): crawlers that trust "
            "lastmod skip those changes"
            + ("" if most else "; an edit to page furniture alone needs no new lastmod")
        )
    return found


def classify(answer: PageAnswer) -> tuple[str, str]:
    """What one answer shows, and the example that says so."""
    loc = answer.listed.loc
    if answer.error is not None:
        return "unreachable", answer.error
    if answer.status is None or not 200 <= answer.status < 300:
        return "status", f"{loc}: {answer.method} {answer.status}"
    modified = parse_http_date(answer.last_modified or "")
    if modified is None:
        got = f"Last-Modified {answer.last_modified!r}" if answer.last_modified else "none"
        return "none", f"{loc} ({got})"
    sent = parse_http_date(answer.date or "")
    if sent is not None and abs(sent - modified) <= timedelta(seconds=1):
        return "now", f"{loc}: Last-Modified {answer.last_modified}, Date {answer.date}"
    lastmod = answer.listed.lastmod
    moment = w3c_moment(lastmod) if lastmod is not None else None
    if lastmod is None or moment is None:
        return "no-lastmod", loc
    if _changed_after(modified, lastmod, moment):
        return "older", f"{loc}: lastmod {lastmod}, Last-Modified {answer.last_modified}"
    return "ok", loc


def _changed_after(modified: datetime, value: str, moment: datetime | date) -> bool:
    """Whether ``modified`` is past the last instant a lastmod can mean: its second, its
    minute, or its day wherever on Earth that day ends last (UTC-12). Compared without
    moving the lastmod, which near year 9999 has no later instant."""
    if not isinstance(moment, datetime):
        return moment < date.max and modified > day_ends_last(moment)
    form = W3C_DATETIME.fullmatch(value.strip(XML_WHITESPACE))
    span = timedelta(seconds=1 if form is not None and form.group(6) else 60)
    try:
        return modified - span > moment
    except OverflowError:  # a Last-Modified in year 1
        return False
