"""Deterministic gzip (``encoding.py``): the same chunks give the same bytes everywhere, each
chunk can be inflated on arrival, and a stream aborted is never a valid file."""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.output.gzip import GzipStream, gzip_whole

chunks = st.lists(st.binary(max_size=3000), max_size=8)


def streamed(parts: list[bytes], level: int = 6) -> list[bytes]:
    stream = GzipStream(level)
    return [stream.chunk(part) for part in parts] + [stream.finish()]


@given(chunks)
def test_the_same_chunks_give_the_same_bytes(parts: list[bytes]) -> None:
    assert streamed(parts) == streamed(parts)
    assert gzip.decompress(b"".join(streamed(parts))) == b"".join(parts)


def test_the_header_holds_no_time_and_no_file_name() -> None:
    data = gzip_whole(b"<urlset/>")
    assert data[:3] == b"\x1f\x8b\x08"  # gzip, deflate
    assert data[3] == 0  # no FNAME, FCOMMENT, FEXTRA flags
    assert data[4:8] == b"\x00\x00\x00\x00"  # MTIME: none
    assert gzip.decompress(data) == b"<urlset/>"


@given(chunks)
def test_each_chunk_inflates_on_arrival(parts: list[bytes]) -> None:
    stream = GzipStream()
    reader = zlib.decompressobj(31)
    for part in parts:
        assert reader.decompress(stream.chunk(part)) == part  # sync-flushed: nothing held back
    assert reader.decompress(stream.finish()) == b"" and reader.eof


def test_a_stream_cut_short_is_not_a_valid_file() -> None:
    stream = GzipStream()
    cut = stream.chunk(b"<urlset>") + stream.chunk(b"<url/>")
    with pytest.raises(EOFError):
        gzip.decompress(cut)


@pytest.mark.parametrize("level", [1, 6, 9])
def test_gzip_whole_is_one_finished_stream(level: int) -> None:
    data = b"<url><loc>https://example.com/a</loc></url>\n" * 500
    whole = gzip_whole(data, level)
    assert whole == GzipStream(level).finish(data)
    assert gzip.decompress(whole) == data
    assert (level == 1) == (len(whole) > len(gzip_whole(data, 9)))
