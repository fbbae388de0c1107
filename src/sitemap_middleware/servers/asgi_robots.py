"""The application's ``/robots.txt`` under ASGI, with the sitemap's line added.

The application is asked for a GET of it (the conditional headers removed:
:data:`.robots.NOT_FORWARDED`); its answer is held until complete, then
rewritten by :meth:`.core.Sitemap.robots`, or passed on as it came when the
core declines or the answer grows past :data:`.robots.MAX_BYTES`.

With ``robots_filter``, :func:`read_rules` asks the app for the same file for the
sitemap's own use (:mod:`..state.robots_rules`), bounded by its ``timeout`` (:func:`aask`,
Django's middleware's too).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable

import anyio

from ..core import robots
from ..core.sitemap import Request, Response, Sitemap
from ..state import robots_rules
from ..state.robots_rules import Answer, Reading, RobotsRules
from .types import ASGIApp, Message, Receive, Scope, Send


async def robots_txt(
    sitemap: Sitemap,
    app: ASGIApp,
    request: Request,
    connection: tuple[Scope, Receive, Send],
    respond: Callable[[Response], Awaitable[None]],
) -> None:
    """The app's robots.txt with the sitemap line (or a minimal one when it has none); the
    sitemap's own answers go out through ``respond``."""
    scope, receive, send = connection
    extensions = {
        name: value
        for name, value in scope.get("extensions", {}).items()
        if name not in ("http.response.pathsend", "http.response.zerocopysend")
    }
    inner = {
        **scope,
        "method": "GET",
        "headers": [
            (name, value)
            for name, value in scope.get("headers", ())
            if robots.forwarded(name.decode("latin-1"))
        ],
        "extensions": extensions,
    }
    capture = _Capture(send, robots.Held(request.method))
    await app(inner, receive, capture)
    held = capture.held
    if held.passing:
        return
    outcome = None
    if capture.complete:
        outcome = sitemap.robots(request, capture.status, capture.headers, held.body)
    if outcome is None:
        return await capture.replay()
    await respond(outcome)


class _Capture:
    """The ``send`` the app answers through: its messages held by the rule of
    :class:`.robots.Held`."""

    def __init__(self, send: Send, held: robots.Held[Message]) -> None:
        self.send, self.held = send, held
        self.complete = False

    async def __call__(self, message: Message) -> None:
        if self.held.passing:
            return await self._forward(message)
        body = b""
        if message["type"] == "http.response.body":
            body = message.get("body", b"")
            self.complete = not message.get("more_body", False)
        if self.held.hold(message, body):
            await self.replay()

    async def replay(self) -> None:
        for message in self.held.release():
            await self._forward(message)

    async def _forward(self, message: Message) -> None:
        if self.held.head and message["type"] == "http.response.body":
            message = {**message, "body": b""}  # the app was asked for GET
        await self.send(message)

    @property
    def status(self) -> int:
        messages = self.held.items
        return int(messages[0]["status"]) if messages else 500

    @property
    def headers(self) -> list[tuple[str, str]]:
        messages = self.held.items
        if not messages:
            return []
        return [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in messages[0].get("headers", ())
        ]


_ASKING: set[asyncio.Task[None]] = set()
"""The requests for robots.txt under way (the loop keeps weak references to tasks)."""


async def aask(
    rules: RobotsRules,
    call: Callable[[], Awaitable[Answer]],
    inline: Callable[[], Awaitable[bool]] | None = None,
    context: contextvars.Context | None = None,
) -> None:
    """``robots_filter``: when :meth:`.RobotsRules.due`, ``call`` the application for its
    ``/robots.txt`` in a task of its own, waited for at most ``rules.timeout`` seconds (a
    view that hangs, even in a thread, cannot hold up the sitemap; its late answer is taken
    when it comes), or in this task when ``inline()`` says so. The task runs in ``context``
    (default: a copy of this one's). With no rules read yet, a request that is not the one
    asking waits for its answer as long."""
    reading = rules.due()
    if reading is None:
        running = rules.running()
        if running is not None:
            await until_ended(running, running.started + rules.timeout - time.monotonic())
        return

    async def answer() -> None:
        with rules.asking(reading) as asking:
            asking.answer = await call()

    try:
        here = inline is not None and await inline()
    except BaseException:  # cancelled, say: the request is not left claimed
        rules.read(None, failure="interrupted", reading=reading)
        raise
    if here:
        return await answer()
    # Not cancelled at the timeout: a sync view's thread cannot be stopped, and the task
    # ends with it (its answer taken); it is only no longer waited for.
    task = asyncio.get_running_loop().create_task(answer(), context=context)
    _ASKING.add(task)
    task.add_done_callback(_ASKING.discard)
    await asyncio.wait((task,), timeout=rules.timeout)
    if not reading.ended.is_set():
        rules.timed_out(reading)


async def until_ended(reading: Reading, seconds: float) -> None:
    """Waits until ``reading`` ends, which may happen in another thread or event loop, or
    ``seconds`` pass."""
    if seconds <= 0:
        return
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
            loop.call_soon_threadsafe(ended.set)

    forget = reading.on_end(wake)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ended.wait(), seconds)
    finally:
        forget()


def scope_for(origin: str, scope: Scope) -> Scope:
    """The ASGI scope of a plain ``GET /robots.txt`` with the ``Host`` of ``origin``."""
    root_path = str(scope.get("root_path", ""))
    path = root_path + robots_rules.PATH
    return {
        "type": "http",
        "asgi": scope.get("asgi", {"version": "3.0"}),
        "http_version": "1.1",
        "method": "GET",
        "scheme": origin.partition(":")[0],
        "path": path,
        "raw_path": path.encode("ascii", "replace"),
        "root_path": root_path,
        "query_string": b"",
        "headers": [(b"host", origin.partition("://")[2].encode("ascii"))],
        "server": scope.get("server"),
        "client": scope.get("client"),
        "state": dict(scope.get("state", {})),
        "extensions": {},
    }


async def read_rules(sitemap: Sitemap, app: ASGIApp, scope: Scope) -> None:
    """``robots_filter``: ask the app in process for its ``/robots.txt`` (a plain ``GET``
    with the base URL's ``Host``) and hand the answer to the sitemap's rules (:func:`aask`);
    a failure is an answer too (the rules say what it means)."""
    rules = sitemap.robots_rules
    assert rules is not None

    async def call() -> Answer:
        done = anyio.Event()
        asked = False
        status: int | None = None
        body: list[bytes] = []
        size = 0

        async def receive() -> Message:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await done.wait()  # the app may listen for a disconnect while it answers
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                if size < robots_rules.MAX_BYTES:
                    chunk = message.get("body", b"")
                    body.append(chunk)
                    size += len(chunk)
                if not message.get("more_body", False):
                    done.set()

        try:
            await app(scope_for(sitemap.site.origin, scope), receive, send)
        finally:
            done.set()
        return status, b"".join(body)

    await aask(rules, call)
