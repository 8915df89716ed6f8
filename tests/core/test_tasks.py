"""The task lifecycle: the transition table, updates, history, artifacts, metadata."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core._tasks import (
    ACTIVE_STATES,
    AUTH_METADATA_KEY,
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    TransitionEvent,
    append_message,
    apply_event,
    apply_status,
    can_transition,
    is_cancelable,
    merge_metadata,
    new_task,
    protect_reserved,
    strip_artifacts,
    transitions_between,
    trim_history,
    with_identity,
)
from a2a_core.errors import InvalidTransitionError, UnsupportedOperationError
from a2a_core.models import (
    Artifact,
    DataPart,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

S = TaskState
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
ALL_PAIRS = list(itertools.product(S, S))


def _msg(mid: str, role: Role = Role.USER, text: str = "hi", **kw: object) -> Message:
    return Message(message_id=mid, role=role, parts=[TextPart(text=text)], **kw)  # type: ignore[arg-type]


def _task(state: TaskState = S.SUBMITTED, **kw: object) -> Task:
    task = new_task(task_id="t1", context_id="c1", message=_msg("m0"), timestamp=T0)
    return replace(task, status=TaskStatus(state=state, timestamp=T0), **kw)  # type: ignore[arg-type]


def _expected(a: TaskState, b: TaskState) -> bool:
    """The lifecycle rules restated independently of the table, from the brief."""
    if S.UNKNOWN in (a, b) or b is S.SUBMITTED:  # nothing goes back to submitted
        return False
    if a is S.CANCELED:
        return b is S.CANCELED
    if a in (S.COMPLETED, S.FAILED, S.REJECTED):
        return False
    if a in (S.SUBMITTED, S.WORKING):
        return True
    return b in (S.WORKING, a) or b.is_terminal  # input/auth required


# -- the table -------------------------------------------------------------------------


def test_state_classes_partition_the_real_states() -> None:
    classes = [TERMINAL_STATES, INTERRUPTED_STATES, ACTIVE_STATES]
    assert set().union(*classes) == set(S) - {S.UNKNOWN}
    assert sum(len(c) for c in classes) == len(S) - 1
    assert all(s.is_terminal for s in TERMINAL_STATES)
    assert all(s.is_interrupted for s in INTERRUPTED_STATES)


def test_table_has_every_state_as_a_key() -> None:
    assert set(TRANSITIONS) == set(S)


@pytest.mark.parametrize(("a", "b"), ALL_PAIRS, ids=lambda s: s.name)
def test_table_matches_the_rules(a: TaskState, b: TaskState) -> None:
    assert can_transition(a, b) is _expected(a, b)


@pytest.mark.parametrize(("a", "b"), ALL_PAIRS, ids=lambda s: s.name)
def test_apply_status_obeys_the_table(a: TaskState, b: TaskState) -> None:
    task = _task(a)
    later = T0 + timedelta(seconds=1)
    if can_transition(a, b):
        result = apply_status(task, TaskStatus(state=b, timestamp=later))
        assert result.status.state is b
        if a is not S.CANCELED:  # the re-cancel is a no-op (checked below)
            assert result.status.timestamp == later
    else:
        with pytest.raises(InvalidTransitionError, match=a.name):
            apply_status(task, TaskStatus(state=b, timestamp=later))


def test_unknown_is_never_a_target_nor_a_source() -> None:
    assert not any(S.UNKNOWN in targets for targets in TRANSITIONS.values())
    assert TRANSITIONS[S.UNKNOWN] == frozenset()


# -- terminal tasks --------------------------------------------------------------------


def _every_update(task: Task) -> list[TaskStatusUpdateEvent | TaskArtifactUpdateEvent]:
    art = Artifact(artifact_id="a", parts=[TextPart(text="x")])
    statuses = [
        TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=TaskStatus(state=s)
        )
        for s in S
    ]
    artifacts = [
        TaskArtifactUpdateEvent(
            task_id=task.id, context_id=task.context_id, artifact=art, append=ap, last_chunk=lc
        )
        for ap, lc in itertools.product([False, True], repeat=2)
    ]
    return [*statuses, *artifacts]


@pytest.mark.parametrize("state", sorted(TERMINAL_STATES, key=lambda s: s.value), ids=str)
def test_terminal_tasks_reject_every_update_but_recancel(state: TaskState) -> None:
    task = _task(state)
    for event in _every_update(task):
        recancel = (
            isinstance(event, TaskStatusUpdateEvent)
            and state is S.CANCELED
            and event.status.state is S.CANCELED
        )
        if recancel:
            assert apply_event(task, event) is task
        else:
            with pytest.raises(InvalidTransitionError):
                apply_event(task, event)
    with pytest.raises(UnsupportedOperationError) as info:
        append_message(task, _msg("m9"))
    assert info.value.code == -32004


def test_recancel_keeps_the_first_cancel() -> None:
    first = apply_status(_task(S.WORKING), TaskStatus(state=S.CANCELED, timestamp=T0))
    again = apply_status(
        first,
        TaskStatus(
            state=S.CANCELED, timestamp=T0 + timedelta(hours=1), message=_msg("x", Role.AGENT)
        ),
    )
    assert again == first
    assert again.status.timestamp == T0


# -- random update sequences -----------------------------------------------------------

_roles = st.sampled_from(Role)
_mids = st.sampled_from(["m0", "m1", "m2", "m3"])
_status_messages = st.none() | st.builds(_msg, _mids, _roles)
_status_events = st.builds(
    lambda state, msg: TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=state, message=msg)
    ),
    st.sampled_from(S),
    _status_messages,
)
_artifact_events = st.builds(
    lambda aid, text, append, last: TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id=aid, parts=[TextPart(text=text)]),
        append=append,
        last_chunk=last,
    ),
    st.sampled_from(["a", "b", "c"]),
    st.text(max_size=3),
    st.booleans(),
    st.booleans(),
)
_events = st.lists(_status_events | _artifact_events, max_size=25)


def _artifact_model(
    model: dict[str, list[str]], event: TaskArtifactUpdateEvent
) -> dict[str, list[str]]:
    """Reference model of the artifact rules: id -> texts, in insertion order."""
    texts = [p.text for p in event.artifact.parts if isinstance(p, TextPart)]
    out = dict(model)
    aid = event.artifact.artifact_id
    out[aid] = out[aid] + texts if (event.append and aid in out) else texts
    return out


@settings(max_examples=300, deadline=None)
@given(_events)
def test_random_updates_follow_the_table(events: list[object]) -> None:
    task = _task(S.SUBMITTED)
    model: dict[str, list[str]] = {}
    for event in events:
        before = task
        state = task.status.state
        if isinstance(event, TaskStatusUpdateEvent):
            legal = can_transition(state, event.status.state)
        else:
            assert isinstance(event, TaskArtifactUpdateEvent)
            legal = state not in TERMINAL_STATES
        if not legal:
            with pytest.raises(InvalidTransitionError):
                apply_event(task, event)  # type: ignore[arg-type]
            assert task == before
            continue
        task = apply_event(task, event)  # type: ignore[arg-type]
        if isinstance(event, TaskArtifactUpdateEvent):
            model = _artifact_model(model, event)
        else:
            assert task.status.state is event.status.state
        transition = transitions_between(before, task)
        assert (transition is None) == (before.status.state is task.status.state)
        # Invariants: ids everywhere, no adjacent duplicate history ids, artifacts = the model.
        assert all(m.task_id == "t1" and m.context_id == "c1" for m in task.history)
        ids = [m.message_id for m in task.history]
        assert len(ids) >= len(before.history)
        assert ids[: len(before.history)] == [m.message_id for m in before.history]
        texts = {
            a.artifact_id: [p.text for p in a.parts if isinstance(p, TextPart)]
            for a in task.artifacts
        }
        assert list(texts) == list(model)
        assert texts == model


# -- status messages and history -------------------------------------------------------


def test_agent_status_message_is_appended_and_shown() -> None:
    question = _msg("q1", Role.AGENT, "which city?")
    task = apply_status(_task(S.WORKING), TaskStatus(state=S.INPUT_REQUIRED, message=question))
    assert task.status.state is S.INPUT_REQUIRED
    assert task.history[-1] == replace(question, task_id="t1", context_id="c1")
    assert task.status.message == task.history[-1]
    assert len(task.history) == 2


def test_status_message_already_last_is_not_duplicated() -> None:
    reply = _msg("r1", Role.AGENT)
    task = append_message(_task(S.WORKING), reply)
    task = apply_status(task, TaskStatus(state=S.INPUT_REQUIRED, message=reply))
    assert [m.message_id for m in task.history] == ["m0", "r1"]
    # A repeated status message with a new id is a new turn.
    task = apply_status(task, TaskStatus(state=S.INPUT_REQUIRED, message=_msg("r2", Role.AGENT)))
    assert [m.message_id for m in task.history] == ["m0", "r1", "r2"]


def test_user_status_message_stays_out_of_history() -> None:
    task = apply_status(_task(S.WORKING), TaskStatus(state=S.WORKING, message=_msg("u1")))
    assert [m.message_id for m in task.history] == ["m0"]
    assert task.status.message is not None and task.status.message.task_id == "t1"


def test_status_message_of_another_task_is_refused() -> None:
    foreign = _msg("x", Role.AGENT, task_id="other")
    with pytest.raises(ValueError, match="other"):
        apply_status(_task(S.WORKING), TaskStatus(state=S.WORKING, message=foreign))


@pytest.mark.parametrize(("field", "value"), [("task_id", "t2"), ("context_id", "c2")])
def test_event_for_another_task_is_refused(field: str, value: str) -> None:
    event = TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=TaskStatus(state=S.WORKING))
    with pytest.raises(ValueError):
        apply_event(_task(), replace(event, **{field: value}))  # type: ignore[arg-type]


# -- new_task and append_message -------------------------------------------------------


def test_new_task_is_submitted_with_its_message() -> None:
    meta = {"k": 1}
    msg = _msg("m0")
    task = new_task(task_id="tsk-1", context_id="ctx-1", message=msg, timestamp=T0, metadata=meta)
    assert task.status == TaskStatus(state=S.SUBMITTED, timestamp=T0)
    assert task.history == (replace(msg, task_id="tsk-1", context_id="ctx-1"),)
    assert task.artifacts == ()
    meta["k"] = 2
    assert task.metadata == {"k": 1}


@pytest.mark.parametrize("field", ["task_id", "context_id"])
def test_new_task_refuses_a_message_naming_something_else(field: str) -> None:
    msg = _msg("m0", **{field: "elsewhere"})
    with pytest.raises(ValueError, match="elsewhere"):
        new_task(task_id="t", context_id="c", message=msg, timestamp=T0)


def test_new_task_accepts_a_message_with_matching_ids() -> None:
    msg = _msg("m0", task_id="t", context_id="c")
    assert new_task(task_id="t", context_id="c", message=msg, timestamp=T0).history == (msg,)


@pytest.mark.parametrize("state", sorted(set(S) - TERMINAL_STATES - {S.UNKNOWN}, key=str), ids=str)
def test_append_message_continues_a_live_task(state: TaskState) -> None:
    task = append_message(_task(state), _msg("m1", text="more"))
    assert task.status.state is state
    assert [m.message_id for m in task.history] == ["m0", "m1"]
    assert task.history[-1].task_id == "t1" and task.history[-1].context_id == "c1"


def test_append_message_refuses_unknown_state() -> None:
    with pytest.raises(UnsupportedOperationError):
        append_message(_task(S.UNKNOWN), _msg("m1"))


# -- artifacts -------------------------------------------------------------------------


def _art_event(
    aid: str, *texts: str, append: bool = False, **kw: object
) -> TaskArtifactUpdateEvent:
    art = Artifact(artifact_id=aid, parts=[TextPart(text=t) for t in texts], **kw)  # type: ignore[arg-type]
    return TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=art, append=append)


def test_replace_keeps_position_and_new_ids_go_last() -> None:
    task = _task(S.WORKING)
    for event in (_art_event("a", "1"), _art_event("b", "2"), _art_event("a", "3")):
        task = apply_event(task, event)
    assert [(a.artifact_id, a.parts) for a in task.artifacts] == [
        ("a", (TextPart(text="3"),)),
        ("b", (TextPart(text="2"),)),
    ]


def test_append_extends_parts_and_merges_metadata() -> None:
    task = apply_event(_task(S.WORKING), _art_event("a", "1", name="report", metadata={"x": 1}))
    chunk = _art_event("a", "2", append=True, name="ignored", description="d", metadata={"y": 2})
    task = apply_event(task, chunk)
    (art,) = task.artifacts
    assert art.parts == (TextPart(text="1"), TextPart(text="2"))
    assert (art.name, art.description, art.metadata) == ("report", "d", {"x": 1, "y": 2})


def test_append_without_an_earlier_artifact_adds_it() -> None:
    task = apply_event(_task(S.WORKING), _art_event("z", "only", append=True))
    assert [(a.artifact_id, len(a.parts)) for a in task.artifacts] == [("z", 1)]


def test_last_chunk_records_nothing_and_more_chunks_are_accepted_while_live() -> None:
    event = replace(_art_event("a", "1"), last_chunk=True)
    task = apply_event(_task(S.WORKING), event)
    assert apply_event(_task(S.WORKING), _art_event("a", "1")) == task
    task = apply_event(task, _art_event("a", "2", append=True))
    assert len(task.artifacts[0].parts) == 2
    done = apply_status(task, TaskStatus(state=S.COMPLETED))
    with pytest.raises(InvalidTransitionError):
        apply_event(done, _art_event("a", "3", append=True))


def test_artifacts_allowed_while_interrupted() -> None:
    task = apply_event(_task(S.AUTH_REQUIRED), _art_event("a", "partial"))
    assert task.status.state is S.AUTH_REQUIRED and len(task.artifacts) == 1


def test_strip_artifacts() -> None:
    task = apply_event(_task(S.WORKING), _art_event("a", "1"))
    stripped = strip_artifacts(task)
    assert stripped.artifacts == () and replace(stripped, artifacts=task.artifacts) == task


# -- history trimming ------------------------------------------------------------------


def _with_history(n: int) -> Task:
    task = _task(S.WORKING)
    for i in range(1, n):
        task = append_message(task, _msg(f"m{i}"))
    return task


@pytest.mark.parametrize(
    ("length", "expected"),
    [(None, ["m0", "m1", "m2"]), (0, []), (1, ["m2"]), (2, ["m1", "m2"]), (3, ["m0", "m1", "m2"])],
)
def test_trim_history_table(length: int | None, expected: list[str]) -> None:
    trimmed = trim_history(_with_history(3), length)
    assert [m.message_id for m in trimmed.history] == expected


def test_trim_history_none_is_the_same_task() -> None:
    task = _with_history(2)
    assert trim_history(task, None) is task


@given(st.integers(0, 8), st.integers(0, 12))
def test_trim_history_keeps_the_newest(size: int, length: int) -> None:
    task = _with_history(max(size, 1))
    trimmed = trim_history(task, length)
    assert len(trimmed.history) == min(length, len(task.history))
    tail = tuple(task.history)[len(task.history) - len(trimmed.history) :]
    assert trimmed.history == tail


@pytest.mark.parametrize("length", [-1, -100])
def test_trim_history_negative_is_an_error(length: int) -> None:
    with pytest.raises(ValueError):
        trim_history(_with_history(2), length)


# -- cancel ----------------------------------------------------------------------------


@pytest.mark.parametrize("state", list(S), ids=str)
def test_is_cancelable(state: TaskState) -> None:
    expected = state not in (S.COMPLETED, S.FAILED, S.REJECTED, S.UNKNOWN)
    task = _task(state)
    assert is_cancelable(task) is expected
    if expected:  # and the cancel it promises really goes through
        assert apply_status(task, TaskStatus(state=S.CANCELED)).status.state is S.CANCELED


# -- metadata --------------------------------------------------------------------------


def test_merge_metadata_later_wins_shallowly() -> None:
    static = {"a": 1, "nested": {"x": 1}, "keep": True}
    request = {"a": 2, "nested": {"y": 2}}
    params = {"a": 3}
    assert merge_metadata(static, request, params) == {"a": 3, "nested": {"y": 2}, "keep": True}
    assert static == {"a": 1, "nested": {"x": 1}, "keep": True}


@pytest.mark.parametrize("layers", [(), (None,), ({},), (None, {}, None)])
def test_merge_metadata_empty_is_none(layers: tuple[dict[str, int] | None, ...]) -> None:
    assert merge_metadata(*layers) is None


_meta = st.none() | st.dictionaries(st.sampled_from("abcd"), st.integers(), max_size=4)


@given(st.lists(_meta, max_size=4))
def test_merge_metadata_matches_a_fold(layers: list[dict[str, int] | None]) -> None:
    folded: dict[str, int] = {}
    for layer in layers:
        folded = {**folded, **(layer or {})}
    assert merge_metadata(*layers) == (folded or None)


def test_caller_cannot_forge_the_identity() -> None:
    merged = merge_metadata({"s": 1}, None, {AUTH_METADATA_KEY: "mallory", "p": 2})
    assert with_identity(merged, {"sub": "alice"}) == {
        "s": 1,
        "p": 2,
        AUTH_METADATA_KEY: {"sub": "alice"},
    }
    assert with_identity(merged, None) == {"s": 1, "p": 2}
    assert merged is not None and merged[AUTH_METADATA_KEY] == "mallory"  # input untouched
    assert with_identity(None, None) == {}


def test_protect_reserved_drops_only_reserved_keys() -> None:
    meta = {AUTH_METADATA_KEY: 1, "x": 2, "y": 3}
    assert protect_reserved(meta) == {"x": 2, "y": 3}
    assert protect_reserved(meta, {"x"}) == {AUTH_METADATA_KEY: 1, "y": 3}
    assert protect_reserved(None) == {}


# -- transition events -----------------------------------------------------------------


def test_transitions_between() -> None:
    created = _task(S.SUBMITTED)
    assert transitions_between(None, created) == TransitionEvent(
        task_id="t1", from_state=None, to_state=S.SUBMITTED, timestamp=T0
    )
    later = T0 + timedelta(seconds=5)
    working = apply_status(created, TaskStatus(state=S.WORKING, timestamp=later))
    assert transitions_between(created, working) == TransitionEvent(
        task_id="t1", from_state=S.SUBMITTED, to_state=S.WORKING, timestamp=later
    )
    again = apply_status(working, TaskStatus(state=S.WORKING, message=_msg("p", Role.AGENT)))
    assert transitions_between(working, again) is None
    with pytest.raises(ValueError):
        transitions_between(replace(created, id="t2"), working)


def test_data_parts_survive_an_append() -> None:
    first = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id="d", parts=[DataPart(data={"n": 1})]),
    )
    task = apply_event(_task(S.WORKING), first)
    task = apply_event(task, replace(first, append=True))
    assert task.artifacts[0].parts == (DataPart(data={"n": 1}), DataPart(data={"n": 1}))
