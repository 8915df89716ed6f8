"""The delivery worker against a real receiver on loopback and real stores (memory, SQLite)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from push_receiver import Received, Receiver, receiver_fixture  # noqa: F401
from werkzeug.wrappers import Response

from a2a_core._tasks import new_task
from a2a_core.models import (
    AuthenticationInfo,
    Message,
    PushNotificationConfig,
    Role,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi.push import PushDeliverer, PushPlanner, PushSettings, UrlPolicy, backoff_delay
from a2a_wsgi.stores import MemoryTaskStore, SQLiteTaskStore, TaskStore

T0 = datetime(2030, 1, 1, tzinfo=timezone.utc)


class Clock:
    """A settable clock, so retries come due without sleeping."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TaskStore]:
    made: TaskStore = (MemoryTaskStore() if request.param == "memory"
                       else SQLiteTaskStore(tmp_path / "push.sqlite3"))
    yield made
    made.close()


def settings(**overrides: object) -> PushSettings:
    options: dict[str, object] = dict(policy=UrlPolicy.allowing_loopback(), attempt_timeout=2.0,
                                      connect_timeout=1.0, backoff_base=1.0, max_attempts=4)
    options.update(overrides)
    return PushSettings(**options)  # type: ignore[arg-type]


def make_task(store: TaskStore, task_id: str, url: str, *, version: str = "1.0",
              auth: AuthenticationInfo | None = None, token: str | None = None,
              config_id: str = "cfg") -> None:
    msg = Message(message_id=f"m-{task_id}", role=Role.USER, parts=(TextPart(text="hi"),))
    task = new_task(task_id=task_id, context_id="ctx", message=msg, timestamp=T0)
    store.save(task, expected_version=None)
    store.put_push_config(TaskPushNotificationConfig(
        task_id=task_id, protocol_version=version,
        push_notification_config=PushNotificationConfig(url=url, id=config_id, token=token,
                                                        authentication=auth)))


def emit(store: TaskStore, task_id: str, *states: TaskState) -> None:
    """Save status changes with the planner's outbox entries, as the runtime does."""
    planner = PushPlanner()
    for state in states:
        stored = store.load(task_id)
        assert stored is not None
        status = TaskStatus(state=state, timestamp=T0)
        task = type(stored.task)(id=task_id, context_id="ctx", status=status,
                                 history=stored.task.history)
        event = TaskStatusUpdateEvent(task_id=task_id, context_id="ctx", status=status,
                                      final=state.is_terminal)
        outbox = planner(task, [(stored.event_seq + 1, event)],
                         store.list_push_configs(task_id))
        store.save(task, expected_version=stored.version, events=[event], outbox=outbox)


def drain(deliverer: PushDeliverer, clock: Clock, rounds: int = 20) -> None:
    for _ in range(rounds):
        if deliverer.run_once(limit=8) == 0:
            clock.advance(400)
            if deliverer.run_once(limit=8) == 0:
                return


def states_of(hits: list[Received]) -> list[str]:
    return [json.loads(h.body)["statusUpdate"]["status"]["state"] for h in hits]


def test_every_update_is_delivered_in_order_with_configured_headers(
        store: TaskStore, receiver: Receiver) -> None:
    auth = AuthenticationInfo(schemes=["Bearer"], credentials="abc.def")
    make_task(store, "t1", receiver.url + "/hook", auth=auth, token="tok-1")
    emit(store, "t1", TaskState.WORKING, TaskState.INPUT_REQUIRED, TaskState.WORKING,
         TaskState.COMPLETED)
    clock = Clock()
    drain(PushDeliverer(store, settings(), clock=clock), clock)
    hits = receiver.hits("/hook")
    assert states_of(hits) == ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED",
                               "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    first = hits[0].headers
    assert first["Authorization"] == "Bearer abc.def"
    assert first["X-A2A-Notification-Token"] == "tok-1"
    assert first["Content-Type"] == "application/a2a+json"
    assert first["Host"] == receiver.url.removeprefix("http://")
    keys = [h.headers["Idempotency-Key"] for h in hits]
    assert len(set(keys)) == 4
    assert store.pending_deliveries("t1") == 0


def test_a_0_3_config_gets_the_task_with_kind(store: TaskStore, receiver: Receiver) -> None:
    make_task(store, "t03", receiver.url + "/v03", version="0.3")
    emit(store, "t03", TaskState.WORKING, TaskState.COMPLETED)
    clock = Clock()
    drain(PushDeliverer(store, settings(), clock=clock), clock)
    bodies = [json.loads(h.body) for h in receiver.hits("/v03")]
    assert [b["kind"] for b in bodies] == ["task", "task"]
    assert [b["status"]["state"] for b in bodies] == ["working", "completed"]
    assert receiver.hits("/v03")[0].headers["Content-Type"] == "application/json"


def test_retries_after_the_receiver_fails_then_recovers(
        store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/flaky"] = [500, 503, 200]
    make_task(store, "t2", receiver.url + "/flaky")
    emit(store, "t2", TaskState.WORKING, TaskState.COMPLETED)
    clock = Clock()
    deliverer = PushDeliverer(store, settings(), clock=clock, rng=lambda: 0.0)
    assert deliverer.run_once() == 1  # 500
    assert deliverer.run_once() == 0  # backing off: nothing due, and the next event waits
    clock.advance(0.5)
    assert deliverer.run_once() == 1  # 503
    clock.advance(1.0)
    assert deliverer.run_once() == 1  # 200: the first event is through
    assert deliverer.run_once() == 1  # then the second
    hits = receiver.hits("/flaky")
    assert states_of(hits) == ["TASK_STATE_WORKING"] * 3 + ["TASK_STATE_COMPLETED"]
    assert len({h.headers["Idempotency-Key"] for h in hits[:3]}) == 1  # same delivery, same key


def test_gives_up_after_max_attempts_and_moves_on(store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/down"] = [500, 500, 500, 200]
    make_task(store, "t3", receiver.url + "/down")
    emit(store, "t3", TaskState.WORKING, TaskState.COMPLETED)
    clock = Clock()
    drain(PushDeliverer(store, settings(max_attempts=3), clock=clock), clock)
    assert states_of(receiver.hits("/down")) == ["TASK_STATE_WORKING"] * 3 + [
        "TASK_STATE_COMPLETED"]
    assert store.pending_deliveries("t3") == 0


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    s = settings(backoff_base=2.0, backoff_cap=30.0)
    assert [backoff_delay(n, s, lambda: 1.0) for n in range(1, 7)] == [2, 4, 8, 16, 30, 30]
    assert [backoff_delay(n, s, lambda: 0.0) for n in range(1, 4)] == [1, 2, 4]


def test_a_hanging_receiver_delays_neither_other_tasks_nor_past_its_budget(
        store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/hang"] = ["hang"]
    make_task(store, "slow", receiver.url + "/hang")
    make_task(store, "fast", receiver.url + "/fast")
    emit(store, "slow", TaskState.WORKING)
    emit(store, "fast", TaskState.WORKING, TaskState.COMPLETED)
    deliverer = PushDeliverer(store, settings(attempt_timeout=1.0, poll_interval=0.05))
    started = time.monotonic()
    deliverer.start()
    try:
        fast = receiver.wait_hits("/fast", 2, timeout=5)
        assert len(fast) == 2
        assert fast[-1].at - started < 0.9  # not behind the hung one
        assert receiver.wait_for(lambda: store.pending_deliveries("slow") == 1
                                 and len(receiver.hits("/hang")) >= 1)
    finally:
        deliverer.stop()
    hang = receiver.hits("/hang")
    assert hang and time.monotonic() - started < 5


def test_attempt_budget_cuts_a_stalled_receiver(store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/stall"] = ["hang"]
    make_task(store, "t4", receiver.url + "/stall")
    emit(store, "t4", TaskState.WORKING)
    deliverer = PushDeliverer(store, settings(attempt_timeout=0.5), clock=Clock())
    started = time.monotonic()
    deliverer.run_once()
    assert time.monotonic() - started < 2.0
    assert store.pending_deliveries("t4") == 1  # kept for a retry


def test_redirects_are_not_followed(store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/moved"] = [lambda r: Response(
        "", status=307, headers={"Location": receiver.url + "/elsewhere"})]
    make_task(store, "t5", receiver.url + "/moved")
    emit(store, "t5", TaskState.WORKING)
    result = PushDeliverer(store, settings(), clock=Clock()).deliver(
        store.claim_deliveries(T0, 1, "w", 30)[0])
    assert result.status == 307 and not result.ok
    assert receiver.hits("/elsewhere") == []
    assert store.pending_deliveries("t5") == 1


def test_a_deleted_config_gets_nothing_more(store: TaskStore, receiver: Receiver) -> None:
    make_task(store, "t6", receiver.url + "/gone")
    emit(store, "t6", TaskState.WORKING, TaskState.COMPLETED)
    store.delete_push_config("t6", "cfg")
    clock = Clock()
    drain(PushDeliverer(store, settings(), clock=clock), clock)
    assert receiver.hits("/gone") == []
    assert store.pending_deliveries("t6") == 0


def test_410_gone_removes_the_config(store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/410"] = [410]
    make_task(store, "t7", receiver.url + "/410")
    emit(store, "t7", TaskState.WORKING, TaskState.COMPLETED)
    clock = Clock()
    drain(PushDeliverer(store, settings(), clock=clock), clock)
    assert len(receiver.hits("/410")) == 1
    assert store.get_push_config("t7", "cfg") is None


def zone(mapping: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    def resolve(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise OSError("NXDOMAIN")
        return mapping[host]
    return resolve


def test_connects_to_the_checked_address_and_sends_the_name_as_host(
        store: TaskStore, receiver: Receiver) -> None:
    port = receiver.url.rsplit(":", 1)[1]
    policy = UrlPolicy.create(allow_hosts=["hooks.example"],
                              resolver=zone({"hooks.example": ["127.0.0.1"]}))
    make_task(store, "t8", f"http://hooks.example:{port}/named")
    emit(store, "t8", TaskState.WORKING)
    clock = Clock()
    drain(PushDeliverer(store, settings(policy=policy), clock=clock), clock)
    [hit] = receiver.hits("/named")
    assert hit.headers["Host"] == f"hooks.example:{port}"


@pytest.mark.parametrize("address", ["127.0.0.1", "169.254.169.254", "10.0.0.7",
                                     "::ffff:127.0.0.1", "64:ff9b::7f00:1"])
def test_delivery_rechecks_the_url_and_refuses_a_name_that_now_points_inside(
        store: TaskStore, receiver: Receiver, address: str) -> None:
    """DNS rebinding: the name was public when the config was made; now it is not."""
    port = receiver.url.rsplit(":", 1)[1]
    policy = UrlPolicy.create(resolver=zone({"rebind.example": [address]}))
    make_task(store, "t9", f"http://rebind.example:{port}/rebound")
    emit(store, "t9", TaskState.WORKING)
    clock = Clock()
    drain(PushDeliverer(store, settings(policy=policy), clock=clock), clock)
    assert receiver.hits("/rebound") == []
    assert store.pending_deliveries("t9") == 0  # abandoned, not retried forever


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest", "http://[::ffff:7f00:1]:1/",
                                 "http://2130706433/", "file:///etc/passwd"])
def test_hostile_configs_stored_behind_our_back_are_refused_at_delivery(
        store: TaskStore, url: str) -> None:
    make_task(store, "t10", url)
    emit(store, "t10", TaskState.WORKING)
    deliverer = PushDeliverer(store, settings(policy=UrlPolicy()), clock=Clock())
    [delivery] = store.claim_deliveries(T0, 1, "w", 30)
    result = deliverer.deliver(delivery)
    assert result.status is None and result.error
    assert store.pending_deliveries("t10") == 0


def test_each_config_gets_its_own_queue(store: TaskStore, receiver: Receiver) -> None:
    receiver.script["/a"] = [500, 200]
    make_task(store, "t11", receiver.url + "/a", config_id="a")
    store.put_push_config(TaskPushNotificationConfig(
        task_id="t11", push_notification_config=PushNotificationConfig(
            url=receiver.url + "/b", id="b")))
    emit(store, "t11", TaskState.WORKING, TaskState.COMPLETED)
    clock = Clock()
    deliverer = PushDeliverer(store, settings(), clock=clock)
    deliverer.run_once()
    deliverer.run_once()
    assert len(receiver.hits("/b")) == 2  # b is not held up by a's failure
    assert len(receiver.hits("/a")) == 1
    drain(deliverer, clock)
    assert states_of(receiver.hits("/a")) == ["TASK_STATE_WORKING"] * 2 + [
        "TASK_STATE_COMPLETED"]
