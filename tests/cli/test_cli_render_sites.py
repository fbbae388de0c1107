"""``sitemap-middleware render --host``: the sitemap one host gets from an application given
``sites=``, byte-identical to what that host is served."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_middleware import SiteConfig, SitemapApp, SitemapWSGIApp
from sitemap_middleware.cli import main

from ..adapters import wsgi_reply

SITES = {
    host: SiteConfig(
        base_url=f"https://{host}/",
        sources={"pages": [f"/{host.split('.')[0]}-{n}" for n in range(3)]},
    )
    for host in ("one.example", "two.example")
}


async def resolver(host: str) -> SiteConfig | None:
    return SITES.get(host)


asgi = SitemapApp(sites=SITES, index="always")
wsgi = SitemapWSGIApp(sites=resolver, index="always")
FILES = ["sitemap-pages-1.xml", "sitemap-pages-1.xml.gz", "sitemap.xml", "sitemap.xml.gz"]


def render(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["render", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("app", ["asgi", "wsgi"])
@pytest.mark.parametrize("host", ["one.example", "two.example"])
def test_render_writes_the_sitemap_of_the_host_named(
    app: str, host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = render(
        capsys, "--app", f"{__name__}:{app}", "--out", str(tmp_path), "--host", host
    )
    assert (status, err) == (0, "")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == FILES
    other = "two" if host.startswith("one") else "one"
    for name in FILES:
        expected = wsgi_reply(wsgi, "GET", f"/{name}".encode(), [(b"host", host.encode())])
        assert (tmp_path / name).read_bytes() == expected.body, name
    text = (tmp_path / "sitemap-pages-1.xml").read_text()
    assert f"https://{host}/" in text and other not in text


def test_render_needs_the_host_of_a_known_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = render(capsys, "--app", f"{__name__}:asgi", "--out", str(tmp_path))
    assert status == 2 and "--host: the application serves a sitemap per host" in err
    status, _, err = render(
        capsys, "--app", f"{__name__}:wsgi", "--out", str(tmp_path), "--host", "three.example"
    )
    assert status == 2 and "--host: no site for 'three.example'" in err
    assert list(tmp_path.iterdir()) == []
