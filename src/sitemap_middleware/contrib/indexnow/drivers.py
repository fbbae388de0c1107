"""Performing the steps of :mod:`.steps`: a sync driver (a sync source on an ``Engine``,
``httpx.Client``) and an async one (an async source on an ``AsyncEngine``,
``httpx.AsyncClient``). They hold the feed's connection between :class:`~.steps.Claim`
and the commit or rollback, and decide nothing.

What a step does is written once, without I/O (:func:`actions`): a generator of the
:data:`Action` s it needs (open the feed's connection, execute, commit, post, ...). Each
driver performs those with its own engine and client.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, TypeVar, cast

import anyio
import httpx
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ...core.dates import AsOf
from ...sources.base import AsyncSource, SyncSource
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


def run_steps(steps: Generator[PushStep, Any, T], perform: Callable[[PushStep], Any]) -> T:
    """Run the steps to their end, each step performed in this thread."""
    result: Any = None
    while True:
        try:
            step = steps.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)
        result = perform(step)


async def arun_steps(
    steps: Generator[PushStep, Any, T], perform: Callable[[PushStep], Awaitable[Any]]
) -> T:
    result: Any = None
    while True:
        try:
            step = steps.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)
        result = await perform(step)


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
        rows = yield Execute(store.queued_statement(step.limit), rows=True)
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
        return store.dequeue_statement(step.dequeue)
    assert step.mark is not None
    return store.advance_statement(step.feed, step.mark)


def _next(acts: Actions, reply: Any, error: Exception | None) -> tuple[Action | None, Any]:
    """Send a reply (or throw an error) into the actions: the next action, or None and the
    step's result."""
    try:
        return (acts.throw(error) if error is not None else acts.send(reply)), None
    except StopIteration as stop:
        return None, stop.value


class SyncDriver:
    def __init__(
        self,
        engine: Engine,
        source: SyncSource | None,
        client: httpx.Client,
        endpoint: str,
        naive_timezone: tzinfo,
    ) -> None:
        self.engine, self.source, self.client = engine, source, client
        self.endpoint, self.naive_timezone = endpoint, naive_timezone
        self.dialect = engine.dialect.name
        self.conn: Connection | None = None

    def perform(self, step: PushStep) -> Any:
        acts = actions(step, self.dialect, self.naive_timezone)
        action, result = _next(acts, None, None)
        while action is not None:
            try:
                reply, error = self._do(action), None
            except Exception as exc:
                reply, error = None, exc
            action, result = _next(acts, reply, error)
        return result

    def _do(self, action: Action) -> Any:
        if isinstance(action, Connect):
            self.conn = self.engine.connect()
            return None
        if isinstance(action, Close):
            return self.close()
        if isinstance(action, ReadSource):
            assert self.source is not None
            return getattr(self.source, action.method)(*action.args)
        if isinstance(action, HTTPPost):
            return self.client.post(self.endpoint, content=action.body, headers=HEADERS)
        if isinstance(action, Sleep):
            return time.sleep(action.seconds)
        assert self.conn is not None
        if isinstance(action, Execute):
            result = self.conn.execute(action.stmt)
            return result.all() if action.rows else result.first() if action.first else None
        if isinstance(action, ExecuteDriverSQL):
            return self.conn.exec_driver_sql(action.sql)
        if isinstance(action, Commit):
            return self.conn.commit()
        assert isinstance(action, Rollback)
        return self.conn.rollback()

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                conn.rollback()
            finally:
                conn.close()


class AsyncDriver:
    def __init__(
        self,
        engine: AsyncEngine,
        source: AsyncSource | None,
        client: httpx.AsyncClient,
        endpoint: str,
        naive_timezone: tzinfo,
    ) -> None:
        self.engine, self.source, self.client = engine, source, client
        self.endpoint, self.naive_timezone = endpoint, naive_timezone
        self.dialect = engine.dialect.name
        self.conn: AsyncConnection | None = None

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
            self.conn = await self.engine.connect()
            return None
        if isinstance(action, Close):
            return await self.close()
        if isinstance(action, ReadSource):
            assert self.source is not None
            return await getattr(self.source, action.method)(*action.args)
        if isinstance(action, HTTPPost):
            return await self.client.post(self.endpoint, content=action.body, headers=HEADERS)
        if isinstance(action, Sleep):
            return await anyio.sleep(action.seconds)
        assert self.conn is not None
        if isinstance(action, Execute):
            result = await self.conn.execute(action.stmt)
            return result.all() if action.rows else result.first() if action.first else None
        if isinstance(action, ExecuteDriverSQL):
            return await self.conn.exec_driver_sql(action.sql)
        if isinstance(action, Commit):
            return await self.conn.commit()
        assert isinstance(action, Rollback)
        return await self.conn.rollback()

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                await conn.rollback()
            finally:
                await conn.close()
