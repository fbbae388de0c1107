"""The application's ``/robots.txt`` under ASGI, with the sitemap's line added.

The application is asked for a GET of it (the conditional headers removed:
:data:`.robots.NOT_FORWARDED`); its answer is held until complete, then
rewritten by :meth:`.core.Sitemap.robots`, or passed on as it came when the
core declines or the answer grows past :data:`.robots.MAX_BYTES`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..core import robots
from ..core.sitemap import Request, Response, Sitemap
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
            if name.decode("latin-1").lower() not in robots.NOT_FORWARDED
        ],
        "extensions": extensions,
    }
    capture = _Capture(send, head=request.method == "HEAD")
    await app(inner, receive, capture)
    if capture.passing:
        return
    outcome = None
    if capture.complete:
        outcome = sitemap.robots(request, capture.status, capture.headers, capture.body)
    if outcome is None:
        return await capture.replay()
    await respond(outcome)


class _Capture:
    """Holds the app's robots.txt answer; past ``robots.MAX_BYTES`` it passes it on as is."""

    def __init__(self, send: Send, head: bool) -> None:
        self.send, self.head = send, head
        self.messages: list[Message] = []
        self.size = 0
        self.passing = False
        self.complete = False

    async def __call__(self, message: Message) -> None:
        if self.passing:
            return await self._forward(message)
        self.messages.append(message)
        if message["type"] == "http.response.body":
            self.size += len(message.get("body", b""))
            self.complete = not message.get("more_body", False)
        if self.size > robots.MAX_BYTES:
            self.passing = True
            await self.replay()

    async def replay(self) -> None:
        messages, self.messages = self.messages, []
        for message in messages:
            await self._forward(message)

    async def _forward(self, message: Message) -> None:
        if self.head and message["type"] == "http.response.body":
            message = {**message, "body": b""}  # the app was asked for GET
        await self.send(message)

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"]) if self.messages else 500

    @property
    def headers(self) -> list[tuple[str, str]]:
        if not self.messages:
            return []
        return [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in self.messages[0].get("headers", ())
        ]

    @property
    def body(self) -> bytes:
        return b"".join(
            m.get("body", b"") for m in self.messages if m["type"] == "http.response.body"
        )
