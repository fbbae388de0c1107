"""Servers a test runs in a thread of its own (the endpoints the library speaks to, the
sites the command line audits): only the standard library, so that a site a command
imports in a process of its own loads no test tooling."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import BaseServer

# How often a server's loop looks for its shutdown. serve_forever's default, half a second,
# is what every test that stops a server would wait at its end.
SHUTDOWN_POLL = 0.01


@contextmanager
def serving_in_thread(server: BaseServer) -> Iterator[None]:
    """``server`` answers from a thread while in the block; shut down and closed after."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL}, daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
