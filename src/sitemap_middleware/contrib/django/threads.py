"""Django's connections in the threads that read the sources.

Django's connections belong to threads, and a transaction to its connection: a
``TestCase``'s rows are seen only in the test's thread. Under an async server the Django
sources read where Django's async ORM runs its queries (:func:`in_django`:
``sync_to_async(thread_sensitive=True)``): the thread of a sync test calling async code,
or the request's thread for sync work under Django's ASGI handler, whose connections
Django closes when the request ends. Reads also run in threads no request ends (a
background refresh, a server's thread outside Django's handlers, asgiref's one thread
for sync work outside requests): :func:`reading` closes what a read opened there, as
Django closes a request's connections. A thread that ends with its job (the WSGI
adapters' background jobs and robots.txt reads, the ASGI robots.txt read's thread of its
own) closes all of its connections when it ends, kept ones included
(:func:`close_thread_connections`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, ParamSpec, TypeVar, cast

from asgiref.sync import SyncToAsync, ThreadSensitiveContext, sync_to_async
from django.db import connections

from ...servers.job_threads import release_at_job_end, run_releases

T = TypeVar("T")
P = ParamSpec("P")


async def in_django(call: Callable[[], T]) -> T:
    """Run a read in Django's thread for sync work, as the async ORM runs a query."""
    return await sync_to_async(call, thread_sensitive=True)()


def background_context() -> contextvars.Context:
    """The context a background job started by a request runs in: the request's, without
    the request's thread for sync work (Django's ASGI handler ends it with the request,
    and a long recount there would hold up the request that started it). Its reads then
    run in asgiref's thread for sync work outside requests, or in the thread of a sync
    caller (a test calling async code) that is still waiting."""
    context = contextvars.copy_context()
    context.run(cast(Any, SyncToAsync.thread_sensitive_context).set, None)
    return context


def thread_of_its_own() -> tuple[contextvars.Context, Callable[[], None]]:
    """A context (the caller's, copied) whose sync work runs in a thread of its own, not in
    the request's thread for sync work (a call that hangs there would hold up the request),
    and the function that lets that thread end once the work is done, its connections
    closed first (:func:`close_thread_connections`). Below a sync caller still waiting (a
    test calling async code) the work runs in the caller's thread instead, as asgiref
    runs it, and its connections are left to the caller."""
    key = ThreadSensitiveContext()  # never entered: asgiref's key for an executor of its own
    context = contextvars.copy_context()
    context.run(cast(Any, SyncToAsync.thread_sensitive_context).set, key)

    def end() -> None:
        executors = cast(Any, SyncToAsync).context_to_thread_executor
        executor = executors.pop(key, None)
        if executor is not None:  # its one thread, after the work it was given
            executor.submit(run_releases, [close_thread_connections])
            executor.shutdown(wait=False)

    return context, end


def in_transaction() -> bool:
    """Whether a connection of this thread is in a transaction (a ``TestCase``'s): rows
    it wrote are seen by no other connection."""
    return any(wrapper.in_atomic_block for wrapper in connections.all(initialized_only=True))


def reads_stay_here() -> bool:
    """Whether reads started from this thread must run in it: :func:`in_transaction`, or a
    connection of it is to an in-memory SQLite database (Django's test database, shared
    with other threads' connections in SQLite's shared cache, where a read meets the
    table locks of this thread's writes and fails at once instead of waiting)."""
    return in_transaction() or any(
        wrapper.connection is not None and _in_memory(wrapper)
        for wrapper in connections.all(initialized_only=True)
    )


def _in_memory(wrapper: Any) -> bool:
    in_memory = getattr(wrapper, "is_in_memory_db", None)
    return callable(in_memory) and bool(in_memory())


class _Reads(threading.local):
    """The reads under way in this thread (steps of several requests' reads interleave in
    one thread for sync work), and the connections open before the first of them."""

    active = 0
    open_before: frozenset[str] = frozenset()


_reads = _Reads()


def begin_read() -> None:
    """A read starts in this thread: the first of a run of reads checks a connection on
    which a read failed, as Django checks a request's (replaced when it is broken), and
    notes which connections were open. In a thread that ends with its job (a
    :class:`~sitemap_middleware.servers.job_threads.JobThread`), the thread's connections
    are closed when the job ends."""
    if _reads.active == 0:
        release_at_job_end(close_thread_connections)
        for wrapper in connections.all(initialized_only=True):
            failed = wrapper.connection is not None and wrapper.errors_occurred
            if failed and not wrapper.in_atomic_block:
                wrapper.close_if_unusable_or_obsolete()
        _reads.open_before = frozenset(
            wrapper.alias
            for wrapper in connections.all(initialized_only=True)
            if wrapper.connection is not None
        )
    _reads.active += 1


def end_read() -> None:
    """A read ends: once no other read of this thread is under way, the connections the
    reads opened are closed when their ``CONN_MAX_AGE`` is 0 and no transaction is open on
    them, as Django closes a request's (in a thread no request ends, nothing else would);
    one open before stays open."""
    _reads.active -= 1
    if _reads.active > 0:
        return
    for wrapper in connections.all(initialized_only=True):
        if (
            wrapper.alias not in _reads.open_before
            and wrapper.connection is not None
            and wrapper.settings_dict.get("CONN_MAX_AGE", 0) == 0
            and not wrapper.in_atomic_block
        ):
            wrapper.close()


def close_thread_connections() -> None:
    """Close every connection of this thread, whatever its ``CONN_MAX_AGE``: the thread
    ends (a :class:`~sitemap_middleware.servers.job_threads.JobThread`, or one of its
    own), and nothing would reuse them. An in-memory SQLite database's too, which
    Django's ``close()`` keeps for the database's sake (another thread's connection keeps
    the shared database)."""
    for wrapper in connections.all(initialized_only=True):
        if wrapper.connection is None:
            continue
        if _in_memory(wrapper):
            wrapper.connection.close()
            wrapper.connection = None
        else:
            wrapper.close()


@contextmanager
def reading() -> Iterator[None]:
    """Around a read, in whatever thread it runs: :func:`begin_read`, :func:`end_read`."""
    begin_read()
    try:
        yield
    finally:
        end_read()


def read(method: Callable[P, T]) -> Callable[P, T]:
    """A source method that reads, run in :func:`reading`."""

    @wraps(method)
    def reads(*args: P.args, **kwargs: P.kwargs) -> T:
        with reading():
            return method(*args, **kwargs)

    return reads


def read_rows(method: Callable[P, Iterator[T]]) -> Callable[P, Iterator[T]]:
    """A source method giving an iterator over rows, iterated in :func:`reading` (until it
    is exhausted or closed)."""

    @wraps(method)
    def rows(*args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        with reading():
            yield from method(*args, **kwargs)

    return rows


class InDjango:
    """A sync Django source's reads under an async server: in Django's thread for sync
    work (:func:`in_django`), each step of a body there too."""

    thread_bound = True

    async def in_thread(self, call: Callable[[], T]) -> T:
        return await in_django(call)
