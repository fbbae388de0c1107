"""``robots_filter``: the rules of the application's own ``robots.txt``, kept between requests.

The adapters ask the application for ``/robots.txt`` when :meth:`RobotsRules.due` says so
(one request at a time, given ``timeout`` seconds) inside :meth:`RobotsRules.asking`, which
hands its outcome to :meth:`RobotsRules.read`; a plan takes :attr:`RobotsRules.current`, whose
:attr:`Rules.digest` goes into the document's ETag and whose :meth:`Rules.allowed` decides
which locs its body lists (:mod:`..output.robots_gate`). What an answer means
(RFC 9309 2.3.1):

* ``2xx``: its rules, from its first :data:`MAX_BYTES`, matched for ``User-agent: *``;
* ``4xx``: no file: everything allowed (2.3.1.3);
* anything else (``5xx``, a redirect, an exception, no answer within ``timeout``): the file
  is unreachable (2.3.1.4). The last rules read are kept (a crawler may keep its cached
  copy while the file is unreachable, 2.4); with none read yet :attr:`RobotsRules.current`
  is None and the sitemap answers ``503`` with ``Retry-After`` (the RFC's "complete
  disallow" would be an empty sitemap, which crawlers would believe). Each is logged.

Matching is protego's, imported when the first sitemap with the setting is built (a
missing one is a :class:`~sitemap_middleware.MissingExtra` naming the setting and the
extra): the core itself imports no third-party library.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from ..errors import MissingExtra

logger = logging.getLogger("sitemap_middleware")

PATH = "/robots.txt"
MAX_BYTES = 512 * 1024
"""Bytes of the file read (RFC 9309: at least 500 KiB); the rest is ignored."""
AGENT = "*"
"""The group whose rules decide: every crawler's."""

_RULE_LINE = re.compile(r"^[ \t]*(user-agent|allow|disallow)[ \t]*:[ \t]*([^#\r\n]*)", re.I | re.M)


class Matcher(Protocol):
    """Parsed rules: whether a crawler may fetch a URL."""

    def can_fetch(self, url: str, user_agent: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules one document is made with: its ETag carries ``digest``."""

    matcher: Matcher | None
    """None: everything allowed."""
    digest: str
    """What the rules are, for the validators: equal rules give equal digests."""

    def allowed(self, url: str) -> bool:
        return self.matcher is None or bool(self.matcher.can_fetch(url, AGENT))


ALLOW_ALL = Rules(None, "allow-all")


def digest_of(text: str) -> str:
    """A digest of the rule lines (``User-agent``, ``Allow``, ``Disallow``) in order:
    comments, blank lines, ``Sitemap`` and other lines change nothing listed, so they do not
    move the validators."""
    lines = "\n".join(
        f"{field.lower()}:{value.strip()}" for field, value in _RULE_LINE.findall(text)
    )
    return hashlib.blake2b(lines.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def protego_parser() -> Callable[[str], Matcher]:
    """protego's parser; a :class:`MissingExtra` naming the setting when it is not there."""
    try:
        from protego import Protego
    except ImportError as exc:
        raise MissingExtra.of(exc, "robots_filter", "robots") from None

    def parse(text: str) -> Matcher:
        return Protego.parse(text)

    return parse


class Reading:
    """One request for the file under way: :meth:`RobotsRules.read` ends it."""

    __slots__ = ("_lock", "_on_end", "asked_at", "ended", "started")

    def __init__(self, started: float, asked_at: float) -> None:
        self.started = started
        """On :func:`time.monotonic`: its ``timeout`` is waited for in real time."""
        self.asked_at = asked_at
        """On the rules' ``clock``, as their ``ttl``."""
        self.ended = threading.Event()
        """Set when its answer is taken (or given up); threads wait on it."""
        self._lock = threading.Lock()
        self._on_end: list[Callable[[], object]] = []

    def on_end(self, call: Callable[[], object]) -> Callable[[], None]:
        """Calls ``call`` (in the thread that ends the reading, so it must only hand over,
        e.g. ``loop.call_soon_threadsafe``) when the reading ends, at once if it has; returns
        what forgets it. An event loop waits this way without a thread or a poll."""
        with self._lock:
            if not self.ended.is_set():
                self._on_end.append(call)
                return lambda: self._forget(call)
        call()
        return lambda: None

    def end(self) -> None:
        with self._lock:
            self.ended.set()
            calls, self._on_end = self._on_end, []
        for call in calls:
            call()

    def _forget(self, call: Callable[[], object]) -> None:
        with self._lock:
            if call in self._on_end:
                self._on_end.remove(call)


Answer = tuple[int | None, bytes]
"""The application's answer for ``/robots.txt``: its status (None: it gave none), its body."""


class Asking:
    """One request for the file, as a ``with`` block (sync or async code alike) whose
    outcome is judged here once: the block sets :attr:`answer`; an exception the block
    raises is the application's failure, taken as its answer and not raised further; a
    block left otherwise (cancelled, say) is "interrupted" and goes on raising. In each
    case :meth:`RobotsRules.read` takes the outcome and ends the :class:`Reading`."""

    __slots__ = ("answer", "reading", "rules")

    def __init__(self, rules: RobotsRules, reading: Reading) -> None:
        self.rules, self.reading = rules, reading
        self.answer: Answer | None = None

    def __enter__(self) -> Asking:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        status, body = self.answer if self.answer is not None else (None, b"")
        if isinstance(error, Exception):
            status, body, failure = None, b"", f"{type(error).__name__}: {error}"
        elif error is not None or self.answer is None:
            failure = "interrupted"
        else:
            failure = "" if status is not None else "no status line"
        self.rules.read(status, body, failure, self.reading)
        return isinstance(error, Exception)


class RobotsRules:
    """The rules of one sitemap's site, read again every ``ttl`` seconds (on ``clock``); a
    request for the file is given ``timeout`` seconds (on :func:`time.monotonic`)."""

    def __init__(
        self,
        ttl: float,
        parse: Callable[[str], Matcher] | None = None,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = 5.0,
    ) -> None:
        self.ttl = ttl
        self.timeout = timeout
        self._parse = parse or protego_parser()
        self.clock = clock
        """Seconds, monotonic: ``ttl`` is counted on it (a test drives its own)."""
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._reading: Reading | None = None
        self.current: Rules | None = None
        """The rules to plan with now; None: none read yet (the sitemap answers ``503``)."""
        self.status: int | None = None
        """The status of the last answer (None: no answer yet, or none at all)."""

    @property
    def taken(self) -> bool:
        """Whether an answer that decides (``2xx``, ``4xx``) was read."""
        return self.current is not None

    def due(self) -> Reading | None:
        """A :class:`Reading` when the caller should ask for the file now, else None. One
        caller asks at a time, the others go on with the rules they have (with none read
        yet they wait for its answer: :meth:`running`). Until rules are read every request
        may ask again; after that, one per ``ttl``. A request that did not answer in time
        holds the others back until it ends, or for ``ttl``: a view that hangs does not
        take a thread per request."""
        with self._lock:
            now = self.clock()
            reading = self._reading
            if reading is not None and now - reading.asked_at < max(self.ttl, self.timeout):
                return None
            fresh = self._read_at is not None and now - self._read_at < self.ttl
            if self.current is not None and fresh:
                return None
            self._reading = Reading(time.monotonic(), now)
            return self._reading

    def running(self) -> Reading | None:
        """The request for the file under way while no rules are read yet: a caller waits
        for it (until ``started + timeout``) rather than answer ``503`` at once."""
        with self._lock:
            return self._reading if self.current is None else None

    def asking(self, reading: Reading) -> Asking:
        """The ``with`` block that asks for the file for ``reading`` (:class:`Asking`)."""
        return Asking(self, reading)

    def read(
        self,
        status: int | None,
        body: bytes = b"",
        failure: str = "",
        reading: Reading | None = None,
    ) -> Rules | None:
        """Take the application's answer (``status`` None: it gave none, ``failure`` says
        why) to ``reading``; returns the rules now current. An answer that comes after its
        ``timeout`` is taken too."""
        rules: Rules | None
        if status is not None and 200 <= status < 300:
            text = body[:MAX_BYTES].decode("utf-8", "replace")
            rules = Rules(self._parse(text), digest_of(text))
        elif status is not None and 400 <= status < 500:
            rules = ALLOW_ALL
        else:
            rules = None
        with self._lock:
            self._read_at = self.clock()
            self.status = status
            if rules is not None:
                self.current = rules
            if reading is not None and self._reading is reading:
                self._reading = None
            current = self.current
        if rules is None:
            what = f"answered {status}" if status is not None else f"failed ({failure})"
            self._unreachable(what, current)
        if reading is not None:  # last: whoever waits for it finds the answer taken
            reading.end()
        return current

    def timed_out(self, reading: Reading) -> None:
        """``reading`` gave no answer within ``timeout``: the file is unreachable for now
        (its answer is taken if it comes later)."""
        with self._lock:
            if self._reading is not reading:  # answered meanwhile (or long given up)
                return
            self._read_at = self.clock()
            self.status = None
            current = self.current
        self._unreachable(f"gave no answer within {self.timeout:g} s", current)

    def _unreachable(self, what: str, current: Rules | None) -> None:
        logger.warning(
            "robots_filter: the application's %s %s; %s",
            PATH,
            what,
            "the last rules read are kept"
            if current is not None
            else "none read yet: the sitemap answers 503",
        )
