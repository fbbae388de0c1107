"""``sitemap-middleware render`` for WSGI applications (Flask, Django, the middleware itself):
files byte-identical to what the application serves, written all-or-nothing; the human
view's pages only with ``--html``."""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from sitemap_middleware import SitemapApp, SitemapWSGIApp
from sitemap_middleware.cli import main
from sitemap_middleware.cli.loader import find_sitemaps, interface, is_factory
from sitemap_middleware.testing import ResponseFailed, WSGIClient

from .. import cli_site, cli_wsgi_site
from ..adapters import call_wsgi
from ..support import _schema, assert_valid_index, assert_valid_urlset, served
from .test_cli_render import SITE_FILES, files, render

HTML_FILES = ["sitemap.html", *(f.removesuffix(".xml") + ".html" for f in SITE_FILES[1:])]


@pytest.mark.parametrize("name", ["flask_app", "create_flask_app"])
def test_a_flask_app_and_a_factory(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = render(
        capsys, "--app", f"tests.cli_wsgi_site:{name}", "--out", str(tmp_path)
    )
    assert (status, err) == (0, "")
    expected = sorted([*SITE_FILES, *(f + ".gz" for f in SITE_FILES)])
    assert files(tmp_path) == expected  # the human view is not a sitemap: left out
    for name_ in expected:
        assert (tmp_path / name_).read_bytes() == served(cli_wsgi_site.flask_app, "/" + name_)
    children = [loc for loc, _ in assert_valid_index((tmp_path / "sitemap.xml").read_bytes())]
    assert children == [f"https://example.com/{f}" for f in SITE_FILES[1:]]
    for child in SITE_FILES[1:]:
        assert assert_valid_urlset((tmp_path / child).read_bytes(), _schema("sitemap.xsd"))
    assert out.startswith(f"wrote {len(expected)} files (")


def test_html_pages_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--app", "tests.cli_wsgi_site:flask_app", "--html", "--no-gz", "--quiet"]
    assert render(capsys, *args, "--out", str(tmp_path))[0] == 0
    assert files(tmp_path) == sorted([*SITE_FILES, *HTML_FILES])
    for name in HTML_FILES:
        page = call_wsgi(cli_wsgi_site.flask_app, path="/" + name)
        assert page.headers["content-type"].startswith("text/html")
        assert (tmp_path / name).read_bytes() == page.body, name
    assert b'href="sitemap-articles-1.html"' in (tmp_path / "sitemap.html").read_bytes()
    # A sitemap without the human view: nothing fetched, nothing written.
    out = tmp_path / "asgi"
    status, _, err = render(capsys, "--app", "tests.cli_site:app", "--html", "--out", str(out))
    assert status == 2
    assert "--html: the sitemap at /sitemap.xml has no human view" in err
    assert not out.exists()


def test_html_pages_are_staged_with_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sitemap render does not find in the app: its human view is tried, and its absence
    # fails the run after the XML was staged, so nothing is moved into place.
    args = ["--app", "tests.cli_wsgi_site:plain", "--html", "--out", str(tmp_path)]
    status, _, err = render(capsys, *args)
    assert status == 1
    assert "/sitemap.html: status 404" in err and "nothing was written" in err
    assert files(tmp_path) == []
    assert render(capsys, *args[:2], "--out", str(tmp_path))[0] == 0
    assert files(tmp_path) == ["sitemap.xml", "sitemap.xml.gz"]


def test_a_sitemap_wsgi_app_and_a_dispatcher(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render(capsys, "--app", "tests.cli_wsgi_site:standalone", "--out", str(tmp_path))[0] == 0
    assert files(tmp_path) == ["sitemap.xml", "sitemap.xml.gz"]
    for name in files(tmp_path):
        assert (tmp_path / name).read_bytes() == served(cli_wsgi_site.standalone, "/" + name)

    assert [m.path for m in find_sitemaps(cli_wsgi_site.dispatched)] == [
        "/other.xml",
        "/maps/sitemap.xml",
    ]
    out = tmp_path / "dispatched"
    assert render(capsys, "--app", "tests.cli_wsgi_site:dispatched", "--out", str(out))[0] == 0
    assert files(out) == ["maps/sitemap.xml", "maps/sitemap.xml.gz", "other.xml", "other.xml.gz"]
    body = (out / "maps" / "sitemap.xml").read_bytes()
    assert body == served(cli_wsgi_site.dispatched, "/maps/sitemap.xml")
    assert len(assert_valid_urlset(body, _schema("sitemap.xsd"))) == 250


def test_a_django_application(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--app", "tests.cli_wsgi_site:django_application", "--out", str(tmp_path)]
    assert render(capsys, *args)[0] == 0
    expected = sorted([*SITE_FILES, *(f + ".gz" for f in SITE_FILES)])
    assert files(tmp_path) == expected
    django = cli_wsgi_site.django_application()
    assert call_wsgi(django, path="/").body == b"home"  # Django answers the rest
    for name in expected:
        assert (tmp_path / name).read_bytes() == served(django, "/" + name), name


def test_failures_leave_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "sitemap.xml"
    old.write_bytes(b"the previous sitemap")
    for name, reason in [
        ("broken_midstream", "/sitemap-flaky-1.xml: the application raised SitemapAborted"),
        ("broken_before", "/sitemap.xml: status 503: Sitemap temporarily unavailable"),
    ]:
        args = ["--app", f"tests.cli_wsgi_site:{name}", "--out", str(tmp_path)]
        status, out, err = render(capsys, *args)
        assert status == 1, err
        assert reason in err and "nothing was written" in err
        assert out == ""
        assert files(tmp_path) == ["sitemap.xml"]
        assert old.read_bytes() == b"the previous sitemap"


def test_async_sources_and_their_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = cli_wsgi_site.async_sources
    assert (
        render(capsys, "--app", "tests.cli_wsgi_site:async_sources", "--out", str(tmp_path))[0] == 0
    )
    assert (
        len(assert_valid_urlset((tmp_path / "sitemap.xml").read_bytes(), _schema("sitemap.xsd")))
        == 50
    )
    # The middleware's event loop thread is stopped, or the command would wait for it at exit.
    assert not app.reads.loop.running


def test_asgi_or_wsgi_is_told_from_the_application(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def wsgi(environ: object, start_response: object) -> list[bytes]:
        return []

    async def asgi(scope: object, receive: object, send: object) -> None: ...

    def three(scope: object, receive: object, send: object) -> None: ...

    assert interface(cli_wsgi_site.flask_app) == "wsgi"
    assert interface(cli_wsgi_site.standalone) == interface(wsgi) == "wsgi"
    assert interface(cli_wsgi_site.dispatched) == "wsgi"
    assert interface(Starlette()) == "asgi"
    assert interface(SitemapApp(base_url=cli_site.BASE, sources=[])) == "asgi"
    assert interface(asgi) == interface(three) == interface(cli_site.app) == "asgi"
    assert interface(cli_wsgi_site.wrapped) is None and not is_factory(cli_wsgi_site.wrapped)
    assert is_factory(cli_wsgi_site.create_flask_app) and not is_factory(wsgi)

    args = ["--app", "tests.cli_wsgi_site:wrapped", "--out", str(tmp_path)]
    status, _, err = render(capsys, *args)
    assert status == 2
    assert "cannot tell whether the function is an ASGI application" in err
    assert "pass --asgi or --wsgi" in err
    assert files(tmp_path) == []
    assert render(capsys, *args, "--wsgi", "--quiet")[0] == 0
    assert (tmp_path / "sitemap.xml").read_bytes() == served(
        cli_wsgi_site.flask_app, "/sitemap.xml"
    )
    # Forced the wrong way, the application fails (it is not called as it expects).
    status, _, err = render(capsys, *args[:2], "--asgi", "--out", str(tmp_path / "asgi"))
    assert status == 1 and "nothing was written" in err


class Handwritten:
    """A WSGI application that does one thing a server must notice."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.closed = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        return self.Body(self, environ, start_response)

    class Body:
        def __init__(self, app: Handwritten, environ: dict[str, Any], start_response: Any):
            self.app, self.environ, self.start_response = app, environ, start_response

        def __iter__(self) -> Iterator[bytes]:
            fault = self.app.fault
            if fault == "nothing":
                return
            headers = [("Content-Type", "text/plain"), ("Content-Length", "10")]
            if fault == "replaced":
                self.start_response("200 OK", headers)
                yield b""
                try:
                    raise RuntimeError("changed its mind")
                except RuntimeError:
                    self.start_response("500 Oops", [("Content-Length", "2")], sys.exc_info())
                yield b"no"
                return
            write = self.start_response("200 OK", headers)
            if fault == "write":
                write(b"01234")
                yield b"56789"
            elif fault == "short":
                yield b"0123"
            elif fault == "late exc_info":
                yield b"01234"
                try:
                    raise RuntimeError("too late")
                except RuntimeError:
                    self.start_response("500 Oops", [], sys.exc_info())
            else:
                yield b"0123456789"

        def close(self) -> None:
            self.app.closed += 1
            if self.app.fault == "close":
                raise OSError("could not release the connection")


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        ("none", (200, b"0123456789")),
        ("write", (200, b"0123456789")),
        ("replaced", (500, b"no")),
        ("short", "the body has 4 bytes, its Content-Length says 10"),
        ("late exc_info", "the application raised RuntimeError: too late"),
        ("close", "close() raised OSError: could not release the connection"),
        ("nothing", "returned without a response"),
    ],
)
def test_the_wsgi_client_reads_as_a_server_does(fault: str, outcome: object) -> None:
    app = Handwritten(fault)
    client = WSGIClient(app, "https://example.com:8443/")
    body = io.BytesIO()
    if isinstance(outcome, str):
        with pytest.raises(ResponseFailed, match=outcome.replace("(", r"\(").replace(")", r"\)")):
            client.fetch_sync("/x", {}, body.write)
    else:
        head = client.fetch_sync("/x", {}, body.write)
        assert (head.status, body.getvalue()) == outcome
        assert head.header("content-type") in ("text/plain", None)
    assert app.closed == 1  # close() is called however the response ended


def test_the_wsgi_environ() -> None:
    client = WSGIClient(
        SitemapWSGIApp(base_url=cli_site.BASE, sources=["/"]), "https://example.com/"
    )
    environ = client.environ("/caf%C3%A9/map.xml?x=1", {"Accept-Encoding": "gzip"})
    assert environ["PATH_INFO"] == "/café/map.xml".encode().decode("latin-1")
    assert environ["QUERY_STRING"] == "x=1"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("example.com", "443")
    assert (environ["HTTP_HOST"], environ["wsgi.url_scheme"]) == ("example.com", "https")
    assert environ["HTTP_ACCEPT_ENCODING"] == "gzip"


@pytest.fixture
def flask_examples() -> Iterator[None]:
    """The example sites a test makes (render's, the test's own): their engines disposed."""
    yield
    while cli_wsgi_site.flask_examples:
        cli_wsgi_site.flask_examples.pop().extensions["sitemap_engine"].dispose()


@pytest.mark.usefixtures("flask_examples")
def test_the_flask_example_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "site.sqlite3"
    base = "https://www.example.org/"
    monkeypatch.setenv("CLI_EXAMPLE_DB", str(database))
    monkeypatch.setenv("CLI_EXAMPLE_BASE", base)
    out = tmp_path / "public"
    assert main(["render", "--app", "tests.cli_wsgi_site:flask_example", "--out", str(out)]) == 0
    documents = [
        "sitemap.xml",
        "sitemap-pages-1.xml",
        "sitemap-articles-1.xml",
        "sitemap-articles-2.xml",
    ]
    expected = sorted([*documents, *(d + ".gz" for d in documents)])
    assert files(out) == expected
    site = cli_wsgi_site.flask_example()
    client = httpx.Client(transport=httpx.WSGITransport(app=site), base_url=base)
    for name in expected:
        rendered = (out / name).read_bytes()
        assert rendered == served(site, "/" + name), name
        response = client.get("/" + name, headers={"accept-encoding": "identity"})
        assert response.status_code == 200 and rendered == response.content, name
    for name in documents:
        plain = (out / name).read_bytes()
        assert gzip.decompress((out / (name + ".gz")).read_bytes()) == plain
        if name == "sitemap.xml":
            assert [loc for loc, _ in assert_valid_index(plain)] == [
                base + d for d in documents[1:]
            ]
        else:
            assert assert_valid_urlset(plain, _schema("sitemap.xsd"))
    size = sum((out / name).stat().st_size for name in expected)
    assert capsys.readouterr().out == f"wrote {len(expected)} files ({size:,} bytes) to {out}\n"
