"""Performing the steps of :mod:`.steps`: one async driver for every engine and source. It
holds the feed's connection between :class:`~.steps.Claim` and the commit or rollback,
and decides nothing.

What a step does is written once, without I/O (:func:`actions`): a generator of the
:data:`Action` s it needs (open the feed's connection, execute, commit, post, ...). What
each action does on the feed's connection is written once too, as sync code on a sync
``Connection`` (:func:`_on_connection`); :class:`_Feed` says how to reach that connection:
an ``AsyncEngine``'s through ``run_sync``, a sync ``Engine``'s in one thread held for the
whole push (pysqlite's ``:memory:`` pool and Django's connections belong to a thread).
Sources are read as the ASGI adapter reads them (:meth:`.AsyncEffectRunner.call`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import tzinfo
from functools import partial
from typing import Any, TypeVar, cast

import anyio
import httpx
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ...core.dates import AsOf
from ...servers.async_effects import AsyncEffectRunner
from ...sources.base import AnySource
from . import store
from .steps import (
    BUSY,
    MISSING,
    Advance,
    Answer,
    Begin,
    Claim,
    Post,
    PushStep,
    ReadChanges,
    ReadQueue,
    Release,
    StartMark,
    Wait,
)

T = TypeVar("T")
HEADERS = {"content-type": "application/json; charset=utf-8"}


def _answer(response: httpx.Response) -> Answer:
    return Answer(response.status_code, response.headers.get("retry-after"), response.text[:500])


def _failure(exc: httpx.HTTPError) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _locked(exc: OperationalError) -> bool:
    return "locked" in str(exc.orig).lower() or "busy" in str(exc.orig).lower()


async def run_steps(steps: Generator[PushStep, Any, T], driver: Driver) -> T:
    """Run the steps to their end, each performed by the driver; its feed connection is
    closed however they end."""
    result: Any = None
    try:
        while True:
            try:
                step = steps.send(result)
            except StopIteration as stop:
                return cast(T, stop.value)
            result = await driver.perform(step)
    finally:
        await driver.aclose()


@dataclass(frozen=True, slots=True)
class Connect:
    """Open the feed's connection, held until :class:`Close`."""


@dataclass(frozen=True, slots=True)
class Execute:
    """Execute on the feed's connection: the rows (``rows=True``) or its first row."""

    stmt: Any
    rows: bool = False
    first: bool = False


@dataclass(frozen=True, slots=True)
class ExecuteDriverSQL:
    """Execute SQL as the driver takes it (a dialect's ``BEGIN``)."""

    sql: str


@dataclass(frozen=True, slots=True)
class Commit:
    """Commit the feed's transaction."""


@dataclass(frozen=True, slots=True)
class Rollback:
    """Roll the feed's transaction back."""


@dataclass(frozen=True, slots=True)
class Close:
    """Roll back and close the feed's connection, if one is open."""


@dataclass(frozen=True, slots=True)
class ReadSource:
    """Call the source's ``push_start`` or ``changes`` with these arguments."""

    method: str
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class HTTPPost:
    """POST to the endpoint: the ``httpx.Response``."""

    body: bytes


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait before the next step (the endpoint asked to)."""

    seconds: float


Action = (
    Connect | Execute | ExecuteDriverSQL | Commit | Rollback | Close | ReadSource | HTTPPost | Sleep
)
Actions = Generator[Action, Any, Any]


def actions(step: PushStep, dialect: str, naive_timezone: tzinfo) -> Actions:
    """What performing ``step`` takes; its result is the step's."""
    if isinstance(step, Claim):
        return (yield from _claim(step.feed, dialect))
    if isinstance(step, StartMark):
        return (yield ReadSource("push_start", (AsOf(naive_timezone, step.listed_until),)))
    if isinstance(step, ReadChanges):
        as_of = AsOf(naive_timezone, step.listed_until)
        return (yield ReadSource("changes", (step.after, as_of, step.limit)))
    if isinstance(step, Post):
        try:
            response = yield HTTPPost(step.body)
        except httpx.HTTPError as exc:
            return _failure(exc)
        return _answer(response)
    if isinstance(step, Wait):
        yield Sleep(step.seconds)
        return None
    if isinstance(step, ReadQueue):
        rows = yield Execute(store.queued_statement(step.limit, step.prefix), rows=True)
        return [tuple(row) for row in rows]
    if isinstance(step, Begin):
        yield Execute(store.start_statement(dialect, step.feed, step.mark))
        yield Commit()
    elif isinstance(step, Advance):
        yield Execute(_advance(step))
        yield Commit()
    else:
        assert isinstance(step, Release)
        yield Rollback()
    yield Close()
    return None


def _claim(feed: str, dialect: str) -> Actions:
    yield Connect()
    begin = store.BEGIN.get(dialect)
    try:
        if begin is not None:
            yield ExecuteDriverSQL(begin)
        row = yield Execute(store.lock_statement(dialect, feed), first=True)
    except OperationalError as exc:
        yield Close()
        if _locked(exc):
            return BUSY
        raise
    return MISSING if row is None else store.mark_of(row)


def _advance(step: Advance) -> Any:
    if step.dequeue is not None:
        return store.dequeue_statement(step.dequeue, step.prefix)
    assert step.mark is not None
    return store.advance_statement(step.feed, step.mark)


def _next(acts: Actions, reply: Any, error: Exception | None) -> tuple[Action | None, Any]:
    """Send a reply (or throw an error) into the actions: the next action, or None and the
    step's result."""
    try:
        return (acts.throw(error) if error is not None else acts.send(reply)), None
    except StopIteration as stop:
        return None, stop.value


FeedAction = Execute | ExecuteDriverSQL | Commit | Rollback


def _on_connection(conn: Connection, action: FeedAction) -> Any:
    """What an action does on the feed's connection, whichever engine it comes from."""
    if isinstance(action, Execute):
        result = conn.execute(action.stmt)
        return result.all() if action.rows else result.first() if action.first else None
    if isinstance(action, ExecuteDriverSQL):
        conn.exec_driver_sql(action.sql)
    elif isinstance(action, Commit):
        conn.commit()
    else:
        conn.rollback()
    return None


def _release(conn: Connection) -> None:
    """Roll back and close, the close even when the rollback fails."""
    try:
        conn.rollback()
    finally:
        conn.close()


class _Feed:
    """The feed's connection of one push, reached where it lives: a sync ``Engine``'s in
    one thread of its own from the connect to the close (a ``:memory:`` SQLite pool and a
    Django connection belong to the thread that opened them); an ``AsyncEngine``'s through
    ``run_sync``, SQLAlchemy's crossing from async code to sync code on its connection."""

    def __init__(self, engine: Engine | AsyncEngine) -> None:
        self.engine = engine
        self._sync: Connection | None = None  # a sync Engine's: touched only in the thread
        self._async: AsyncConnection | None = None
        sync = not isinstance(engine, AsyncEngine)
        self._thread = ThreadPoolExecutor(1, "indexnow-feed") if sync else None

    async def _in_thread(self, call: Callable[[], T]) -> T:
        assert self._thread is not None
        return await asyncio.get_running_loop().run_in_executor(self._thread, call)

    async def connect(self) -> None:
        if isinstance(self.engine, AsyncEngine):
            with anyio.CancelScope(shield=True):  # an opened connection is always kept
                self._async = await self.engine.connect()
        else:
            await self._in_thread(self._connect)

    def _connect(self) -> None:
        assert isinstance(self.engine, Engine)
        self._sync = self.engine.connect()

    async def run(self, action: FeedAction) -> Any:
        if self._thread is None:
            assert self._async is not None
            return await self._async.run_sync(_on_connection, action)
        return await self._in_thread(partial(self._run, action))

    def _run(self, action: FeedAction) -> Any:
        assert self._sync is not None
        return _on_connection(self._sync, action)

    async def close(self) -> None:
        """Roll back and close the connection, if one is open. Shielded: a cancelled push
        still gives its connection back (in the thread: after the call under way there)."""
        closing: asyncio.Future[None]
        if self._thread is not None:
            closing = asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        elif self._async is not None:
            conn, self._async = self._async, None
            closing = asyncio.ensure_future(conn.run_sync(_release))
        else:
            return
        with anyio.CancelScope(shield=True):
            await asyncio.shield(closing)  # a task's cancel() does not stop it either

    def _close(self) -> None:
        if self._sync is not None:
            conn, self._sync = self._sync, None
            _release(conn)

    async def aclose(self) -> None:
        """:meth:`close`, then end the thread."""
        try:
            await self.close()
        finally:
            if self._thread is not None:
                self._thread.shutdown(wait=False)  # idle: every call into it was awaited


class Driver:
    """Performs the steps of one push: the feed's connection through :class:`_Feed`, the
    source's reads through the effect runner, posts with the round's ``httpx.AsyncClient``."""

    def __init__(
        self,
        engine: Engine | AsyncEngine,
        source: AnySource | None,
        client: httpx.AsyncClient,
        endpoint: str,
        naive_timezone: tzinfo,
        runner: AsyncEffectRunner,
    ) -> None:
        self.source, self.client, self.runner = source, client, runner
        self.endpoint, self.naive_timezone = endpoint, naive_timezone
        self.dialect = engine.dialect.name
        self.feed = _Feed(engine)

    async def perform(self, step: PushStep) -> Any:
        acts = actions(step, self.dialect, self.naive_timezone)
        action, result = _next(acts, None, None)
        while action is not None:
            try:
                reply, error = await self._do(action), None
            except Exception as exc:
                reply, error = None, exc
            action, result = _next(acts, reply, error)
        return result

    async def _do(self, action: Action) -> Any:
        if isinstance(action, Connect):
            return await self.feed.connect()
        if isinstance(action, Close):
            return await self.feed.close()
        if isinstance(action, ReadSource):
            assert self.source is not None
            return await self.runner.call(self.source, action.method, *action.args)
        if isinstance(action, HTTPPost):
            return await self.client.post(self.endpoint, content=action.body, headers=HEADERS)
        if isinstance(action, Sleep):
            return await anyio.sleep(action.seconds)
        return await self.feed.run(action)

    async def aclose(self) -> None:
        """Close the feed's connection if a step left it open, and end its thread."""
        await self.feed.aclose()
