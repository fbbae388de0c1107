"""The seam ``render`` reads documents through, whatever drives the application in-process.

``fetch(path, headers, sink, method="GET") -> Head``: the body goes to ``sink`` chunk by
chunk as the application produces it (a 50 MB sitemap never sits in memory),
the status and headers come back, and a response that does not end properly
(the application raised, or stopped before the end of its body, as the
middleware does when a source fails mid-stream) raises :class:`ResponseFailed`.
:mod:`.asgi_client` and :mod:`.wsgi_client` implement it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

Sink = Callable[[bytes], object]


@dataclass(frozen=True, slots=True)
class Head:
    status: int
    headers: list[tuple[str, str]]
    """Names in lowercase."""

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


class ResponseFailed(RuntimeError):
    """The application did not give a complete response; ``head`` is the status and headers
    when it had started one (its body broke off)."""

    def __init__(self, message: str, head: Head | None = None) -> None:
        super().__init__(message)
        self.head = head


class StartupFailed(RuntimeError):
    """The application's lifespan startup failed."""


class Fetch(Protocol):
    async def __call__(
        self, path: str, headers: Mapping[str, str], sink: Sink, method: str = "GET"
    ) -> Head: ...
