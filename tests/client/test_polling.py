"""wait()/send_and_wait(): stop at terminal or interrupted states, never past the budget."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from client_peers import Peer, task_json
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_client import A2AClient
from a2a_client._errors import WaitTimeout
from a2a_client._polling import wait_for_task
from a2a_core.models import Message, Task, TaskState, TaskStatus

ACTIVE = [TaskState.SUBMITTED, TaskState.WORKING, TaskState.UNKNOWN]
SETTLED = [s for s in TaskState if s.is_terminal or s.is_interrupted]


def task(state: TaskState) -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=state))


class Script:
    """A GetTask stand-in that walks through a list of states (the last one repeats)."""

    def __init__(self, states: list[TaskState]) -> None:
        self.states = states
        self.calls = 0
        self.times: list[float] = []

    def __call__(self) -> Task:
        self.times.append(time.monotonic())
        state = self.states[min(self.calls, len(self.states) - 1)]
        self.calls += 1
        return task(state)


@settings(max_examples=40, deadline=None)
@given(
    active=st.lists(st.sampled_from(ACTIVE), max_size=6),
    settled=st.sampled_from(SETTLED),
    tail=st.lists(st.sampled_from(list(TaskState)), max_size=3),
)
def test_returns_the_first_settled_snapshot(
    active: list[TaskState], settled: TaskState, tail: list[TaskState]
) -> None:
    script = Script([*active, settled, *tail])
    result = wait_for_task(script, poll_every=0.001, backoff=1.0, timeout=5)
    assert result.status.state is settled
    assert script.calls == len(active) + 1


@pytest.mark.parametrize("state", [TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED])
def test_interrupted_states_are_returned_not_waited_on(state: TaskState) -> None:
    script = Script([TaskState.WORKING, state])
    started = time.monotonic()
    assert wait_for_task(script, poll_every=0.01, timeout=30).status.state is state
    assert time.monotonic() - started < 1


def test_budget_exhausted_raises_with_the_last_snapshot() -> None:
    script = Script([TaskState.WORKING])
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as caught:
        wait_for_task(script, poll_every=0.02, timeout=0.15)
    elapsed = time.monotonic() - started
    assert 0.15 <= elapsed < 1.5
    assert caught.value.task.status.state is TaskState.WORKING
    assert caught.value.elapsed >= 0.15


def test_interval_backs_off_up_to_the_cap() -> None:
    script = Script([TaskState.WORKING] * 6 + [TaskState.COMPLETED])
    wait_for_task(script, poll_every=0.02, backoff=4.0, max_interval=0.05, lateness=10, timeout=5)
    gaps = [b - a for a, b in zip(script.times, script.times[1:], strict=False)]
    # Uncapped the gaps would be 0.02, 0.08, 0.32, 1.28…; capped they stay at 0.05.
    for gap, expected in zip(gaps, [0.02, 0.05, 0.05, 0.05, 0.05, 0.05], strict=True):
        assert expected * 0.9 <= gap < 0.25


def test_a_snapshot_in_hand_needs_no_request() -> None:
    script = Script([TaskState.WORKING])
    done = task(TaskState.COMPLETED)
    assert wait_for_task(script, first=done) is done
    assert script.calls == 0


def test_cancel_event_stops_waiting() -> None:
    script = Script([TaskState.WORKING])
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    started = time.monotonic()
    result = wait_for_task(script, poll_every=5, timeout=30, cancel=cancel)
    assert result.status.state is TaskState.WORKING
    assert time.monotonic() - started < 2


def test_on_update_sees_every_snapshot() -> None:
    seen: list[tuple[TaskState, float]] = []
    wait_for_task(
        Script([TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]),
        poll_every=0.001,
        on_update=lambda t, elapsed: seen.append((t.status.state, elapsed)),
    )
    assert [s for s, _ in seen] == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]
    assert all(b >= a for (_, a), (_, b) in zip(seen, seen[1:], strict=False))


@pytest.mark.parametrize(
    "options", [{"poll_every": 0}, {"timeout": -1}, {"backoff": 0.5}, {"max_interval": 0}]
)
def test_bad_options(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        wait_for_task(Script([TaskState.COMPLETED]), **options)


# -- through the client ------------------------------------------------------------------


def test_send_and_wait_sends_non_blocking_then_polls(peer: Peer) -> None:
    states = iter(["TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    peer.handlers["SendMessage"] = lambda call: {"task": task_json("t1", "TASK_STATE_SUBMITTED")}
    peer.handlers["GetTask"] = lambda call: task_json("t1", next(states), output="The sum is 5.")
    with A2AClient(peer.url) as client:
        result = client.send_and_wait("add 2 and 3", poll_every=0.01)
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    send = peer.rpc_calls("SendMessage")[0].params
    assert send["configuration"]["returnImmediately"] is True
    assert len(peer.rpc_calls("GetTask")) == 3


def test_send_and_wait_returns_a_direct_message(peer: Peer) -> None:
    reply = {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}
    peer.handlers["SendMessage"] = lambda call: reply
    with A2AClient(peer.url) as client:
        assert isinstance(client.send_and_wait("hi"), Message)
    assert peer.rpc_calls("GetTask") == []


def test_wait_times_out_and_leaves_the_task_alone(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: task_json("t1", "TASK_STATE_WORKING")
    with A2AClient(peer.url) as client, pytest.raises(WaitTimeout):
        client.wait("t1", poll_every=0.02, timeout=0.1)
    assert peer.rpc_calls("CancelTask") == []
