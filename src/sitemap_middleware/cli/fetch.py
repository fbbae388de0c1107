"""HTTP as a crawler does it: one request, the body as received, then gzip undone by hand.

The body is read raw (``Content-Encoding`` left in place) so ``check`` can see
how the server coded it, and both gzip layers are undone here with a bound on
the inflated size: ``Content-Encoding: gzip`` first, then a gzip *file*
(``.xml.gz``, recognised by its magic bytes), as crawler-commons does.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import httpx

from .findings import Findings
from .headers import content_codings


class NetworkError(RuntimeError):
    """No answer: connection refused, name not found, timeout."""


@dataclass
class Exchange:
    """One request and its answer as received."""

    method: str
    url: str
    status: int
    headers: httpx.Headers
    raw: bytes = b""
    complete: bool = True
    """False when the transfer broke off (an aborted chunked body)."""
    over_limit: bool = False
    """True when reading stopped at the limit: the body is longer."""
    failure: str | None = None

    @property
    def length(self) -> int | None:
        """The content's length as sent, when the whole of it was read."""
        return len(self.raw) if self.complete and not self.over_limit else None


async def request(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: dict[str, str],
    read_limit: int | None = None,
) -> Exchange:
    """Send one request; read up to ``read_limit`` body bytes (None: read no body)."""
    try:
        async with client.stream(method, url, headers=headers) as response:
            exchange = Exchange(method, url, response.status_code, response.headers)
            if read_limit is None:
                return exchange
            raw = bytearray()
            try:
                async for chunk in response.aiter_raw():
                    raw += chunk
                    if len(raw) > read_limit:
                        exchange.over_limit = True
                        break
            except httpx.RemoteProtocolError as exc:
                # The status line came; the body did not end properly: a broken transfer.
                exchange.complete = False
                exchange.failure = str(exc)
            exchange.raw = bytes(raw)
            return exchange
    except httpx.TransportError as exc:
        raise NetworkError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc


class TooLarge(ValueError):
    """Inflating passed the byte limit."""


def gunzip(data: bytes, limit: int) -> bytes:
    """Inflate a gzip stream (every member), refusing to produce more than ``limit`` bytes."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
            while inflater.unconsumed_tail and len(out) <= limit:
                out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        except zlib.error as exc:
            raise ValueError(f"not valid gzip: {exc}") from None
        if len(out) > limit:
            raise TooLarge(f"more than {limit:,} bytes once inflated")
        if not inflater.eof:
            raise ValueError("gzip stream is truncated")
        data = inflater.unused_data
    return bytes(out)


def inflate_prefix(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes (at most) a gzip stream's start inflates to: the readable
    part of a body read only in part; nothing when it is not gzip."""
    try:
        return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(data, limit)
    except zlib.error:
        return b""


def is_gzip(data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b"


def decode(exchange: Exchange, limit: int, findings: Findings) -> tuple[bytes | None, list[str]]:
    """The document's XML bytes and the codings undone; None when they cannot be had."""
    if exchange.over_limit:
        findings.add(
            "limit.bytes",
            f"more than {limit:,} bytes; not checked further",
            f"read {len(exchange.raw):,} bytes before stopping",
        )
        return None, []
    body = exchange.raw
    undone: list[str] = []
    codings = content_codings(exchange.headers)
    try:
        for coding in reversed(codings):
            if coding not in ("gzip", "x-gzip"):
                findings.add(
                    "http.content-encoding",
                    "Content-Encoding other than the gzip the request accepted",
                    coding,
                )
                return None, undone
            body = gunzip(body, limit)
            undone.append("content-encoding gzip")
        if is_gzip(body):
            body = gunzip(body, limit)
            undone.append("gzip file")
    except TooLarge as exc:
        findings.add("limit.bytes", f"more than {limit:,} bytes once inflated", str(exc))
        return None, undone
    except ValueError as exc:
        findings.add("gzip.invalid", "the gzip data cannot be inflated", str(exc))
        return None, undone
    return body, undone
