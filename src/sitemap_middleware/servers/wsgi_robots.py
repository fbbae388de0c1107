"""The application's ``/robots.txt`` under WSGI, with the sitemap's line added.

The application is asked for a GET of it (the conditional headers removed:
:data:`.robots.NOT_FORWARDED`); its answer is read whole, then rewritten by
:meth:`.core.Sitemap.robots`, or passed on as it came when the core declines or
the answer grows past :data:`.robots.MAX_BYTES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..core import robots
from ..core.sitemap import Request, Response, Sitemap
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
