"""The reads of the SQL sources, written once for both kinds of engine (sans I/O).

A read (:data:`Read`) is a generator: it yields what it needs done on its connection
(:class:`Execute` a statement with its bound parameters, :data:`ROW_HASH`,
:class:`CallVersion`), is sent each result back, and returns the read's value. Every
statement, its order and what is made of its rows live in the read;
:func:`run` performs the steps on a sync ``Engine``'s connection and :func:`arun` on an
``AsyncEngine``'s, one connection per read, so both sources run the same statements.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from . import sqlite_hash

if TYPE_CHECKING:  # the sync source needs no asyncio extension (nor greenlet)
    from sqlalchemy.engine import Connection, Engine, Result
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

T = TypeVar("T")

Fetch = Literal["all", "first", "one", "scalar"]


@dataclass(frozen=True, slots=True)
class Execute:
    """Execute ``stmt`` with ``bounds``; the reply is its result's ``fetch()``."""

    stmt: Any
    bounds: Mapping[str, Any] | None
    fetch: Fetch


@dataclass(frozen=True, slots=True)
class CallVersion:
    """Call a source's ``version=`` callable; under an ``AsyncEngine`` an awaitable it
    returns is awaited."""

    function: Callable[[], Any]


class RowHash:
    """Make ``sitemap_row_hash`` callable on the connection (SQLite)."""


ROW_HASH = RowHash()

Step = Execute | CallVersion | RowHash
Read = Generator[Step, Any, T]


def run(engine: Engine, read: Read[T]) -> T:
    """Perform a read on one connection of a sync engine, in this thread."""
    with engine.connect() as conn:
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = read.throw(error) if error is not None else read.send(reply)
            except StopIteration as stop:
                value: T = stop.value
                return value
            try:
                reply, error = _perform(conn, step), None
            except Exception as exc:  # raised where the read asked for it
                reply, error = None, exc


async def arun(engine: AsyncEngine, read: Read[T]) -> T:
    """:func:`run` on an ``AsyncEngine``'s connection."""
    async with engine.connect() as conn:
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = read.throw(error) if error is not None else read.send(reply)
            except StopIteration as stop:
                value: T = stop.value
                return value
            try:
                reply, error = await _aperform(conn, step), None
            except Exception as exc:
                reply, error = None, exc


def _perform(conn: Connection, step: Step) -> Any:
    if isinstance(step, Execute):
        return _fetched(conn.execute(step.stmt, step.bounds), step.fetch)
    if isinstance(step, RowHash):
        return sqlite_hash.ensure(conn)
    return step.function()


async def _aperform(conn: AsyncConnection, step: Step) -> Any:
    if isinstance(step, Execute):
        return _fetched(await conn.execute(step.stmt, step.bounds), step.fetch)
    if isinstance(step, RowHash):
        return await sqlite_hash.ensure_async(conn)
    version = step.function()
    return await version if hasattr(version, "__await__") else version


def _fetched(result: Result[Any], fetch: Fetch) -> Any:
    if fetch == "all":
        return result.all()
    if fetch == "first":
        return result.first()
    if fetch == "one":
        return result.one()
    return result.scalar()
