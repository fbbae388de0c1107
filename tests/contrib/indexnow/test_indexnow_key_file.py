"""The IndexNow key file, through every adapter: served like the documents (validators,
304, HEAD), at ``/{key}.txt`` or ``indexnow.key_location``; bad keys refused at
construction."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import ConfigurationError, IndexNowSettings, Settings
from sitemap_middleware.core.http import parse_http_date

from ...adapters import call

BASE = "https://example.com/"
SOURCES = {"pages": ["/a", "/b"]}
keys = st.from_regex(r"[A-Za-z0-9-]{8,128}", fullmatch=True)


@pytest.mark.anyio
async def test_the_key_file_is_served_with_validators_and_304(
    make_app: Callable[..., Any],
) -> None:
    key = "0123abcd-Key"
    app = make_app(sources=SOURCES, base_url=BASE, indexnow=IndexNowSettings(key=key))
    response = await call(app, path=f"/{key}.txt")
    assert response.status == 200
    assert response.body == key.encode()
    headers = response.headers
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["content-length"] == str(len(key))
    assert headers["etag"].startswith('"')  # strong: one representation
    assert parse_http_date(headers["last-modified"]) is not None
    for conditional in (
        {"if-none-match": headers["etag"]},
        {"if-modified-since": headers["last-modified"]},
    ):
        again = await call(app, path=f"/{key}.txt", headers=conditional)
        assert again.status == 304
        assert again.body == b""
        assert again.headers["etag"] == headers["etag"]
    changed = await call(app, path=f"/{key}.txt", headers={"if-none-match": '"other"'})
    assert changed.status == 200
    head = await call(app, "HEAD", path=f"/{key}.txt")
    assert (head.status, head.body, head.headers["etag"]) == (200, b"", headers["etag"])
    assert (await call(app, "POST", path=f"/{key}.txt")).status == 405
    # Another key's file is not ours; nor is the key file without IndexNow.
    assert (await call(app, path="/0123abcd-Other.txt")).status == 404
    plain = make_app(sources=SOURCES, base_url=BASE)
    assert (await call(plain, path=f"/{key}.txt")).status == 404


@pytest.mark.anyio
async def test_a_key_location_of_the_application_s_choosing(
    make_app: Callable[..., Any],
) -> None:
    key = "abcdefgh"
    app = make_app(
        sources=SOURCES,
        base_url=BASE,
        indexnow=IndexNowSettings(key=key, key_location="/indexnow.txt"),
    )
    response = await call(app, path="/indexnow.txt")
    assert (response.status, response.body) == (200, b"abcdefgh")
    # The key may change under this URL: the entity tag follows it, no fixed date is sent.
    assert "last-modified" not in response.headers
    other = make_app(
        sources=SOURCES,
        base_url=BASE,
        indexnow=IndexNowSettings(key="ijklmnop", key_location="/indexnow.txt"),
    )
    assert (await call(other, path="/indexnow.txt")).headers["etag"] != response.headers["etag"]
    assert (await call(app, path=f"/{key}.txt")).status == 404


@given(keys)
def test_every_key_of_the_protocol_s_form_is_accepted(key: str) -> None:
    settings = Settings(base_url=BASE, indexnow=IndexNowSettings(key=key))
    assert settings.key_path == f"/{key}.txt"


@given(
    st.one_of(
        st.text(alphabet="abcXYZ019-", max_size=7),
        st.text(alphabet="abc", min_size=129, max_size=140),
        st.text(min_size=8, max_size=20).filter(
            lambda t: any(not (c.isascii() and (c.isalnum() or c == "-")) for c in t)
        ),
    )
)
def test_a_key_outside_the_protocol_s_form_is_a_configuration_error(key: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^indexnow\.key: "):
        Settings(base_url=BASE, indexnow=IndexNowSettings(key=key))


@pytest.mark.parametrize(
    ("options", "setting"),
    [
        # No IndexNow setting without the key: the key is what is missing.
        ({"indexnow": {"key_location": "/k.txt"}}, "indexnow.key"),
        ({"indexnow": {"key": "abcdefgh", "key_location": "/keys/k.txt"}}, "indexnow.key_location"),
        ({"indexnow": {"key": "abcdefgh", "key_location": "k.txt"}}, "indexnow.key_location"),
        ({"indexnow": {"key": "abcdefgh", "endpoint": "api.indexnow.org"}}, "indexnow.endpoint"),
        ({"indexnow": {"every": 60}}, "indexnow.key"),
        ({"indexnow": {"key": "abcdefgh", "every": 0}}, "indexnow.every"),
        ({"indexnow": {"key": 12345678}}, "indexnow.key"),
    ],
)
def test_wrong_indexnow_settings_name_the_setting(options: dict[str, Any], setting: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"^{re.escape(setting)}: "):
        Settings(base_url=BASE, **options)


def test_a_key_file_above_the_sitemap_vouches_for_it() -> None:
    settings = Settings(
        base_url=BASE,
        path="/blog/sitemap.xml",
        indexnow=IndexNowSettings(key="abcdefgh", key_location="/indexnow.txt"),
    )
    assert settings.key_path == "/indexnow.txt"
