"""A small IndexNow endpoint on 127.0.0.1 for the tests, and a real server for the site.

:class:`Endpoint` speaks the protocol as indexnow.org documents it: ``POST /indexnow``
with ``application/json``, the body ``{host, key, keyLocation, urlList}``; it answers
``400`` for a body that is not that, ``422`` for a URL not on ``host`` or a key not of
the protocol's form, ``403`` when the key file fetched from ``keyLocation`` (from the
application under test) does not hold the key, and otherwise the next scripted status
(``200`` once the script is used up). Every request is recorded.

:func:`serve_site` runs an ASGI application under uvicorn on 127.0.0.1 in a thread.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import uvicorn

from .threaded import serving_in_thread

KEY = re.compile(r"[A-Za-z0-9-]{8,128}")


@dataclass
class Received:
    """One request: its parsed body (None if unreadable) and the status it got."""

    body: dict[str, Any] | None
    status: int
    content_type: str


@dataclass
class Endpoint:
    script: list[int | tuple[int, str]] = field(default_factory=list)
    """Statuses to answer in order, after validation (``(429, "2")``: with Retry-After)."""
    received: list[Received] = field(default_factory=list)
    url: str = ""
    delay: float = 0.0
    """Seconds to wait before answering (two pushers overlap)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    on_post: Callable[[int], None] | None = None
    """Called with the post's number (from 1) before it is answered."""
    posts: int = 0

    @property
    def accepted_urls(self) -> list[str]:
        """Every URL of every accepted (200/202) request, in order."""
        return [
            url
            for r in self.received
            if r.status in (200, 202) and r.body is not None
            for url in r.body["urlList"]
        ]

    def judge(self, raw: bytes, content_type: str) -> tuple[int, dict[str, str]]:
        body = _parsed(raw) if content_type.startswith("application/json") else None
        status, headers = 400, {}
        if body is not None:
            status = _validate(body)
            if status == 200:
                with self.lock:
                    step = self.script.pop(0) if self.script else 200
                status, after = step if isinstance(step, tuple) else (step, None)
                if after is not None:
                    headers["retry-after"] = after
        with self.lock:
            self.received.append(Received(body, status, content_type))
        return status, headers


def _parsed(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    fields = ("host", "key", "urlList")
    if not isinstance(body, dict) or any(name not in body for name in fields):
        return None
    urls = body["urlList"]
    if not isinstance(urls, list) or not 1 <= len(urls) <= 10_000:
        return None
    return body


def _validate(body: dict[str, Any]) -> int:
    """422 for a URL off the host or a malformed key, 403 for a key file that says otherwise."""
    host, key = body["host"], body["key"]
    if not isinstance(key, str) or not KEY.fullmatch(key):
        return 422
    location = body.get("keyLocation")
    for url in [*body["urlList"], *([location] if location else [])]:
        if not isinstance(url, str) or urlsplit(url).hostname != host:
            return 422
    if location is None:
        return 403  # the tests' sites always name their key file
    try:
        with urllib.request.urlopen(location, timeout=5) as response:
            content = response.read().decode("utf-8").strip()
    except OSError:
        return 403
    return 200 if content == key else 403


@contextmanager
def running(endpoint: Endpoint) -> Iterator[Endpoint]:
    """Serve ``endpoint`` at ``http://127.0.0.1:PORT/indexnow`` while in the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            with endpoint.lock:
                endpoint.posts += 1
                number = endpoint.posts
            if endpoint.on_post is not None:
                endpoint.on_post(number)
            if endpoint.delay:
                time.sleep(endpoint.delay)
            status, headers = (
                endpoint.judge(raw, self.headers.get("content-type", ""))
                if self.path == "/indexnow"
                else (404, {})
            )
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/indexnow"
    with serving_in_thread(server):
        yield endpoint


@contextmanager
def serve_site(app: Any, port: int) -> Iterator[str]:
    """Serve an ASGI application under uvicorn on 127.0.0.1:``port`` in a thread."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
