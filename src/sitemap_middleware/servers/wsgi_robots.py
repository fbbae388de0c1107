"""The application's ``/robots.txt`` under WSGI, with the sitemap's line added.

The application is asked for a GET of it (the conditional headers removed:
:data:`.robots.NOT_FORWARDED`); its answer is read whole, then rewritten by
:meth:`.core.Sitemap.robots`, or passed on as it came when the core declines or
the answer grows past :data:`.robots.MAX_BYTES`.

With ``robots_filter``, :func:`read_rules` asks the app for the same file for the
sitemap's own use (:mod:`..state.robots_rules`), bounded by its ``timeout`` (:func:`ask`,
Django's middleware's too).
"""

from __future__ import annotations

import contextvars
import io
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from ..core import robots
from ..core.sitemap import Request, Response, Sitemap
from ..state import robots_rules
from ..state.robots_rules import Answer, RobotsRules
from .job_threads import JobThread
from .types import Environ, ExcInfo, StartResponse, WSGIApp, close_iterable


def robots_txt(
    sitemap: Sitemap,
    app: WSGIApp,
    request: Request,
    call: tuple[Environ, StartResponse],
    respond: Callable[[Response], Iterable[bytes]],
) -> Iterable[bytes]:
    """The app's robots.txt with the sitemap line (or a minimal one when it has none); the
    sitemap's own answers come from ``respond``."""
    environ, start_response = call
    inner = {key: value for key, value in environ.items() if robots.forwarded_environ(key)}
    inner["REQUEST_METHOD"] = "GET"
    captured: list[Any] = []
    written: list[bytes] = []  # through write(): before the chunks, and not bounded

    def capture(
        status: str, headers: list[tuple[str, str]], exc_info: ExcInfo | None = None
    ) -> Callable[[bytes], object]:
        captured[:] = [status, headers, exc_info]
        return written.append

    result = app(inner, capture)
    held: robots.Held[bytes] = robots.Held(request.method)
    iterator = iter(result)
    try:
        for chunk in iterator:
            if held.hold(chunk, chunk):  # too large to rewrite: passed on as it is
                start_response(*captured)
                return _Passed(written + held.release(), iterator, result, held)
    except BaseException:
        close_iterable(result)
        raise
    close_iterable(result)
    status = int(str(captured[0]).split()[0]) if captured else 500
    body = b"".join(written) + held.body
    outcome = sitemap.robots(request, status, list(captured[1]), body)
    if outcome is None:
        start_response(*captured)
        return [] if held.head else [body]
    return respond(outcome)


class _Passed:
    """An app's answer passed on after its first chunks were read (``close()`` forwarded)."""

    def __init__(
        self, first: list[bytes], rest: Iterator[bytes], result: object, held: robots.Held[bytes]
    ) -> None:
        self._first, self._rest, self._result, self._held = first, rest, result, held

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._first:
            yield self._held.passed(chunk)
        for chunk in self._rest:
            yield self._held.passed(chunk)

    def close(self) -> None:
        close_iterable(self._result)


_PASSED_ON = ("wsgi.version", "wsgi.errors", "wsgi.multithread", "wsgi.multiprocess")

THREAD = "sitemap-middleware robots.txt"
"""The name of the threads that ask the application for its robots.txt."""


def ask(
    rules: RobotsRules, call: Callable[[], Answer], inline: Callable[[], bool] = lambda: False
) -> None:
    """``robots_filter``: when :meth:`.RobotsRules.due`, ``call`` the application for its
    ``/robots.txt`` in a thread of its own, waited for at most ``rules.timeout`` seconds (a
    view that hangs cannot hold up the sitemap; its late answer is taken when it comes), or
    in this thread when ``inline()`` says so (rows of a transaction of this thread's). With
    no rules read yet, a request that is not the one asking waits for its answer as long."""
    reading = rules.due()
    if reading is None:
        running = rules.running()
        if running is not None:
            running.ended.wait(max(0.0, running.started + rules.timeout - time.monotonic()))
        return

    def answer() -> None:
        with rules.asking(reading) as asking:
            asking.answer = call()

    try:
        here = inline()
    except BaseException:  # the request is not left claimed
        rules.read(None, failure="interrupted", reading=reading)
        raise
    if here:
        return answer()
    context = contextvars.copy_context()
    thread = JobThread(partial(context.run, answer), name=THREAD)
    try:
        thread.start()
    except RuntimeError as exc:  # no thread to be had: an answer too
        rules.read(None, failure=f"{type(exc).__name__}: {exc}", reading=reading)
        return
    if not reading.ended.wait(rules.timeout):
        rules.timed_out(reading)


def environ_for(origin: str, environ: Environ) -> Environ:
    """The WSGI environ of a plain ``GET /robots.txt`` with the ``Host`` of ``origin``."""
    scheme, _, host = origin.partition("://")
    name, _, port = host.rpartition(":") if host.rpartition(":")[2].isdigit() else (host, "", "")
    inner: dict[str, Any] = {key: environ[key] for key in _PASSED_ON if key in environ}
    inner.update(
        {
            "REQUEST_METHOD": "GET",
            "SCRIPT_NAME": environ.get("SCRIPT_NAME", ""),
            "PATH_INFO": robots_rules.PATH,
            "QUERY_STRING": "",
            "SERVER_NAME": name,
            "SERVER_PORT": port or ("443" if scheme == "https" else "80"),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": host,
            "wsgi.url_scheme": scheme,
            "wsgi.input": io.BytesIO(),
            "wsgi.run_once": False,
        }
    )
    return inner


def read_rules(sitemap: Sitemap, app: WSGIApp, environ: Environ) -> None:
    """``robots_filter``: ask the app in process for its ``/robots.txt`` (a plain ``GET``
    with the base URL's ``Host``) and hand the answer to the sitemap's rules (:func:`ask`);
    a failure is an answer too (the rules say what it means)."""
    rules = sitemap.robots_rules
    assert rules is not None

    def call() -> Answer:
        inner = environ_for(sitemap.site.origin, environ)
        statuses: list[str] = []
        body: list[bytes] = []

        def capture(
            status: str, headers: list[tuple[str, str]], exc_info: ExcInfo | None = None
        ) -> Callable[[bytes], object]:
            statuses[:] = [status]
            return body.append

        result = app(inner, capture)
        try:
            size = sum(map(len, body))
            for chunk in result:
                if size < robots_rules.MAX_BYTES:
                    body.append(chunk)
                    size += len(chunk)
        finally:
            close_iterable(result)
        return (int(statuses[0].split()[0]) if statuses else None), b"".join(body)

    ask(rules, call)
