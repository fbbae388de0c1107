"""Drive an ASGI app by hand and keep every message it sends (for checks below HTTP)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

from .conftest import check_served

Message = MutableMapping[str, Any]


@dataclass
class Exchange:
    messages: list[Message] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.messages[0]["headers"]}

    @property
    def bodies(self) -> list[bytes]:
        return [m.get("body", b"") for m in self.messages if m["type"] == "http.response.body"]

    @property
    def body(self) -> bytes:
        return b"".join(self.bodies)

    @property
    def complete(self) -> bool:
        last = self.messages[-1] if self.messages else {}
        return last.get("type") == "http.response.body" and not last.get("more_body", False)


async def call(
    app: Callable[..., Awaitable[None]],
    method: str = "GET",
    path: str = "/sitemap.xml",
    headers: dict[str, str] | None = None,
    root_path: str = "",
    disconnect_after: int | None = None,
) -> Exchange:
    """One request. ``disconnect_after=n``: the client goes away after n body messages."""
    exchange = Exchange()
    gone = anyio.Event()
    request_sent = False

    async def receive() -> Message:
        nonlocal request_sent
        if not request_sent:
            request_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        exchange.messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            gone.set()
        if disconnect_after is not None and len(exchange.bodies) >= disconnect_after:
            gone.set()
            await (
                anyio.lowlevel.checkpoint()
            )  # let the disconnect be noticed, as a real server would

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": root_path + path,
        "raw_path": (root_path + path).encode(),
        "root_path": root_path,
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("example.com", 443),
    }
    try:
        await app(scope, receive, send)
    except Exception as exc:
        exchange.error = exc
    if exchange.complete and method == "GET":
        headers = exchange.headers
        check_served(
            exchange.status,
            headers.get("content-type", ""),
            exchange.body,
            headers.get("content-encoding"),
        )
    return exchange
