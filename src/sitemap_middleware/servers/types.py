"""The ASGI and WSGI interfaces' types, declared once for the adapters, the CLI's
in-process clients and the tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from types import TracebackType
from typing import Any

# ASGI 3 (https://asgi.readthedocs.io/en/latest/specs/main.html)
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# WSGI (PEP 3333)
Environ = dict[str, Any]
ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]
Write = Callable[[bytes], object]
StartResponse = Callable[..., Write]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


def close_iterable(iterable: object) -> None:
    """PEP 3333: call the ``close()`` of an application's iterable, when it has one."""
    close = getattr(iterable, "close", None)
    if close is not None:
        close()
