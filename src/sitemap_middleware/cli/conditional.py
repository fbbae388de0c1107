"""Probes of the HTTP behaviour a crawler relies on, after a first 200 (RFC 9110).

* ``If-None-Match`` with the ETag gets 304, no content, the 200's ETag, Vary,
  Cache-Control, Expires and Content-Location (§15.4.5), and Last-Modified
  unchanged if sent;
* ``If-Modified-Since`` with the Last-Modified gets 304 likewise;
* ``If-None-Match`` takes precedence: a tag that does not match, with a
  matching ``If-Modified-Since``, gets 200 (§13.1.3: If-Modified-Since is then
  ignored; Starlette's StaticFiles got this wrong until 0.49.2);
* ``HEAD`` gets GET's status and representation headers without content (§9.3.2):
  ``Content-Type``, ``Content-Encoding``, ``ETag``, ``Last-Modified``, ``Vary``,
  ``Cache-Control``, and ``Content-Length`` when both send it;
* when the answer depends on ``Accept-Encoding``, ``Vary`` says so (§12.5.5), and
  gzip goes only to clients that accept it;
* no answer repeats a singleton field (:func:`.headers.check_singletons`).
"""

from __future__ import annotations

import httpx

from .fetch import Exchange, request
from .findings import Findings
from .headers import check_singletons, content_codings, varies_by_encoding, wants_gzip_file

MISMATCH_TAG = '"sitemap-middleware-check-no-such-tag"'
REPEATED_ON_304 = ("etag", "vary", "cache-control", "expires", "content-location")
# The headers that describe the representation (RFC 9110 §9.3.2: HEAD sends those GET
# would); others (Date, Server, a proxy's X-Cache or Age, ...) may differ between answers.
REPRESENTATION = (
    "content-type",
    "content-encoding",
    "etag",
    "last-modified",
    "vary",
    "cache-control",
)


async def probe(
    client: httpx.AsyncClient,
    url: str,
    first: Exchange,
    accept_encoding: str,
    findings: Findings,
) -> None:
    """Probe ``url``, whose first GET (with ``accept_encoding``) gave ``first``."""
    asked = {"accept-encoding": accept_encoding}

    async def send(method: str, headers: dict[str, str], name: str) -> Exchange:
        answer = await request(client, method, url, headers)
        check_singletons(answer.headers, findings, f"{name} ({answer.status})")
        return answer

    if not wants_gzip_file(url, first.headers):
        plain = await send("GET", {"accept-encoding": "identity"}, "GET identity")
        _vary(first, plain, findings)
    etag = first.headers.get("etag")
    last_modified = first.headers.get("last-modified")
    if etag:
        answer = await send("GET", {**asked, "if-none-match": etag}, "If-None-Match")
        _not_modified(answer, first, "conditional.if-none-match", "If-None-Match", findings)
    if last_modified:
        answer = await send(
            "GET", {**asked, "if-modified-since": last_modified}, "If-Modified-Since"
        )
        _not_modified(answer, first, "conditional.if-modified-since", "If-Modified-Since", findings)
        answer = await send(
            "GET",
            {**asked, "if-none-match": MISMATCH_TAG, "if-modified-since": last_modified},
            "If-None-Match mismatch",
        )
        if answer.status != 200:
            findings.add(
                "conditional.precedence",
                "If-Modified-Since was honoured although If-None-Match was present and did not "
                "match; If-None-Match takes precedence (RFC 9110 §13.1.3), so the answer must "
                "be 200",
                f"got {answer.status}",
            )
    head = await send("HEAD", asked, "HEAD")
    _same_as_get(head, first, findings)


def _vary(coded: Exchange, plain: Exchange, findings: Findings) -> None:
    if content_codings(plain.headers):
        findings.add(
            "http.content-encoding",
            "a client sending Accept-Encoding: identity got a coded body",
            ", ".join(content_codings(plain.headers)),
        )
    if content_codings(coded.headers) == content_codings(plain.headers):
        return
    for exchange, asked in ((coded, "gzip"), (plain, "identity")):
        if not varies_by_encoding(exchange.headers):
            findings.add(
                "http.vary",
                "the body depends on Accept-Encoding, so every answer must send "
                "Vary: Accept-Encoding",
                f"missing on the answer to Accept-Encoding: {asked}",
            )


def _not_modified(
    answer: Exchange, first: Exchange, code: str, condition: str, findings: Findings
) -> None:
    if answer.status != 304:
        findings.add(
            code,
            f"a GET with {condition} of the current validator must get 304 Not Modified",
            f"got {answer.status}",
        )
        return
    for name in REPEATED_ON_304:
        sent = first.headers.get(name)
        if sent is not None and answer.headers.get(name) != sent:
            findings.add(
                "conditional.304-headers",
                "a 304 must repeat the 200's ETag, Vary, Cache-Control, Expires and "
                "Content-Location",
                f"{condition}: {name} {answer.headers.get(name)!r} instead of {sent!r}",
            )
    again = answer.headers.get("last-modified")
    if again is not None and again != first.headers.get("last-modified"):
        findings.add(
            "conditional.304-headers",
            "a 304 must not change Last-Modified",
            f"{condition}: {again!r} instead of {first.headers.get('last-modified')!r}",
        )
    length = answer.headers.get("content-length")
    if "transfer-encoding" in answer.headers or length not in (None, "0", str(first.length)):
        findings.add(
            "conditional.304-body",
            "a 304 has no content (no Transfer-Encoding, no Content-Length but the 200's)",
            f"{condition}: content-length {length}, "
            f"transfer-encoding {answer.headers.get('transfer-encoding')}",
        )


def _same_as_get(head: Exchange, first: Exchange, findings: Findings) -> None:
    if head.status != first.status:
        findings.add(
            "conditional.head", "HEAD must answer as GET does", f"status {head.status}, GET 200"
        )
        return
    for name in REPRESENTATION:
        if head.headers.get_list(name) != first.headers.get_list(name):
            findings.add(
                "conditional.head",
                "HEAD must send the representation headers GET sends",
                f"{name}: {head.headers.get(name)!r}, GET {first.headers.get(name)!r}",
            )
    length = head.headers.get("content-length")
    if length is None:
        return
    sent = first.headers.get("content-length")
    expected = sent if sent is not None else None if first.length is None else str(first.length)
    if expected is not None and length != expected:
        findings.add(
            "conditional.head",
            "HEAD's Content-Length must be the length of GET's content",
            f"{length}, GET {expected}",
        )
