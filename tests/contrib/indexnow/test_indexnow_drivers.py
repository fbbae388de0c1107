"""What performing a push step takes (:func:`drivers.actions`), the same for every engine:
checked without a database or an endpoint."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from sitemap_middleware.contrib.indexnow import drivers
from sitemap_middleware.contrib.indexnow.steps import BUSY, MISSING, Claim, Post, Release


def _result(actions: drivers.Actions, reply: Any = None) -> Any:
    with pytest.raises(StopIteration) as stop:
        actions.send(reply)
    return stop.value.value


def test_a_claim_locks_the_feed_in_a_transaction_of_its_own() -> None:
    actions = drivers.actions(Claim("articles"), "sqlite", UTC)
    assert isinstance(next(actions), drivers.Connect)
    assert actions.send(None) == drivers.ExecuteDriverSQL("BEGIN IMMEDIATE")
    lock = actions.send(None)
    assert isinstance(lock, drivers.Execute) and lock.first
    assert _result(actions, None) is MISSING


@pytest.mark.parametrize("message", ["database is locked", "database table is busy"])
def test_a_feed_locked_by_another_pusher_is_busy_and_its_connection_closed(message: str) -> None:
    actions = drivers.actions(Claim("articles"), "sqlite", UTC)
    next(actions)
    actions.send(None)
    locked = OperationalError("SELECT", {}, Exception(message))
    assert isinstance(actions.throw(locked), drivers.Close)
    assert _result(actions) is BUSY


def test_another_failure_of_a_claim_closes_its_connection_and_is_raised() -> None:
    actions = drivers.actions(Claim("articles"), "postgresql", UTC)
    next(actions)
    assert isinstance(actions.send(None), drivers.Execute)  # the lock: no BEGIN of its own
    failure = OperationalError("SELECT", {}, Exception("server closed the connection"))
    assert isinstance(actions.throw(failure), drivers.Close)
    with pytest.raises(OperationalError):
        actions.send(None)


def test_a_network_failure_of_a_post_is_its_text() -> None:
    actions = drivers.actions(Post(b"{}"), "sqlite", UTC)
    assert next(actions) == drivers.HTTPPost(b"{}")
    with pytest.raises(StopIteration) as stop:
        actions.throw(httpx.ConnectTimeout("timed out"))
    assert stop.value.value == "ConnectTimeout: timed out"


def test_a_release_rolls_back_then_closes() -> None:
    actions = drivers.actions(Release(), "sqlite", UTC)
    assert [next(actions), actions.send(None)] == [drivers.Rollback(), drivers.Close()]
    assert _result(actions) is None
