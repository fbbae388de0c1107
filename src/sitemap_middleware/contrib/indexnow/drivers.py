"""Performing the steps of :mod:`.steps`: a sync driver (a sync source on an ``Engine``,
``httpx.Client``) and an async one (an async source on an ``AsyncEngine``,
``httpx.AsyncClient``). They hold the feed's connection between :class:`~.steps.Claim`
and the commit or rollback, and decide nothing."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator
from datetime import tzinfo
from typing import Any, TypeVar, cast

import anyio
import httpx
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ...core.dates import AsOf
from ...sources.base import AsyncSource, Mark, SyncSource
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
        if isinstance(step, Claim):
            return self._claim(step.feed)
        if isinstance(step, StartMark | ReadChanges):
            assert self.source is not None
            if isinstance(step, StartMark):
                return self.source.push_start(AsOf(self.naive_timezone, step.listed_until))
            return self.source.changes(
                step.after, AsOf(self.naive_timezone, step.listed_until), step.limit
            )
        if isinstance(step, Post):
            try:
                response = self.client.post(self.endpoint, content=step.body, headers=HEADERS)
            except httpx.HTTPError as exc:
                return _failure(exc)
            return _answer(response)
        if isinstance(step, Wait):
            time.sleep(step.seconds)
            return None
        assert self.conn is not None
        if isinstance(step, ReadQueue):
            return [tuple(row) for row in self.conn.execute(store.queued_statement(step.limit))]
        if isinstance(step, Begin):
            self.conn.execute(store.start_statement(self.dialect, step.feed, step.mark))
            self.conn.commit()
        elif isinstance(step, Advance):
            self.conn.execute(_advance(step))
            self.conn.commit()
        else:
            assert isinstance(step, Release)
            self.conn.rollback()
        self.close()
        return None

    def _claim(self, feed: str) -> Mark | object:
        self.conn = conn = self.engine.connect()
        begin = store.BEGIN.get(self.dialect)
        try:
            if begin is not None:
                conn.exec_driver_sql(begin)
            row = conn.execute(store.lock_statement(self.dialect, feed)).first()
        except OperationalError as exc:
            self.close()
            if _locked(exc):
                return BUSY
            raise
        return MISSING if row is None else store.mark_of(row)

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                conn.rollback()
            finally:
                conn.close()


def _advance(step: Advance) -> Any:
    if step.dequeue is not None:
        return store.dequeue_statement(step.dequeue)
    assert step.mark is not None
    return store.advance_statement(step.feed, step.mark)


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
        if isinstance(step, Claim):
            return await self._claim(step.feed)
        if isinstance(step, StartMark | ReadChanges):
            assert self.source is not None
            if isinstance(step, StartMark):
                return await self.source.push_start(AsOf(self.naive_timezone, step.listed_until))
            return await self.source.changes(
                step.after, AsOf(self.naive_timezone, step.listed_until), step.limit
            )
        if isinstance(step, Post):
            try:
                response = await self.client.post(self.endpoint, content=step.body, headers=HEADERS)
            except httpx.HTTPError as exc:
                return _failure(exc)
            return _answer(response)
        if isinstance(step, Wait):
            await anyio.sleep(step.seconds)
            return None
        assert self.conn is not None
        if isinstance(step, ReadQueue):
            result = await self.conn.execute(store.queued_statement(step.limit))
            return [tuple(row) for row in result]
        if isinstance(step, Begin):
            await self.conn.execute(store.start_statement(self.dialect, step.feed, step.mark))
            await self.conn.commit()
        elif isinstance(step, Advance):
            await self.conn.execute(_advance(step))
            await self.conn.commit()
        else:
            assert isinstance(step, Release)
            await self.conn.rollback()
        await self.close()
        return None

    async def _claim(self, feed: str) -> Mark | object:
        self.conn = conn = await self.engine.connect()
        begin = store.BEGIN.get(self.dialect)
        try:
            if begin is not None:
                await conn.exec_driver_sql(begin)
            row = (await conn.execute(store.lock_statement(self.dialect, feed))).first()
        except OperationalError as exc:
            await self.close()
            if _locked(exc):
                return BUSY
            raise
        return MISSING if row is None else store.mark_of(row)

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                await conn.rollback()
            finally:
                await conn.close()
