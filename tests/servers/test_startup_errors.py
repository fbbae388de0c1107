"""How a wrong configuration surfaces under uvicorn, as docs/deployment.md says.

``app.add_middleware(SitemapMiddleware, ...)`` (Starlette, FastAPI) builds the middleware on
the application's first ASGI call, the lifespan's startup: the ``ConfigurationError`` is
raised there, not at import. uvicorn's default ``--lifespan auto`` takes a failing lifespan
for an application without one: it starts, and every request of the whole application
answers ``500`` (Starlette builds the stack again for each). ``--lifespan on`` makes the
same error stop the server at startup; building the middleware at import
(``app = SitemapMiddleware(app, ...)``) stops it before it listens.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ..support import free_port

pytestmark = pytest.mark.e2e

ADDED = """
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from sitemap_middleware import SitemapMiddleware

async def home(request):
    return PlainTextResponse("home")

app = Starlette(routes=[Route("/", home)])
app.add_middleware(SitemapMiddleware, base_url="example.com/", sources={"pages": ["/"]})
"""

WRAPPED = """
from starlette.applications import Starlette
from sitemap_middleware import SitemapMiddleware

app = SitemapMiddleware(Starlette(), base_url="example.com/", sources={"pages": ["/"]})
"""

MESSAGE = "ConfigurationError: base_url: base_url must be an absolute http(s) URL"


def uvicorn(tmp_path: Path, source: str, *options: str) -> tuple[subprocess.Popen[str], int]:
    (tmp_path / "shop_app.py").write_text(source)
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "shop_app:app", "--app-dir", str(tmp_path)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return process, port


def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit status and output of a server expected to stop by itself (30 s at most)."""
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        pytest.fail(f"the server did not stop:\n{output}")
    return process.returncode, output


def test_lifespan_auto_starts_and_answers_500_to_every_request(tmp_path: Path) -> None:
    process, port = uvicorn(tmp_path, ADDED)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                statuses = [
                    httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code
                    for path in ("/", "/sitemap.xml")
                ]
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "did not start"
                time.sleep(0.1)
    finally:
        process.terminate()
        _, output = ended(process)
    assert statuses == [500, 500]  # the application's own route too
    assert "ASGI 'lifespan' protocol appears unsupported." in output
    assert output.index("Application startup complete.") < output.index(MESSAGE)


def test_lifespan_on_stops_the_server_at_startup(tmp_path: Path) -> None:
    process, _ = uvicorn(tmp_path, ADDED, "--lifespan", "on")
    status, output = ended(process)
    assert status != 0
    assert MESSAGE in output and "Application startup failed. Exiting." in output
    assert "Uvicorn running" not in output


def test_a_middleware_built_at_import_stops_the_server_before_it_listens(tmp_path: Path) -> None:
    process, _ = uvicorn(tmp_path, WRAPPED)
    status, output = ended(process)
    assert status != 0
    assert MESSAGE in output and "Waiting for application startup" not in output
