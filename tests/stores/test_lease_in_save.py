"""A save that acknowledges work takes the task's lease in the same write (every store)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_contract import T0, make_task

from a2a_core.models import TaskState
from a2a_wsgi.stores import ConflictError, DuplicateMessageError, LeaseClaim, TaskStore


def claim(worker: str, *, seconds: float = 10, now_offset: float = 0) -> LeaseClaim:
    now = T0 + timedelta(seconds=now_offset)
    return LeaseClaim(worker_id=worker, expires_at=now + timedelta(seconds=seconds), now=now,
                      payload=b"call")


def test_a_create_with_a_lease_claim_leases_the_new_task(store: TaskStore) -> None:
    store.save(make_task("t1", state=TaskState.SUBMITTED), expected_version=None, owner="o",
               tenant="x", lease=claim("w1"))
    lease = store.get_lease("t1")
    assert lease is not None
    assert (lease.worker_id, lease.attempts, lease.owner, lease.tenant, lease.payload) == (
        "w1", 1, "o", "x", b"call")
    assert lease.expires_at == T0 + timedelta(seconds=10)
    # Expired like any lease, so another worker's reaper finds it.
    assert [found.task_id for found in store.expired_leases(T0 + timedelta(seconds=10))] == ["t1"]


def test_a_save_without_a_claim_takes_no_lease(store: TaskStore) -> None:
    store.save(make_task("t1"), expected_version=None)
    assert store.get_lease("t1") is None


def test_an_update_with_a_claim_leaves_another_workers_live_lease_alone(
        store: TaskStore) -> None:
    store.save(make_task("t1"), expected_version=None)
    assert store.acquire_lease("t1", "w1", T0 + timedelta(seconds=10), now=T0)
    version = store.save(make_task("t1"), expected_version=1, lease=claim("w2"))
    assert version == 2  # the task write itself succeeds
    assert store.get_lease("t1").worker_id == "w1"  # type: ignore[union-attr]
    # Once that lease has expired, the claim takes it over and counts an attempt.
    store.save(make_task("t1"), expected_version=2, lease=claim("w2", now_offset=11))
    lease = store.get_lease("t1")
    assert lease is not None and (lease.worker_id, lease.attempts) == ("w2", 2)


def test_a_refused_save_takes_no_lease(store: TaskStore) -> None:
    store.save(make_task("t1"), expected_version=None, message_id="m1", fingerprint="f")
    with pytest.raises(DuplicateMessageError):
        store.save(make_task("t2"), expected_version=None, message_id="m1", fingerprint="f",
                   lease=claim("w1"))
    assert store.get_lease("t2") is None
    with pytest.raises(ConflictError):
        store.save(make_task("t1"), expected_version=7, lease=claim("w1"))
    assert store.get_lease("t1") is None
