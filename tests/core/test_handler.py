"""The handler (``handler.handle``) driven by hand: no adapter, no thread, no I/O.

Each test plays the adapter: it takes the effects the handler yields, sends back the
summaries and pages a source would have read (or throws the error a read would
have raised), and checks what the handler answers, that every slot it
took is given back, and what it logs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sitemap_middleware import Freshness, Limits, Load
from sitemap_middleware.core.dates import AsOf
from sitemap_middleware.core.effects import (
    Await,
    Effect,
    InBackground,
    ReadChanged,
    ReadPages,
    Summarize,
)
from sitemap_middleware.core.exchange import Head, UrlsetPlan
from sitemap_middleware.core.handler import Handling, Transfer, handle
from sitemap_middleware.core.http import format_http_date
from sitemap_middleware.core.sitemap import Request, Response, Sitemap
from sitemap_middleware.core.validators import Summary
from sitemap_middleware.output.entry import Batch, RawEntry
from sitemap_middleware.settings import make_settings
from sitemap_middleware.sources.base import ALL, CutPages, KeyRange, Page, SyncSource, page_keys

from ..clock import Clock, drive
from ..support import assert_valid_index, assert_valid_urlset

BASE = "https://example.com/"
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
LISTED_UNTIL = AsOf.at(NOW).listed_until
PAGE_SIZE = 10  # max_urls=10: ten rows a page
NEWEST = datetime(2024, 5, 1, tzinfo=UTC)


class Rows(SyncSource):
    """A source whose reads the test answers itself: the handler never calls it."""

    def __init__(
        self, name: str = "items", *, fixed_ranges: bool = True, live: bool = False
    ) -> None:
        self.name = name
        self.fixed_ranges = fixed_ranges
        self.live = self.tracks_changes = live

    def summarize(self, keys: KeyRange, as_of: AsOf) -> Summary:
        raise AssertionError("the handler reads nothing itself")

    def batches(self, keys: KeyRange, size: int) -> Iterator[Batch]:
        raise AssertionError("the handler reads nothing itself")


def sitemap(*sources: Rows, **options: Any) -> Sitemap:
    settings = {
        "base_url": BASE,
        "limits": Limits(max_urls=PAGE_SIZE),
        "freshness": Freshness(mode="exact"),
        **options,
    }
    return Sitemap(list(sources) or [Rows()], make_settings(settings))


def request(method: str = "GET", **headers: str) -> Request:
    return Request(method, {name.replace("_", "-"): [value] for name, value in headers.items()})


def start(
    site: Sitemap, path: str = "/sitemap.xml", method: str = "GET", **headers: str
) -> Handling:
    target = site.routes.match(path)
    assert target is not None
    return handle(site, request(method, **headers), target, NOW)


def first(handling: Handling) -> Effect | Response | Transfer:
    """The handler's first need, or its answer when it needs nothing."""
    try:
        return next(handling)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def send(handling: Handling, result: Any) -> Effect | Response | Transfer:
    """A read's result sent in: the handler's next effect, or its answer."""
    try:
        return handling.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def throw(handling: Handling, error: Exception) -> Effect | Response | Transfer:
    try:
        return handling.throw(error)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def summary(count: int, token: str = "v1", checksum: str | None = None) -> Summary:
    return Summary(NEWEST if count else None, count, token, LISTED_UNTIL, checksum=checksum)


def pages(count: int, page_size: int = PAGE_SIZE, cut: bool = False) -> list[Page]:
    """The pages of ``count`` rows keyed 0..count-1 (cut: each page ends at its last key)."""
    out = []
    for index in range(0, -(-count // page_size)):
        rows = min(page_size, count - index * page_size)
        last = ((index * page_size + rows - 1),) if cut else None
        out.append(Page(index, rows, NEWEST, last, checksum=f"c{index}"))
    return out


def rows(keys: range) -> Batch:
    entries: list[RawEntry] = [(k, f"/items/{k}", NEWEST, None, None) for k in keys]
    return Batch.of(entries)


def body_of(transfer: Transfer, batches: list[Batch]) -> bytes:
    """Stream a transfer as an adapter does, then close it."""
    chunks = []
    try:
        for batch in batches:
            chunk = transfer.feed(transfer.parts[0][0].name, batch)
            if chunk:
                assert transfer.start() is not None or chunks
                chunks.append(chunk)
        transfer.start()
        end = transfer.finish()
        assert not isinstance(end, Response)
        chunks.extend(end)
    finally:
        transfer.close()
    return b"".join(chunks)


def header(response: Response | Head, name: str) -> str | None:
    return next((value for key, value in response.headers if key == name), None)


# --- 404, 405, 503 -------------------------------------------------------------------------


def test_an_empty_source_is_404_and_takes_no_slot() -> None:
    site = sitemap()
    handling = start(site)
    effect = first(handling)
    assert isinstance(effect, Summarize) and effect.parts == ((site.sources[0], ALL),)
    assert effect.as_of == AsOf(UTC, LISTED_UNTIL)
    answered = send(handling, [summary(0)])
    assert isinstance(answered, Response) and answered.status == 404
    assert site.slots.running == 0


def test_a_page_past_the_data_and_a_stranger_are_404_without_a_read() -> None:
    site = sitemap()
    for path in ("/sitemap-nope-1.xml", "/sitemap-items-0.xml"):
        answered = first(start(site, path))
        assert isinstance(answered, Response) and answered.status == 404, path


def test_other_methods_are_405_before_anything_is_read() -> None:
    answered = first(start(sitemap(), method="POST"))
    assert isinstance(answered, Response) and answered.status == 405
    assert header(answered, "allow") == "GET, HEAD"


def test_a_failed_summary_is_503_logged_once_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    site = sitemap()
    with caplog.at_level(logging.ERROR, "sitemap_middleware"):
        handling = start(site)
        assert isinstance(first(handling), Summarize)
        answered = throw(handling, OSError("database is down"))
    assert isinstance(answered, Response) and answered.status == 503
    assert header(answered, "retry-after") == "120"
    assert answered.body == b"Sitemap temporarily unavailable\n"
    (record,) = caplog.records
    assert "sitemap /sitemap.xml" in record.getMessage() and record.exc_info is not None
    assert site.slots.running == 0


def test_a_failed_read_of_the_index_pages_is_503_and_gives_its_slot_back() -> None:
    site = sitemap()
    handling = start(site)
    first(handling)
    effect = send(handling, [summary(25)])  # 25 rows: three pages, an index
    assert isinstance(effect, ReadPages) and effect.page_size == PAGE_SIZE
    assert site.slots.running == 1  # the index is being generated
    answered = throw(handling, OSError("gone"))
    assert isinstance(answered, Response) and answered.status == 503
    assert site.slots.running == 0


def test_a_busy_sitemap_is_503_and_keeps_the_slots_it_does_not_own() -> None:
    site = sitemap(load=Load(max_generations=1, retry_after=7))
    held = site.slots.acquire()
    assert held is not None
    handling = start(site, "/sitemap-items-1.xml")
    assert isinstance(first(handling), Summarize)
    answered = send(handling, [summary(3)])
    assert isinstance(answered, Response) and answered.status == 503
    assert header(answered, "retry-after") == "7"
    assert site.slots.running == 1
    held.release()
    assert site.slots.running == 0


# --- 304, HEAD, the transfer -------------------------------------------------------------


def test_a_page_is_a_transfer_that_holds_its_slot_until_closed(
    sitemap_schema: Any,
) -> None:
    site = sitemap()
    handling = start(site, "/sitemap-items-2.xml")
    effect = first(handling)
    assert isinstance(effect, Summarize)
    assert effect.parts == ((site.sources[0], page_keys(2, PAGE_SIZE)),)
    transfer = send(handling, [summary(5)])
    assert isinstance(transfer, Transfer)
    assert transfer.plan.head.status == 200 and transfer.parts == effect.parts
    assert site.slots.running == 1
    body = body_of(transfer, [rows(range(10, 13)), rows(range(13, 15))])
    assert len(assert_valid_urlset(body, sitemap_schema)) == 5
    assert site.slots.running == 0


def test_a_matching_if_none_match_is_304_and_head_is_bodiless_without_a_slot() -> None:
    site = sitemap()
    handling = start(site)
    first(handling)
    transfer = send(handling, [summary(3)])
    assert isinstance(transfer, Transfer)
    etag = header(transfer.plan.head, "etag")
    transfer.close()
    assert etag is not None and etag.startswith('W/"')

    handling = start(site, if_none_match=etag)
    first(handling)
    answered = send(handling, [summary(3)])
    assert isinstance(answered, Response) and answered.status == 304
    assert header(answered, "etag") == etag and answered.body == b""

    changed = start(site, if_none_match=etag)
    first(changed)
    other = send(changed, [summary(3, token="v2")])
    assert isinstance(other, Transfer) and header(other.plan.head, "etag") != etag
    other.close()

    head = start(site, method="HEAD")
    first(head)
    answered = send(head, [summary(3)])
    # A Response is complete (no body left to stream).
    assert isinstance(answered, Response) and answered.status == 200
    assert header(answered, "etag") == etag
    assert site.slots.running == 0


def test_a_transfer_that_fails_before_its_first_byte_is_503_and_closes() -> None:
    site = sitemap()
    handling = start(site)
    first(handling)
    transfer = send(handling, [summary(3)])
    assert isinstance(transfer, Transfer)
    answered = transfer.failed(OSError("cursor lost"))
    assert answered.status == 503
    transfer.close()
    assert site.slots.running == 0


def test_a_transfer_whose_every_row_was_rejected_is_404() -> None:
    site = sitemap()
    handling = start(site)
    first(handling)
    transfer = send(handling, [summary(2)])
    assert isinstance(transfer, Transfer)
    transfer.feed("items", Batch.of([(0, "//elsewhere/x", None, None, None)]))
    end = transfer.finish()
    transfer.close()
    assert isinstance(end, Response) and end.status == 404
    assert site.slots.running == 0


def test_the_index_reads_the_pages_once_and_is_answered_whole() -> None:
    site = sitemap()
    handling = start(site)
    first(handling)
    effect = send(handling, [summary(25)])
    assert isinstance(effect, ReadPages) and effect.as_of == AsOf(UTC, LISTED_UNTIL)
    index = send(handling, pages(25))
    assert isinstance(index, Response) and index.status == 200  # complete
    listed = assert_valid_index(index.body)
    assert [loc for loc, _ in listed] == [
        f"https://example.com/sitemap-items-{n}.xml" for n in (1, 2, 3)
    ]
    assert site.slots.running == 0

    again = start(site)  # the same data: its pages are known
    first(again)
    same = send(again, [summary(25)])
    assert isinstance(same, Response) and same.body == index.body


# --- pages cut at their keys ---------------------------------------------------------------


def test_cut_pages_make_the_flow_read_the_cuts_then_plan_the_page() -> None:
    site = sitemap()
    source = site.sources[0]
    handling = start(site, "/sitemap-items-2.xml")
    assert isinstance(first(handling), Summarize)
    effect = throw(handling, CutPages())  # the data holds a key below 0
    assert isinstance(effect, Summarize) and effect.parts == ((source, ALL),)
    effect = send(handling, [summary(25)])
    assert isinstance(effect, ReadPages) and effect.source is source
    transfer = send(handling, pages(25, cut=True))
    assert isinstance(transfer, Transfer)
    assert transfer.parts == ((source, KeyRange((9,), (19,))),)
    transfer.close()
    assert site.slots.running == 0


def test_a_failed_read_of_the_cuts_is_503() -> None:
    site = sitemap()
    handling = start(site, "/sitemap-items-1.xml")
    first(handling)
    assert isinstance(throw(handling, CutPages()), Summarize)
    answered = throw(handling, OSError("gone"))
    assert isinstance(answered, Response) and answered.status == 503
    assert site.slots.running == 0


def test_a_source_of_cuts_reads_them_before_any_page_summary() -> None:
    source = Rows("notes", fixed_ranges=False)
    site = sitemap(source)
    handling = start(site, "/sitemap-notes-3.xml")
    effect = first(handling)
    assert isinstance(effect, Summarize) and effect.parts == ((source, ALL),)
    assert isinstance(send(handling, [summary(25)]), ReadPages)
    transfer = send(handling, pages(25, cut=True))  # the page's summary comes from its cut
    assert isinstance(transfer, Transfer)
    assert transfer.parts == ((source, KeyRange((19,), (24,))),)
    transfer.close()

    past = start(site, "/sitemap-notes-4.xml")
    assert isinstance(first(past), Summarize)
    answered = send(past, [summary(25)])  # the same data: its cuts are not read again
    assert isinstance(answered, Response) and answered.status == 404


def test_the_html_view_of_a_page_reads_its_neighbours_and_gives_its_slot_back() -> None:
    site = sitemap(html=True)
    handling = start(site, "/sitemap-items-1.html")
    first(handling)
    effect = send(handling, [summary(4)])
    assert isinstance(effect, Summarize) and effect.parts == ((site.sources[0], ALL),)
    assert site.slots.running == 1
    answered = throw(handling, OSError("gone"))
    assert isinstance(answered, Response) and answered.status == 503
    assert site.slots.running == 0


# --- pages kept current (freshness="incremental") -------------------------------------------


def live_sitemap(clock: Clock | None = None, **freshness: Any) -> Sitemap:
    """A live source on a controlled clock, with ``freshness`` (the fields of
    :class:`Freshness`); read exactly only when ``exact_rows`` says so."""
    site = sitemap(
        Rows(live=True),
        freshness=Freshness(mode="incremental", **{"exact_rows": 0, **freshness}),
    )
    drive(site, clock or Clock())
    return site


def effects_until_response(
    handling: Handling, results: dict[type, Any]
) -> tuple[list[Effect], Any]:
    """Answer each effect by its kind; a background job is left unstarted and recorded."""
    seen: list[Effect] = []
    step = first(handling)
    while isinstance(step, Summarize | ReadPages | ReadChanged | InBackground | Await):
        seen.append(step)
        step = send(handling, results.get(type(step)))
    return seen, step


def test_a_live_page_before_the_first_index_is_summarized_exactly() -> None:
    site = live_sitemap(refresh_interval=3600)
    source = site.sources[0]
    handling = start(site, "/sitemap-items-1.xml")
    effect = first(handling)
    assert isinstance(effect, InBackground)  # the first recount starts, in the background
    recount = effect.job
    effect = send(handling, None)
    assert isinstance(effect, Summarize) and effect.parts == ((source, page_keys(1, PAGE_SIZE)),)
    transfer = send(handling, [summary(10, checksum="c0")])
    assert isinstance(transfer, Transfer)
    exact = header(transfer.plan.head, "etag")
    transfer.close()

    # The recount is a flow of its own: the rows that moved lately, then every page.
    assert isinstance(next(recount), ReadChanged)
    assert isinstance(recount.send([]), ReadPages)
    with pytest.raises(StopIteration):
        recount.send(pages(25))

    revalidated = first(start(site, "/sitemap-items-1.xml", if_none_match=exact))
    assert isinstance(revalidated, Response) and revalidated.status == 304  # nothing read
    kept = start(site, "/sitemap-items-1.xml")
    effect = first(kept)  # a 200 streams rows read now: their aggregates are read first
    assert isinstance(effect, Summarize) and effect.parts == ((source, page_keys(1, PAGE_SIZE)),)
    transfer = send(kept, [summary(10, checksum="c0")])
    assert isinstance(transfer, Transfer)
    assert header(transfer.plan.head, "etag") == exact  # the same rows, the same tag
    transfer.close()
    index = first(start(site))
    assert isinstance(index, Response) and len(assert_valid_index(index.body)) == 3
    assert site.slots.running == 0


def test_the_first_index_of_a_live_source_reads_it_whole_then_starts_a_refresh() -> None:
    site = live_sitemap(refresh_interval=0, recount_interval=3600)
    source = site.sources[0]
    handling = start(site)
    effect = first(handling)
    assert isinstance(effect, ReadChanged) and effect.source is source
    assert effect.since == NOW - timedelta(seconds=60) and effect.as_of == AsOf(UTC, LISTED_UNTIL)
    effect = send(handling, [])
    assert isinstance(effect, ReadPages) and effect.source is source
    effect = send(handling, pages(25))
    assert isinstance(effect, InBackground)  # refresh_interval=0: a refresh is due at once
    refresh = effect.job
    answered = send(handling, None)
    assert isinstance(answered, Response) and answered.status == 200
    assert len(assert_valid_index(answered.body)) == 3

    # The background job is a flow of its own: a refresh reads the rows that moved.
    moved = next(refresh)
    assert isinstance(moved, ReadChanged) and moved.source is source
    touched = refresh.send([(12, NEWEST + timedelta(days=1))])
    assert isinstance(touched, Summarize)
    assert touched.parts == ((source, page_keys(2, PAGE_SIZE)),)
    with pytest.raises(StopIteration):
        refresh.send([summary(10, checksum="c1-edited")])

    again = start(site)
    seen, answered = effects_until_response(again, {})
    assert all(isinstance(n, InBackground) for n in seen)  # only, maybe, the next refresh
    assert isinstance(answered, Response) and answered.status == 200
    assert answered.body != b""
    for effect in seen:
        assert isinstance(effect, InBackground)
        effect.job.close()


def _first_index(site: Sitemap, rows: int = 25) -> str:
    """The first index of a live source: it reads the pages whole before answering."""
    handling = start(site)
    assert isinstance(first(handling), ReadChanged)
    assert isinstance(send(handling, []), ReadPages)
    answered = send(handling, pages(rows))
    while isinstance(answered, InBackground):  # a refresh due at once, left unstarted
        answered.job.close()
        answered = send(handling, None)
    assert isinstance(answered, Response) and answered.status == 200
    tag = header(answered, "etag")
    assert tag is not None
    return tag


def test_a_lone_index_after_a_silence_reads_what_moved_before_answering() -> None:
    """Requests that come often start refreshes in the background and never wait; the first
    request after a silence longer than the refresh bound reads the moved rows first."""
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=7200)
    source = site.sources[0]
    tag = _first_index(site)
    clock.advance(1.5)  # a refresh is due, within its bound: started in the background
    seen, answered = effects_until_response(start(site, if_none_match=tag), {})
    assert [type(effect) for effect in seen] == [InBackground]
    assert isinstance(answered, Response) and answered.status == 304
    for effect in seen:
        assert isinstance(effect, InBackground)
        effect.job.close()
    clock.advance(3600)  # an hour of silence: the pages lag past R = 2 s
    handling = start(site, if_none_match=tag)
    moved = first(handling)
    assert isinstance(moved, ReadChanged)
    touched = send(handling, [(12, NEWEST + timedelta(days=1))])
    assert isinstance(touched, Summarize) and touched.parts == ((source, page_keys(2, PAGE_SIZE)),)
    answered = send(handling, [summary(10, checksum="c1-edited")])
    assert isinstance(answered, Response) and answered.status == 200
    assert header(answered, "etag") != tag
    live = site.current_pages["items"]
    assert live.refreshed_at == clock.now and live.recounted_at < clock.now


def test_a_lone_index_past_the_recount_bound_recounts_before_answering() -> None:
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=60)
    tag = _first_index(site)
    clock.advance(121)  # past C = 2 x 60 s: a delete must show
    handling = start(site, if_none_match=tag)
    assert isinstance(first(handling), ReadChanged)
    assert isinstance(send(handling, []), ReadPages)
    answered = send(handling, pages(24))
    assert isinstance(answered, Response) and answered.status == 200
    assert header(answered, "etag") != tag
    assert len(assert_valid_index(answered.body)) == 3


def test_an_overdue_read_that_fails_is_503_not_the_old_pages() -> None:
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=7200)
    tag = _first_index(site)
    clock.advance(3600)
    handling = start(site, if_none_match=tag)
    assert isinstance(first(handling), ReadChanged)
    answered = throw(handling, OSError("database down"))
    assert isinstance(answered, Response) and answered.status == 503
    assert site.current_pages["items"].retry_at == float("-inf")  # the next request reads again


def test_a_page_past_its_bound_reads_its_own_aggregates_and_starts_the_job() -> None:
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=7200)
    source = site.sources[0]
    _first_index(site)
    page = start(site, "/sitemap-items-2.xml")
    effect = first(page)
    assert isinstance(effect, Summarize)  # a 200: its own rows' aggregates
    transfer = send(page, [summary(10, checksum="c1")])
    assert isinstance(transfer, Transfer)
    tag = header(transfer.plan.head, "etag")
    transfer.close()
    assert tag is not None
    assert first(start(site, "/sitemap-items-2.xml", if_none_match=tag)).status == 304  # type: ignore[union-attr]
    clock.advance(3600)
    handling = start(site, "/sitemap-items-2.xml", if_none_match=tag)
    job = first(handling)
    assert isinstance(job, InBackground)  # the refresh, for the next index
    job.job.close()
    effect = send(handling, None)
    assert isinstance(effect, Summarize) and effect.parts == ((source, page_keys(2, PAGE_SIZE)),)
    answered = send(handling, [summary(9, checksum="c1-deleted")])
    assert isinstance(answered, Transfer)  # the page changed: no 304 from the old pages
    assert header(answered.plan.head, "etag") != tag
    answered.close()


def test_a_small_source_is_read_on_every_request() -> None:
    """At most ``exact_rows`` rows: every index recounts, every page reads its aggregates,
    with the tokens the pages kept current give; nothing runs in the background."""
    clock = Clock()
    site = live_sitemap(clock, exact_rows=25, refresh_interval=3600)
    _first_index(site)
    for rows in (25, 24):
        handling = start(site)
        assert isinstance(first(handling), ReadPages)  # one statement: no refresh follows
        answered = send(handling, pages(rows))
        assert isinstance(answered, Response) and answered.status == 200
        assert len(assert_valid_index(answered.body)) == 3
    live = site.current_pages["items"]
    assert live.recounts == 3 and not live.running
    page = start(site, "/sitemap-items-3.xml")
    assert isinstance(first(page), Summarize)
    transfer = send(page, [summary(4, checksum="c2")])
    assert isinstance(transfer, Transfer)
    tag = header(transfer.plan.head, "etag")
    transfer.close()
    big = live_sitemap(Clock(), exact_rows=0)
    _first_index(big, rows=24)
    kept = first(start(big, "/sitemap-items-3.xml", if_none_match=tag or ""))
    assert isinstance(kept, Response) and kept.status == 304  # the same token either way


def test_a_job_that_started_earlier_never_moves_the_pages_back() -> None:
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=7200)
    tag = _first_index(site)
    live = site.current_pages["items"]
    clock.advance(1.5)
    early = site.keep_current(live, NOW, recount=True)  # a recount starts, and is slow
    assert isinstance(next(early), ReadChanged)
    assert isinstance(early.send([]), ReadPages)
    clock.advance(3600)
    handling = start(site)  # a later request reads the moved rows itself
    assert isinstance(first(handling), ReadChanged)
    assert isinstance(send(handling, [(3, NEWEST + timedelta(days=1))]), Summarize)
    answered = send(handling, [summary(10, checksum="c0-edited")])
    assert isinstance(answered, Response) and answered.status == 200
    moved = header(answered, "etag")
    assert moved != tag
    with pytest.raises(StopIteration):
        early.send(pages(25))  # the old recount ends last: its pages are older
    _, again = effects_until_response(start(site), {})
    assert isinstance(again, Response) and header(again, "etag") == moved


def test_a_request_past_its_bound_waits_for_the_job_running_in_the_background() -> None:
    """Busy sites never read twice: a job running since recently enough brings the pages
    within their bound, and a request that finds them past it waits for that job."""
    clock = Clock()
    site = live_sitemap(clock, refresh_interval=1, recount_interval=7200)
    tag = _first_index(site)
    live = site.current_pages["items"]
    clock.advance(1.5)
    handling = start(site, if_none_match=tag)
    job = first(handling)
    assert isinstance(job, InBackground) and live.running  # the refresh, not yet run
    assert isinstance(send(handling, None), Response)
    clock.advance(1.0)  # the pages are past R = 2 s; the refresh started 1 s ago
    handling = start(site, if_none_match=tag)
    wait = first(handling)
    assert isinstance(wait, Await) and not wait.done.is_set()
    refresh = job.job
    assert isinstance(next(refresh), ReadChanged)
    assert isinstance(refresh.send([(3, NEWEST + timedelta(days=1))]), Summarize)
    with pytest.raises(StopIteration):
        refresh.send([summary(10, checksum="c0-edited")])
    assert wait.done.is_set() and not live.running
    answered = send(handling, True)  # it ended: no read of this request's own
    while isinstance(answered, InBackground):  # the next refresh, left unstarted
        answered.job.close()
        answered = send(handling, None)
    assert isinstance(answered, Response) and answered.status == 200
    assert header(answered, "etag") != tag


def test_the_root_urlset_of_a_big_source_takes_the_validators_of_the_rows_it_streams() -> None:
    """One page at the root (``index="auto"``): its 200 reads the summary of the rows it
    streams before its head (one statement, as a page's 200 does); its 304s answer with the
    summary last read while the pages kept current have not moved, reading nothing, so they
    carry the entity tag its 200 sent (one tag for the same rows)."""
    site = live_sitemap(Clock(), refresh_interval=3600, recount_interval=7200)
    handling = start(site)
    assert isinstance(first(handling), ReadChanged)  # the first recount, inline
    assert isinstance(send(handling, []), ReadPages)
    assert isinstance(send(handling, pages(5)), Summarize)  # the rows it streams, exactly
    transfer = send(handling, [summary(5, token="v1", checksum="c")])
    assert isinstance(transfer, Transfer) and isinstance(transfer.plan, UrlsetPlan)
    tag = header(transfer.plan.head, "etag") or ""
    transfer.close()
    for condition in ({"if_none_match": tag}, {"if_modified_since": format_http_date(NEWEST)}):
        unchanged = first(start(site, **condition))
        assert isinstance(unchanged, Response) and unchanged.status == 304
        assert header(unchanged, "etag") == tag  # the tag a 200 sends, by either condition
    edited = start(site)  # a 200 reads its rows' summary again: an edit shows at once
    assert isinstance(first(edited), Summarize)
    streamed = send(edited, [summary(5, token="v2", checksum="c-edited")])
    assert isinstance(streamed, Transfer)
    edited_tag = header(streamed.plan.head, "etag") or ""
    assert edited_tag != tag
    streamed.close()
    stale = start(site, if_none_match=tag)  # the old tag no longer matches: a 200
    assert isinstance(first(stale), Summarize)
    again_edited = send(stale, [summary(5, token="v2", checksum="c-edited")])
    assert isinstance(again_edited, Transfer)
    assert header(again_edited.plan.head, "etag") == edited_tag
    again_edited.close()
    current = first(start(site, if_none_match=edited_tag))
    assert isinstance(current, Response) and current.status == 304
    # The pages kept current move (a refresh read a change): the summary last read may
    # have missed it, so a revalidation reads it once more, then answers from it again.
    (live,) = site.current_pages.values()
    moved_pages = [replace(page, checksum="moved") for page in pages(5)]
    live.recounted((moved_pages, None), LISTED_UNTIL, NOW, live.clock())
    moved = start(site, if_none_match=edited_tag)
    assert isinstance(first(moved), Summarize)
    answered = send(moved, [summary(5, token="v3", checksum="c-moved")])
    assert isinstance(answered, Transfer)
    moved_tag = header(answered.plan.head, "etag") or ""
    assert moved_tag != edited_tag
    answered.close()
    current = first(start(site, if_none_match=moved_tag))
    assert isinstance(current, Response) and current.status == 304
