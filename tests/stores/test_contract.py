"""The TaskStore contract: every implementation in conftest.STORE_FACTORIES must pass it."""

from __future__ import annotations

import itertools
import threading
from contextlib import closing
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core.models import (
    Artifact,
    DataPart,
    FilePart,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi.stores import (
    ConflictError,
    DuplicateMessageError,
    EventsExpiredError,
    OutboxEntry,
    TaskStore,
    sort_key,
)

_examples = itertools.count()
T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


def make_task(task_id: str = "t1", *, state: TaskState = TaskState.WORKING,
              at: datetime | None = T0, context_id: str = "c1", **extra: Any) -> Task:
    msg = Message(message_id=f"m-{task_id}", role=Role.USER, parts=(TextPart(text="hi"),),
                  task_id=task_id, context_id=context_id)
    return Task(id=task_id, context_id=context_id,
                status=TaskStatus(state=state, timestamp=at), history=(msg,), **extra)


def status_event(task: Task, state: TaskState, at: datetime = T0) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id,
                                 status=TaskStatus(state=state, timestamp=at),
                                 final=state.is_terminal)


def artifact_event(task: Task, text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id,
                                   artifact=Artifact(artifact_id="a1",
                                                     parts=(TextPart(text=text),)),
                                   append=True)


def entry(task_id: str, config_id: str, seq: int, **extra: Any) -> OutboxEntry:
    return OutboxEntry(task_id=task_id, config_id=config_id, seq=seq,
                       url=f"https://hooks.example/{config_id}",
                       headers=(("Authorization", "Bearer x"),), body=f"{seq}".encode(), **extra)


# -- tasks and compare-and-set -------------------------------------------------------------


def test_a_rich_task_round_trips_exactly(store: TaskStore) -> None:
    task = make_task(
        metadata={"k": [1, {"n": None}]},
        artifacts=(Artifact(artifact_id="a", name="out", parts=(
            TextPart(text="é ✓"), DataPart(data={"x": 1.5}),
            FilePart(raw=b"\x00\xff", filename="f.bin", media_type="application/octet-stream"))),),
    )
    store.save(task, expected_version=None)
    loaded = store.load("t1")
    assert loaded is not None
    assert loaded.task == task and loaded.version == 1 and loaded.event_seq == 0


def test_create_twice_and_stale_versions_conflict(store: TaskStore) -> None:
    task = make_task()
    assert store.save(task, expected_version=None) == 1
    with pytest.raises(ConflictError):
        store.save(task, expected_version=None)
    assert store.save(task, expected_version=1) == 2
    with pytest.raises(ConflictError):
        store.save(task, expected_version=1)
    with pytest.raises(ConflictError):
        store.save(make_task("nope"), expected_version=3)
    assert store.get("nope") is None


def test_a_conflicting_save_writes_nothing(store: TaskStore) -> None:
    task = make_task()
    store.save(task, expected_version=None)
    with pytest.raises(ConflictError):
        store.save(replace(task, metadata={"lost": True}), expected_version=7,
                   events=[status_event(task, TaskState.COMPLETED)],
                   outbox=[entry("t1", "p", 1)])
    loaded = store.load("t1")
    assert loaded is not None and loaded.task == task and loaded.event_seq == 0
    assert store.events_after("t1", 0) == [] and store.pending_deliveries("t1") == 0


def test_two_writers_on_two_handles_never_lose_an_update(store_factory: Any) -> None:
    first, second = store_factory(), store_factory()
    first.save(make_task(metadata={"n": 0}), expected_version=None)
    rounds = 25

    def bump(store: TaskStore) -> None:
        for _ in range(rounds):
            while True:
                stored = store.load("t1")
                assert stored is not None
                task = stored.task
                assert task.metadata is not None
                updated = replace(task, metadata={"n": task.metadata["n"] + 1})
                try:
                    store.save(updated, expected_version=stored.version,
                               events=[artifact_event(task, str(task.metadata["n"]))])
                    break
                except ConflictError:
                    continue

    threads = [threading.Thread(target=bump, args=(s,)) for s in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    final = first.load("t1")
    assert final is not None and final.task.metadata == {"n": 2 * rounds}
    assert final.version == 2 * rounds + 1 and final.event_seq == 2 * rounds
    texts = [e.artifact.parts[0].text for _, e in second.events_after("t1", 0)]  # type: ignore[union-attr]
    assert texts == [str(n) for n in range(2 * rounds)]


@pytest.mark.parametrize("owner,tenant", [("bob", None), (None, "acme"), ("alice", "other")])
def test_owner_and_tenant_scope_every_task_query(store: TaskStore, owner: str | None,
                                                 tenant: str | None) -> None:
    store.save(make_task(), expected_version=None, owner="alice", tenant="acme")
    assert store.get("t1", owner="alice", tenant="acme") is not None
    assert store.get("t1", owner=owner, tenant=tenant) is None
    assert store.load("t1", owner=owner, tenant=tenant) is None
    assert store.list(owner=owner, tenant=tenant) == ([], 0)
    assert store.list(owner="alice", tenant="acme")[1] == 1
    with pytest.raises(ConflictError):
        store.save(make_task(), expected_version=1, owner=owner, tenant=tenant)
    with pytest.raises(ConflictError):
        store.save(make_task(), expected_version=None, owner=owner, tenant=tenant)


def test_anonymous_is_an_owner_like_any_other(store: TaskStore) -> None:
    store.save(make_task("anon"), expected_version=None)
    store.save(make_task("mine"), expected_version=None, owner="alice")
    assert store.get("anon", owner="alice") is None
    assert store.get("mine") is None
    assert [t.id for t in store.list()[0]] == ["anon"]


#: Request fingerprints, as a2a_core._idempotency makes them (any string works for a store).
FP, OTHER_FP = "a" * 64, "b" * 64


@pytest.mark.parametrize("owner,tenant", [(None, None), ("alice", None), ("alice", "acme")])
def test_a_creating_message_claim_names_one_task_per_owner_and_tenant(
        store: TaskStore, owner: str | None, tenant: str | None) -> None:
    first = make_task("first")
    store.save(first, expected_version=None, owner=owner, tenant=tenant, message_id="m1",
               fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP, owner=owner, tenant=tenant) == first
    assert store.find_by_message("m2", fingerprint=FP, owner=owner, tenant=tenant) is None
    assert store.find_by_message("m1", fingerprint=OTHER_FP, owner=owner, tenant=tenant) is None
    assert store.find_by_message("m1", fingerprint=FP, owner="mallory", tenant=tenant) is None
    assert store.find_by_message("m1", fingerprint=FP, owner=owner, tenant="elsewhere") is None
    with pytest.raises(DuplicateMessageError) as raised:
        store.save(make_task("second"), expected_version=None, owner=owner, tenant=tenant,
                   message_id="m1", fingerprint=FP,
                   events=[status_event(first, TaskState.WORKING)],
                   outbox=[entry("second", "p", 1)])
    assert raised.value.task_id == "first" and raised.value.message_id == "m1"
    assert isinstance(raised.value, ConflictError)
    assert store.get("second", owner=owner, tenant=tenant) is None
    assert store.events_after("second", 0) == [] and store.pending_deliveries("second") == 0
    # The same claim from another caller, and a later update of the task, are no duplicates.
    store.save(make_task("theirs"), expected_version=None, owner="bob", tenant=tenant,
               message_id="m1", fingerprint=FP)
    theirs = store.find_by_message("m1", fingerprint=FP, owner="bob", tenant=tenant)
    assert theirs is not None and theirs.id == "theirs"
    done = make_task("first", state=TaskState.COMPLETED)
    store.save(done, expected_version=1, owner=owner, tenant=tenant, message_id="m1",
               fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP, owner=owner, tenant=tenant) == done


@pytest.mark.parametrize("owner,tenant", [(None, None), ("alice", "acme")])
def test_a_reused_message_id_with_another_fingerprint_is_another_claim(
        store: TaskStore, owner: str | None, tenant: str | None) -> None:
    scope: dict[str, Any] = {"owner": owner, "tenant": tenant}
    store.save(make_task("first"), expected_version=None, message_id="m1", fingerprint=FP,
               **scope)
    store.save(make_task("second"), expected_version=None, message_id="m1",
               fingerprint=OTHER_FP, **scope)
    assert store.find_by_message("m1", fingerprint=FP, **scope) == make_task("first")
    assert store.find_by_message("m1", fingerprint=OTHER_FP, **scope) == make_task("second")
    assert store.find_by_message("m1", fingerprint="c" * 64, **scope) is None
    with pytest.raises(DuplicateMessageError) as raised:
        store.save(make_task("third"), expected_version=None, message_id="m1",
                   fingerprint=OTHER_FP, **scope)
    assert raised.value.task_id == "second"
    assert store.get("third", **scope) is None
    assert store.list(**scope)[1] == 2


def test_a_claim_needs_both_its_message_id_and_its_fingerprint(store: TaskStore) -> None:
    with pytest.raises(ValueError, match="both"):
        store.save(make_task("t1"), expected_version=None, message_id="m1")
    with pytest.raises(ValueError, match="both"):
        store.save(make_task("t1"), expected_version=None, fingerprint=FP)
    assert store.get("t1") is None
    store.save(make_task("t1"), expected_version=None)  # no claim at all is fine
    assert store.find_by_message("m-t1", fingerprint=FP) is None


def test_fingerprints_and_message_ids_are_compared_exactly(store: TaskStore) -> None:
    """Keys are opaque: case, NUL, backslash, quotes and non-ASCII all matter."""
    odd = ["M1", "m1 ", "m\x00", "m\\1", "m'1", "m\u00e9"]
    for n, message_id in enumerate(odd):
        store.save(make_task(f"t{n}"), expected_version=None, message_id=message_id,
                   fingerprint=f"fp\x00{message_id}")
    for n, message_id in enumerate(odd):
        found = store.find_by_message(message_id, fingerprint=f"fp\x00{message_id}")
        assert found is not None and found.id == f"t{n}"
        assert store.find_by_message(message_id, fingerprint=f"fp{message_id}") is None
    assert store.find_by_message("m1", fingerprint="fp\x00M1") is None


def test_a_refused_create_does_not_claim_its_message(store: TaskStore) -> None:
    store.save(make_task("t1"), expected_version=None)
    with pytest.raises(ConflictError):
        store.save(make_task("t1"), expected_version=None, message_id="m1", fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP) is None
    store.save(make_task("t2"), expected_version=None, message_id="m1", fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP) == make_task("t2")


def test_concurrent_creates_of_one_message_make_one_task(store_factory: Any) -> None:
    stores = [store_factory() for _ in range(4)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def create(n: int) -> None:
        try:
            stores[n].save(make_task(f"t{n}"), expected_version=None, message_id="same",
                           fingerprint=FP)
            outcome = f"t{n}"
        except DuplicateMessageError as dup:
            outcome = f"dup:{dup.task_id}"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    winners = [o for o in outcomes if not o.startswith("dup:")]
    assert len(outcomes) == 4 and len(winners) == 1
    assert sorted(outcomes) == sorted(winners + [f"dup:{winners[0]}"] * 3)
    assert stores[0].list()[1] == 1


def test_finished_among_reports_terminal_tasks_only(store: TaskStore) -> None:
    store.save(make_task("run"), expected_version=None, owner="a")
    store.save(make_task("done", state=TaskState.CANCELED), expected_version=None, owner="b")
    store.save(make_task("fail", state=TaskState.FAILED), expected_version=None)
    found = store.finished_among(["run", "done", "fail", "missing"])
    assert found == {"done": TaskState.CANCELED, "fail": TaskState.FAILED}
    assert store.finished_among([]) == {}


# -- listing ----------------------------------------------------------------------------------


def test_list_filters_orders_and_counts(store: TaskStore) -> None:
    store.save(make_task("a", at=T0, context_id="x"), expected_version=None)
    store.save(make_task("b", at=T0 + timedelta(microseconds=1), context_id="y"),
               expected_version=None)
    store.save(make_task("c", at=T0, context_id="x", state=TaskState.COMPLETED),
               expected_version=None)
    store.save(make_task("d", at=None), expected_version=None)
    store.save(make_task("e", at=datetime(2025, 3, 1, 12, 0, 1)), expected_version=None)
    tasks, total = store.list()
    assert [t.id for t in tasks] == ["e", "b", "c", "a", "d"] and total == 5
    assert [t.id for t in store.list(context_id="x")[0]] == ["c", "a"]
    assert [t.id for t in store.list(status=TaskState.WORKING)[0]] == ["e", "b", "a", "d"]
    assert [t.id for t in store.list(status_timestamp_after=T0)[0]] == ["e", "b", "c", "a"]
    page, total = store.list(after=sort_key(tasks[1]), limit=2)
    assert [t.id for t in page] == ["c", "a"] and total == 5


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offsets=st.lists(st.integers(0, 5), min_size=1, max_size=12), size=st.integers(1, 5))
def test_paging_visits_every_task_once_newest_first(store_factory: Any, offsets: list[int],
                                                     size: int) -> None:
    store = store_factory()
    prefix = f"p{next(_examples)}-"
    owner = prefix  # a fresh owner per example: the database is shared between examples
    for n, offset in enumerate(offsets):
        store.save(make_task(f"{prefix}{n:02d}", at=T0 + timedelta(microseconds=offset)),
                   expected_version=None, owner=owner)
    seen: list[Task] = []
    cursor = None
    while True:
        page, total = store.list(owner=owner, after=cursor, limit=size)
        assert total == len(offsets)
        seen += page
        if len(page) < size:
            break
        cursor = sort_key(page[-1])
    assert [t.id for t in seen] == [t.id for t in sorted(seen, key=sort_key, reverse=True)]
    assert sorted(t.id for t in seen) == sorted(f"{prefix}{n:02d}" for n in range(len(offsets)))


# -- the event log ---------------------------------------------------------------------------


def test_events_are_numbered_in_order_and_replayable(store: TaskStore) -> None:
    task = make_task()
    store.save(task, expected_version=None, events=[status_event(task, TaskState.WORKING)])
    events = [artifact_event(task, "x"), status_event(task, TaskState.COMPLETED)]
    store.save(task, expected_version=1, events=events)
    loaded = store.load("t1")
    assert loaded is not None and loaded.event_seq == 3
    logged = store.events_after("t1", 0)
    assert [seq for seq, _ in logged] == [1, 2, 3]
    assert [e for _, e in logged[1:]] == events
    assert store.events_after("t1", 1, limit=1) == [logged[1]]
    assert store.events_after("t1", 3) == []
    assert store.events_after("unknown", 0) == []


def test_a_trimmed_log_refuses_replay_from_before_its_start(store_factory: Any) -> None:
    store = store_factory(max_events=3)
    task = make_task()
    store.save(task, expected_version=None)
    for version in range(1, 6):
        store.save(task, expected_version=version, events=[artifact_event(task, str(version))])
    assert [seq for seq, _ in store.events_after("t1", 2)] == [3, 4, 5]
    with pytest.raises(EventsExpiredError) as caught:
        store.events_after("t1", 1)
    assert caught.value.floor == 2 and caught.value.after_seq == 1
    with pytest.raises(EventsExpiredError):
        store.wait_for_events("t1", 0, 0.01)


def test_wait_for_events_wakes_on_a_save_from_another_handle(store_factory: Any) -> None:
    reader, writer = store_factory(), store_factory()
    task = make_task()
    writer.save(task, expected_version=None)
    assert reader.wait_for_events("t1", 0, 0.05) == []
    timer = threading.Timer(0.1, lambda: writer.save(
        task, expected_version=1, events=[status_event(task, TaskState.COMPLETED)]))
    timer.start()
    try:
        got = reader.wait_for_events("t1", 0, 5.0)
    finally:
        timer.join()
    assert [seq for seq, _ in got] == [1]


# -- push configs ------------------------------------------------------------------------------


def push_config(task_id: str, config_id: str, url: str = "https://a.example/hook",
                **extra: Any) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(id=config_id, url=url, **extra))


def test_push_config_crud_keeps_first_insertion_order(store: TaskStore) -> None:
    one, two = push_config("t1", "one", token="tok"), push_config("t1", "two")
    store.put_push_config(one)
    store.put_push_config(two)
    store.put_push_config(push_config("t2", "one"))
    changed = push_config("t1", "one", url="https://b.example/hook")
    store.put_push_config(changed)
    assert store.list_push_configs("t1") == [changed, two]
    assert store.get_push_config("t1", "two") == two
    assert store.get_push_config("t1", "three") is None
    assert store.delete_push_config("t1", "one") is True
    assert store.delete_push_config("t1", "one") is False
    assert store.list_push_configs("t1") == [two]
    with pytest.raises(ValueError):
        store.put_push_config(TaskPushNotificationConfig(
            task_id="t1", push_notification_config=PushNotificationConfig(url="https://x")))


# -- the push outbox ---------------------------------------------------------------------------


def _queue(store: TaskStore, entries: list[OutboxEntry]) -> None:
    task = make_task()
    store.save(task, expected_version=None)
    store.save(task, expected_version=1, outbox=entries)


def test_each_queue_hands_out_only_its_oldest_entry(store: TaskStore) -> None:
    _queue(store, [entry("t1", "a", 1), entry("t1", "a", 2), entry("t1", "b", 1)])
    claimed = store.claim_deliveries(T0, 10, "w1", 30)
    assert [(d.entry.config_id, d.entry.seq, d.attempts) for d in claimed] == [
        ("a", 1, 1), ("b", 1, 1)]
    first = claimed[0]
    assert first.entry.url == "https://hooks.example/a" and first.entry.body == b"1"
    assert first.entry.headers == (("Authorization", "Bearer x"),)
    assert store.claim_deliveries(T0, 10, "w2", 30) == []  # heads are claimed
    store.complete_delivery(first.id)
    nxt = store.claim_deliveries(T0, 10, "w2", 30)
    assert [(d.entry.config_id, d.entry.seq) for d in nxt] == [("a", 2)]
    assert store.pending_deliveries("t1") == 2


def test_a_retried_entry_stays_at_the_head_until_due(store: TaskStore) -> None:
    _queue(store, [entry("t1", "a", 1), entry("t1", "a", 2)])
    (first,) = store.claim_deliveries(T0, 10, "w1", 30)
    store.retry_delivery(first.id, T0 + timedelta(seconds=10), "HTTP 503")
    assert store.claim_deliveries(T0 + timedelta(seconds=9), 10, "w1", 30) == []
    (again,) = store.claim_deliveries(T0 + timedelta(seconds=10), 10, "w1", 30)
    assert again.id == first.id and again.attempts == 2 and again.last_error == "HTTP 503"
    store.abandon_delivery(again.id, "gave up")
    (second,) = store.claim_deliveries(T0 + timedelta(seconds=10), 10, "w1", 30)
    assert second.entry.seq == 2
    assert store.pending_deliveries("t1") == 1


def test_a_claim_expires_and_limit_is_honoured(store: TaskStore) -> None:
    _queue(store, [entry("t1", f"c{n}", 1) for n in range(5)]
           + [entry("t1", "later", 1, not_before=T0 + timedelta(seconds=5))])
    assert len(store.claim_deliveries(T0, 3, "w1", 1)) == 3
    assert len(store.claim_deliveries(T0, 10, "w2", 1)) == 2
    reclaimed = store.claim_deliveries(T0 + timedelta(seconds=1), 10, "w3", 30)
    assert len(reclaimed) == 5 and all(d.attempts == 2 for d in reclaimed)
    late = store.claim_deliveries(T0 + timedelta(seconds=5), 10, "w3", 30)
    assert [d.entry.config_id for d in late] == ["later"]


def test_concurrent_claimers_never_share_an_entry(store_factory: Any) -> None:
    store = store_factory()
    _queue(store, [entry("t1", f"c{n}", 1) for n in range(40)])
    got: list[list[int]] = [[], [], [], []]

    def claim(slot: int) -> None:
        handle = store_factory()
        while batch := handle.claim_deliveries(T0, 3, f"w{slot}", 60):
            got[slot] += [d.id for d in batch]

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    every = [i for ids in got for i in ids]
    assert len(every) == 40 and len(set(every)) == 40


# -- leases -----------------------------------------------------------------------------------


def test_leases_are_exclusive_until_they_expire(store: TaskStore) -> None:
    later = T0 + timedelta(seconds=10)
    assert store.acquire_lease("t1", "w1", later, now=T0, owner="o", payload=b"p")
    assert not store.acquire_lease("t1", "w2", later, now=T0)
    assert store.acquire_lease("t1", "w1", later, now=T0, owner="o", payload=b"p")  # ours
    assert store.expired_leases(T0 + timedelta(seconds=9)) == []
    (expired,) = store.expired_leases(later)
    assert (expired.task_id, expired.worker_id, expired.attempts) == ("t1", "w1", 1)
    assert expired.owner == "o" and expired.payload == b"p" and expired.expires_at == later
    assert store.acquire_lease("t1", "w2", later + timedelta(seconds=10), now=later)
    assert not store.acquire_lease("t1", "w3", later + timedelta(seconds=10), now=later)
    (taken,) = store.expired_leases(later + timedelta(seconds=10))
    assert taken.worker_id == "w2" and taken.attempts == 2


def test_renew_and_release_only_touch_the_holders_leases(store: TaskStore) -> None:
    soon, later = T0 + timedelta(seconds=1), T0 + timedelta(seconds=60)
    store.acquire_lease("a", "w1", soon, now=T0)
    store.acquire_lease("b", "w2", soon, now=T0)
    assert store.renew_leases("w1", ["a", "b", "c"], later) == {"a"}
    assert [lease.task_id for lease in store.expired_leases(soon)] == ["b"]
    store.release_lease("b", "w1")
    assert [lease.task_id for lease in store.expired_leases(soon)] == ["b"]
    store.release_lease("b", "w2")
    assert store.expired_leases(later) == [store.expired_leases(later)[0]]
    assert [lease.task_id for lease in store.expired_leases(later)] == ["a"]
    assert store.renew_leases("w2", ["b"], later) == set()


def test_get_lease_reads_one_tasks_lease_live_or_expired(store: TaskStore) -> None:
    until = T0 + timedelta(seconds=10)
    assert store.get_lease("t1") is None
    assert store.acquire_lease("t1", "w1", until, now=T0, owner="o", tenant="x", payload=b"p")
    lease = store.get_lease("t1")
    assert lease is not None
    assert (lease.task_id, lease.worker_id, lease.attempts) == ("t1", "w1", 1)
    assert (lease.owner, lease.tenant, lease.payload) == ("o", "x", b"p")
    assert lease.expires_at == until and lease.expires_at.utcoffset() == timedelta(0)
    assert store.get_lease("t2") is None
    later = until + timedelta(seconds=5)
    store.renew_leases("w1", ["t1"], later)
    assert store.get_lease("t1").expires_at == later  # type: ignore[union-attr]
    assert store.get_lease("t1") == store.expired_leases(later)[0]  # expired: still there
    store.release_lease("t1", "w1")
    assert store.get_lease("t1") is None


def test_only_one_of_many_reapers_takes_over_an_expired_lease(store_factory: Any) -> None:
    store = store_factory()
    store.acquire_lease("t1", "dead", T0, now=T0)
    wins: list[str] = []

    def reap(n: int) -> None:
        if store_factory().acquire_lease("t1", f"r{n}", T0 + timedelta(seconds=30),
                                         now=T0 + timedelta(seconds=1)):
            wins.append(f"r{n}")

    threads = [threading.Thread(target=reap, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(wins) == 1


# -- retention ---------------------------------------------------------------------------------


def test_purge_deletes_old_terminal_tasks_with_everything_of_theirs(store: TaskStore) -> None:
    old = T0 - timedelta(days=8)
    done = make_task("done", state=TaskState.COMPLETED, at=old)
    store.save(done, expected_version=None, events=[status_event(done, TaskState.COMPLETED)],
               outbox=[entry("done", "p", 1)])
    store.put_push_config(push_config("done", "p"))
    store.acquire_lease("done", "w", old, now=old)
    store.save(make_task("running", at=old), expected_version=None)
    store.save(make_task("recent", state=TaskState.FAILED, at=T0), expected_version=None)
    assert store.purge(T0 - timedelta(days=7)) == 1
    assert store.get("done") is None and store.events_after("done", 0) == []
    assert store.list_push_configs("done") == [] and store.pending_deliveries("done") == 0
    assert store.expired_leases(T0) == []
    assert store.get("running") is not None and store.get("recent") is not None
    assert store.purge(T0 - timedelta(days=7)) == 0
    store.save(make_task("done", state=TaskState.COMPLETED, at=old), expected_version=None)
    assert store.load("done") is not None and store.load("done").event_seq == 0  # type: ignore[union-attr]


def test_purge_forgets_the_creating_message_claim(store: TaskStore) -> None:
    old = T0 - timedelta(days=8)
    store.save(make_task("done", state=TaskState.COMPLETED, at=old), expected_version=None,
               message_id="m1", fingerprint=FP)
    store.save(make_task("kept"), expected_version=None, message_id="m1", fingerprint=OTHER_FP)
    assert store.purge(T0 - timedelta(days=7)) == 1
    assert store.find_by_message("m1", fingerprint=FP) is None
    assert store.find_by_message("m1", fingerprint=OTHER_FP) == make_task("kept")
    store.save(make_task("again"), expected_version=None, message_id="m1", fingerprint=FP)
    assert store.find_by_message("m1", fingerprint=FP) == make_task("again")


def test_purge_honours_its_limit(store: TaskStore) -> None:
    for n in range(5):
        store.save(make_task(f"t{n}", state=TaskState.CANCELED, at=T0), expected_version=None)
    assert store.purge(T0 + timedelta(seconds=1), limit=2) == 2
    assert store.list()[1] == 3


def test_a_version_1_sqlite_file_is_upgraded_to_record_creating_messages(tmp_path: Any) -> None:
    import sqlite3

    from a2a_wsgi.stores import SQLiteTaskStore
    from a2a_wsgi.stores._sqlite import SCHEMA_VERSION

    path = tmp_path / "v1.sqlite3"
    SQLiteTaskStore(path).close()
    with closing(sqlite3.connect(path)) as conn, conn:  # as version 1 left it
        conn.execute("DROP TABLE a2a_task_messages")
        conn.execute("DROP TABLE a2a_parts")  # and the index of schema 5
        conn.execute("DROP INDEX a2a_tasks_context")
        conn.execute("UPDATE a2a_schema_version SET version = 1")
    store = SQLiteTaskStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 5
        store.save(make_task(), expected_version=None, message_id="m1", fingerprint=FP)
        assert store.find_by_message("m1", fingerprint=FP) == make_task()
    finally:
        store.close()


#: The message table as schema version 2 made it (SQLite), before fingerprints.
_SQLITE_V2_MESSAGES = """
    CREATE TABLE a2a_task_messages (
      scope TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
      PRIMARY KEY (scope, message_id)) WITHOUT ROWID;
    CREATE INDEX a2a_task_messages_task ON a2a_task_messages (task_id);
"""


def test_a_version_2_sqlite_file_is_upgraded_and_its_claims_never_match(tmp_path: Any) -> None:
    """Claims made before fingerprints match no request: a retry after the upgrade is new."""
    import io
    import json
    import sqlite3

    from a2a_wsgi import _db_cli as db_cli
    from a2a_wsgi.stores import LEGACY_FINGERPRINT, SQLiteTaskStore

    path = tmp_path / "v2.sqlite3"
    old = SQLiteTaskStore(path)
    old.save(make_task("old"), expected_version=None, owner="alice")
    old.close()
    with closing(sqlite3.connect(path)) as conn, conn:  # back to version 2, with one of its claims
        conn.execute("DROP TABLE a2a_task_messages")
        conn.execute("DROP TABLE a2a_parts")  # and the index of schema 5
        conn.execute("DROP INDEX a2a_tasks_context")
        conn.executescript(_SQLITE_V2_MESSAGES)
        conn.execute("INSERT INTO a2a_task_messages VALUES (?, 'm1', 'old')",
                     (json.dumps(["alice", None]),))
        conn.execute("UPDATE a2a_schema_version SET version = 2")
    out = io.StringIO()
    assert db_cli.db_main(["upgrade", f"sqlite:///{path}"], out=out) == 0
    assert out.getvalue() == f"{path}: upgraded from version 2 to 5\n"
    with closing(sqlite3.connect(path)) as conn, conn:
        assert conn.execute("SELECT scope, message_id, fingerprint, task_id "
                            "FROM a2a_task_messages").fetchall() == [
            (json.dumps(["alice", None]), "m1", LEGACY_FINGERPRINT, "old")]
    store = SQLiteTaskStore(path)
    try:
        assert store.schema_version() == 5
        assert store.get("old", owner="alice") == make_task("old")
        assert store.find_by_message("m1", fingerprint=FP, owner="alice") is None
        store.save(make_task("new"), expected_version=None, owner="alice", message_id="m1",
                   fingerprint=FP)
        assert store.find_by_message("m1", fingerprint=FP, owner="alice") == make_task("new")
        with pytest.raises(DuplicateMessageError):
            store.save(make_task("newer"), expected_version=None, owner="alice",
                       message_id="m1", fingerprint=FP)
    finally:
        store.close()
    out = io.StringIO()
    assert db_cli.db_main(["upgrade", f"sqlite:///{path}"], out=out) == 0
    assert out.getvalue() == f"{path}: already at version 5\n"
