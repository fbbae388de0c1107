"""The steps of answering one sitemap request, written once for every adapter.

:func:`handle` is a generator. It yields what it needs read from the sources
(:class:`Summarize`, :class:`ReadPages`) and gets the result, or the exception,
sent back; so the order of the steps and every failure rule live here and
nowhere else. What it returns is either a complete :class:`Response` (405,
404, 304, a bodiless HEAD, 503, a whole ``sitemapindex``) or a
:class:`Transfer`: a ``urlset`` for the adapter to stream.

An adapter runs the generator with :func:`run_effects` (sync) or :func:`arun_effects`
(async), and drives a :class:`Transfer` by feeding it batches and
asking it, at each point, what may be sent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from tempfile import SpooledTemporaryFile
from typing import IO, Any, Generic, TypeVar

from ..output.body import Body
from ..output.entry import Batch
from ..output.xml import LimitExceeded
from ..sources.base import ALL, AnySource, CutPages, NotPageable, Page
from . import key_file, responses
from .dates import AsOf
from .effects import Effect, Effects, await_job, in_background, read_pages, summarize
from .exchange import (
    DocumentPlan,
    HeadPlan,
    IndexPlan,
    Part,
    Plan,
    Request,
    Response,
    StreamedPlan,
    TablePlan,
    UrlsetPlan,
)
from .routing import DocumentTarget, KeyFileTarget, NotFoundTarget, PageTarget, Target
from .sitemap import Sitemap
from .slots import Slot
from .validators import Summary

logger = logging.getLogger("sitemap_middleware")
T = TypeVar("T")


class SitemapAborted(RuntimeError):
    """A source failed after the response had started; the transfer was aborted."""


Handling = Generator[Effect, Any, "Response | Transfer"]


def handle(sitemap: Sitemap, request: Request, target: Target, now: datetime) -> Handling:
    """Everything between "this path is the sitemap's" and the first byte of the body."""
    refusal = responses.method_not_allowed(request)
    if refusal is not None:
        return refusal
    host_site = sitemap.hosts.site_for(request.host, request.host_sent)
    if host_site is None:
        return responses.bad_host()
    match target:
        case KeyFileTarget():
            return key_file.key_file_response(sitemap.settings, request)
        case NotFoundTarget():
            return responses.not_found()
    robots = sitemap.robots_rules
    if robots is not None and robots.current is None:
        # robots_filter with no rules read (the app's robots.txt unreachable, its failure
        # logged): nothing is published rather than locs it may disallow, or none.
        return sitemap.errors.unavailable()
    as_of = sitemap.as_of(now)
    path = sitemap.routes.path_of(target)
    failed = f"sitemap {path}: a source failed before the response"
    read: set[str] = set()  # the sources this request read (which can tell they recovered)
    cut = sitemap.cut_source(target)
    if cut is not None:
        try:
            if (yield from _current_pages(sitemap, cut, as_of)):
                read.add(cut.name)
        except Exception as exc:
            sitemap.failures.failed(failed, exc, (cut.name,))
            return sitemap.errors.unavailable()
    parts = sitemap.parts(target)
    if parts is None:
        return responses.not_found()
    try:
        known, remembered = yield from _live_summaries(sitemap, target, parts, now, as_of)
    except Exception as exc:
        sitemap.failures.failed(failed, exc, _names(parts))
        return sitemap.errors.unavailable()
    summaries: list[Summary] | None
    while True:
        missing = tuple(part for part, summary in zip(parts, known, strict=True) if summary is None)
        summaries = [s for s in known if s is not None]
        if missing:
            summaries = sitemap.remembered_pages.page_summaries(target, parts)
            if summaries is None:
                recent = sitemap.remembered_summaries.get(missing, as_of.listed_until)
                summaries = None if recent is None else _merged(sitemap, target, known, recent)
        if summaries is None:
            before = _kept_tokens(sitemap, missing)
            try:
                read_now = _with_listed_until(
                    (yield from summarize(missing, as_of)),
                    as_of.listed_until,
                )
            except CutPages:
                # Its keys say the source is cut now: the page is found among its cuts.
                cut = parts[0][0]
                found = yield from _cut_page(sitemap, target, cut, failed, now, as_of)
                if isinstance(found, Response):
                    return found
                parts, summaries = found
            except Exception as exc:
                sitemap.failures.failed(failed, exc, _names(missing))
                return sitemap.errors.unavailable()
            else:
                sitemap.remembered_summaries.keep(missing, read_now)
                _remember_wholes(sitemap, missing, read_now, before)
                summaries = _merged(sitemap, target, known, read_now)
            read |= _names(missing)
        plan = sitemap.planner.respond(request, target, parts, summaries, now, host_site)
        if remembered and not isinstance(plan, Response) and _streams_rows(plan):
            # A urlset's 200 (or its HEAD) streams rows read now: its validators are those
            # of the same rows, read exactly (one statement over the page's key range, or
            # the root urlset's). A 304 was decided from the pages kept current, reading
            # nothing.
            known = [None] * len(parts)
            remembered = False
            continue
        break
    match plan:
        case IndexPlan():
            return (yield from _index(sitemap, plan, summaries, path, read, build=True))
        case HeadPlan(document=IndexPlan() as index):
            return (yield from _index(sitemap, index, summaries, path, read, build=False))
        case Response() | HeadPlan():
            if read:
                sitemap.failures.succeeded(path, read)
            return plan if isinstance(plan, Response) else plan.head.response()
    slot = sitemap.slots.acquire()
    if slot is None:
        return sitemap.errors.busy(path, sitemap.slots.running)
    if isinstance(plan, TablePlan) and isinstance(target, PageTarget) and cut is None:
        # The HTML page links to its neighbours: the source's pages must be known
        # (a cut source's are: they were read to find the page).
        try:
            yield from _current_pages(sitemap, sitemap.by_name[target.source], as_of)
        except Exception as exc:
            slot.release()
            sitemap.failures.failed(failed, exc, (target.source,))
            return sitemap.errors.unavailable()
    return Transfer(sitemap, plan, slot, spool=request.http_version == "1.0")


def _streams_rows(plan: Plan) -> bool:
    """Whether a plan's GET streams rows (a urlset or its HTML table), not an index."""
    document: DocumentPlan = plan.document if isinstance(plan, HeadPlan) else plan
    return isinstance(document, UrlsetPlan | TablePlan)


def _cut_page(
    sitemap: Sitemap,
    target: DocumentTarget,
    source: AnySource,
    failed: str,
    now: datetime,
    as_of: AsOf,
) -> Generator[Effect, Any, tuple[tuple[Part, ...], list[Summary]] | Response]:
    """The parts and summary of a page of a source whose data says it is cut now."""
    try:
        live = sitemap.current_pages.get(source.name)
        if live is not None and not live.cut:  # its pages kept current are not cut: a recount
            yield from sitemap.keep_current(live, now, inline=True, recount=True)
        yield from _current_pages(sitemap, source, as_of)
    except Exception as exc:
        sitemap.failures.failed(failed, exc, (source.name,))
        return sitemap.errors.unavailable()
    parts = sitemap.parts(target, cut=True)
    if parts is None:
        return responses.not_found()
    summaries = sitemap.remembered_pages.page_summaries(target, parts, cut=True)
    if summaries is None:  # its keys changed again meanwhile: as for any failed read
        return sitemap.errors.unavailable()
    return parts, summaries


def _index(
    sitemap: Sitemap,
    plan: IndexPlan,
    summaries: Sequence[Summary],
    path: str,
    read: set[str],
    *,
    build: bool,
) -> Handling:
    """A ``sitemapindex``, built whole with ``build`` (a GET): its pages are read for HEAD as
    for GET, so both get one status."""
    slot = sitemap.slots.acquire() if build else None
    if build and slot is None:
        return sitemap.errors.busy(path, sitemap.slots.running)
    try:
        for source, summary in sitemap.remembered_pages.index_needs(plan.parts, summaries):
            pages = yield from _read_pages(sitemap, source, summary)
            sitemap.remembered_pages.remember(source, summary, pages)
            read.add(source.name)
        document = sitemap.index_document.render(plan) if build else None
    except (LimitExceeded, NotPageable) as exc:
        return sitemap.errors.too_large(exc, path)
    except Exception as exc:
        sitemap.failures.failed(
            f"sitemap {path}: a source failed before the index", exc, _names(plan.parts)
        )
        return sitemap.errors.unavailable()
    finally:
        if slot is not None:
            slot.release()
    if read:
        sitemap.failures.succeeded(path, read)
    return plan.head.response() if document is None else plan.head.response(document)


def _live_summaries(
    sitemap: Sitemap, target: DocumentTarget, parts: Sequence[Part], now: datetime, as_of: AsOf
) -> Generator[Effect, Any, tuple[list[Summary | None], bool]]:
    """The summaries the pages kept current know (None for the parts to read exactly), and
    whether some are from memory (a urlset's ``200`` reads them again before its head).

    An index reads the pages before answering when they are not known yet, when the source
    is small enough to be read exactly on every request, or when they lag past their bound
    (a lone request after a silence); else it starts any due refresh or recount in the
    background and answers from the pages as they are. A page in those cases reads its own
    aggregates instead: one statement over its key range.
    """
    found: list[Summary | None] = []
    remembered = False
    for source, keys in parts:
        live = sitemap.current_pages.get(source.name)
        if live is None or live.cut:
            found.append(None)
            continue
        clock = live.clock()
        if keys == ALL and live.known is not None and not live.cheap and live.overdue(clock):
            # Past a bound: the job running in the background, if its reads started late
            # enough, brings the pages within it; else this request reads them itself.
            wait = live.worth_waiting(clock)
            if wait is not None:
                yield from await_job(live.idle, wait)
        if keys == ALL and (live.known is None or live.cheap or live.overdue(clock)):
            recount = live.known is None or live.cheap or live.recount_overdue(clock)
            yield from sitemap.keep_current(live, now, inline=True, recount=recount)
        if not live.cheap and live.claim(live.clock()):
            yield from in_background(sitemap.keep_current(live, now))
        known = live.known
        if known is None or live.cut:
            found.append(None)  # cut, or a page before the first recount: read exactly
        elif keys == ALL:
            sitemap.remembered_pages.remember(source, known.whole, known.ordered)
            if sitemap.planner.is_index(target, [known.whole]) or live.cheap:
                found.append(known.whole)
                remembered = remembered or not live.cheap
                continue
            # A root urlset: its entity tag is that of its rows' summary, read exactly, as
            # its 200 reads it; its 304s answer with the one last read while the pages kept
            # current have not moved since (else it is read now, once).
            as_read = live.whole_as_read(as_of.listed_until)
            found.append(as_read)
            remembered = remembered or as_read is not None
        elif live.cheap or live.overdue(clock):
            found.append(None)
        else:
            assert isinstance(target, PageTarget)  # a page's key range
            found.append(live.page_summary(target.page, as_of.listed_until))
            remembered = True
    return found, remembered


def _kept_tokens(sitemap: Sitemap, parts: Sequence[Part]) -> dict[str, str | None]:
    """The tokens of the pages kept current of the whole sources among ``parts``, before
    they are read exactly."""
    tokens: dict[str, str | None] = {}
    for source, keys in parts:
        live = sitemap.current_pages.get(source.name)
        if keys == ALL and live is not None:
            tokens[source.name] = live.kept_token()
    return tokens


def _remember_wholes(
    sitemap: Sitemap,
    parts: Sequence[Part],
    read: Sequence[Summary],
    before: dict[str, str | None],
) -> None:
    """Keep the summaries of whole sources just read beside their pages kept current (a
    root urlset's ``304``s answer with them)."""
    for (source, _), summary in zip(parts, read, strict=True):
        if source.name in before:
            sitemap.current_pages[source.name].read_whole(summary, before[source.name])


def _merged(
    sitemap: Sitemap, target: DocumentTarget, known: list[Summary | None], read: list[Summary]
) -> list[Summary]:
    """The parts' summaries: those known, and those just read (a page of a live source
    with the token its kept pages will give it)."""
    fresh = iter(read)
    out = []
    for summary in known:
        if summary is not None:
            out.append(summary)
            continue
        summary = next(fresh)
        if isinstance(target, PageTarget):
            live = sitemap.current_pages.get(target.source)
            if live is not None and not live.cut:
                summary = live.page_of(target.page, summary)
        out.append(summary)
    return out


def _with_listed_until(summaries: list[Summary], listed_until: datetime) -> list[Summary]:
    """Summaries of sources that read no listed_until are rendered under the request's."""
    return [
        s if s.listed_until is not None else replace(s, listed_until=listed_until)
        for s in summaries
    ]


def _read_pages(sitemap: Sitemap, source: AnySource, whole: Summary) -> Effects[list[Page]]:
    """Pages read as of the summary they are remembered for (its ``listed_until``)."""
    as_of = sitemap.as_of(datetime.now(UTC))
    if whole.listed_until is not None:
        as_of = replace(as_of, listed_until=whole.listed_until)
    return (yield from read_pages(source, sitemap.page_size(source), as_of))


def _names(parts: Sequence[Part]) -> set[str]:
    """The names of the sources of ``parts``."""
    return {source.name for source, _ in parts}


def _current_pages(
    sitemap: Sitemap, source: AnySource, as_of: AsOf
) -> Generator[Effect, Any, bool]:
    """Make sure the pages of ``source`` are those of its current data; whether it read."""
    live = sitemap.current_pages.get(source.name)
    if live is not None and live.usable and live.known is not None:
        sitemap.remembered_pages.remember(source, live.known.whole, live.known.ordered)
        return False
    parts = ((source, ALL),)
    kept = sitemap.remembered_summaries.get(parts, as_of.listed_until)
    read = kept is None
    if kept is None:
        kept = _with_listed_until(
            (yield from summarize(parts, as_of)),
            as_of.listed_until,
        )
        sitemap.remembered_summaries.keep(parts, kept)
    (whole,) = kept
    if sitemap.remembered_pages.needs_pages(source, whole):
        pages = yield from _read_pages(sitemap, source, whole)
        sitemap.remembered_pages.remember(source, whole, pages)
        read = True
    return read


@dataclass(frozen=True, slots=True)
class _Done(Generic[T]):
    outcome: T


def _advance(
    handling: Generator[Effect, Any, T], result: Any, error: Exception | None
) -> Effect | _Done[T]:
    """Send a read's result (or throw its error) into the handler: its next effect, or its end."""
    try:
        return handling.send(result) if error is None else handling.throw(error)
    except StopIteration as stop:
        return _Done(stop.value)


def run_effects(handling: Generator[Effect, Any, T], perform: Callable[[Effect], Any]) -> T:
    """Run a generator of effects to its end, each one performed by ``perform(effect)`` in
    this thread."""
    step = _advance(handling, None, None)
    while not isinstance(step, _Done):
        try:
            result, error = perform(step), None
        except Exception as exc:
            result, error = None, exc
        step = _advance(handling, result, error)
    return step.outcome


async def arun_effects(
    handling: Generator[Effect, Any, T], perform: Callable[[Effect], Awaitable[Any]]
) -> T:
    """:func:`run_effects` for adapters that await their reads."""
    step = _advance(handling, None, None)
    while not isinstance(step, _Done):
        try:
            result, error = await perform(step), None
        except Exception as exc:
            result, error = None, exc
        step = _advance(handling, result, error)
    return step.outcome


class Transfer:
    """One ``urlset`` on its way out.

    The status line goes out only with the first chunk: until then a failure is
    still a clean 503 (or a 500 for a document past the protocol's limits);
    after it, the transfer must be aborted so that no client takes a
    truncated sitemap for a whole one. The slot is held until
    :meth:`close`.
    """

    def __init__(
        self, sitemap: Sitemap, plan: StreamedPlan, slot: Slot, spool: bool = False
    ) -> None:
        self.sitemap = sitemap
        self.plan = plan
        self.body: Body = sitemap.body(plan)
        self.started = False
        self._slot = slot
        # Kept in memory up to a few chunks, on disk beyond: memory stays flat. It lives as
        # long as the transfer, so close() closes it rather than a with block.
        self._spool: IO[bytes] | None = (
            SpooledTemporaryFile(max_size=4 * sitemap.settings.limits.chunk_bytes)  # noqa: SIM115
            if spool
            else None
        )

    @property
    def parts(self) -> tuple[Part, ...]:
        return self.plan.parts

    @property
    def path(self) -> str:
        """The path of the document on its way out (as logs name it)."""
        return self.sitemap.routes.path_of(self.plan.target)

    @property
    def batch_size(self) -> int:
        return self.sitemap.settings.limits.batch_size

    def feed(self, source: str, batch: Batch) -> bytes:
        """A chunk once enough is gathered, else ``b""`` (see :class:`~.documents.Body`).

        For an HTTP/1.0 client every chunk is spooled instead: without chunked
        transfer coding the end of a body is the end of the connection, so a cut
        transfer would look complete. It gets the whole document with a
        ``Content-Length`` once it is generated, or a 503.
        """
        chunk = self.body.feed(source, batch)
        if self._spool is not None and chunk:
            self._spool.write(chunk)
            return b""
        return chunk

    def defer_gzip(self) -> Callable[[bytes], bytes] | None:
        """:meth:`.documents.Body.defer_gzip`: the chunks :meth:`feed` returns come
        uncompressed, for the caller to compress with the function returned, in order. None
        when the body is not gzip-coded, or is spooled (the spool takes its coded bytes)."""
        return None if self._spool is not None else self.body.defer_gzip()

    def start(self) -> Response | None:
        """The status line and headers, the first time a chunk is about to go."""
        if self.started:
            return None
        self.started = True
        if self._spool is not None:
            length = ("content-length", str(self._spool.tell()))
            return self.plan.head.response(extra=[length])
        return self.plan.head.response()

    def finish(self) -> Iterator[bytes] | Response:
        """The last chunks (for a spooled document: all of it), or a 404 when every row was
        rejected (an empty urlset is invalid)."""
        self.sitemap.failures.succeeded(self.path, _names(self.parts))  # every row was read
        if self.body.urls == 0 and not self.started:
            return responses.not_found()
        last = self.body.close()
        if self._spool is None:
            return iter((last,))
        self._spool.write(last)
        return self._read_spool()

    def _read_spool(self) -> Iterator[bytes]:
        assert self._spool is not None
        self._spool.seek(0)
        while chunk := self._spool.read(self.sitemap.settings.limits.chunk_bytes):
            yield chunk

    def failed(self, error: Exception) -> Response:
        """What a failure means: a response while nothing is sent; re-raised after that."""
        if isinstance(error, LimitExceeded) and not self.started:
            return self.sitemap.errors.too_large(error, self.path)
        if self.started:
            self.sitemap.failures.failed(
                f"sitemap {self.path}: aborting the transfer", error, _names(self.parts)
            )
            raise error
        self.sitemap.failures.failed(
            f"sitemap {self.path}: a source failed before the first byte", error, _names(self.parts)
        )
        return self.sitemap.errors.unavailable()

    def close(self) -> None:
        self._slot.release()
        if self._spool is not None:
            self._spool.close()
