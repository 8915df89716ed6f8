"""Authorization decisions: callback forms, allow/deny/error answers, list filtering."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import FrozenInstanceError
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core._tasks import new_task
from a2a_core.auth import (
    Authenticator,
    AuthorizationContext,
    AuthorizeOperation,
    Principal,
    authorize,
    filter_authorized,
)
from a2a_core.errors import (
    InvalidParamsError,
    RPCError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import Message, Role, Task, TextPart
from a2a_core.optable import OPERATIONS, Operation

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
CTX = AuthorizationContext(metadata={"tenant": "acme"}, params={"id": "t1"}, identity="alice")
OP = AuthorizeOperation


def _task(task_id: str = "t1", owner: str = "alice") -> Task:
    msg = Message(message_id="m", role=Role.USER, parts=[TextPart(text="hi")])
    return new_task(
        task_id=task_id, context_id="c", message=msg, timestamp=T0, metadata={"owner": owner}
    )


def _denied(exc: BaseException) -> bool:
    """Indistinguishable from the error for a task that does not exist."""
    missing = TaskNotFoundError()
    return (
        type(exc) is TaskNotFoundError
        and exc == missing
        and str(exc) == str(missing)
        and (exc.code, exc.message, exc.data) == (missing.code, missing.message, missing.data)
        and exc.metadata == {} == missing.metadata
    )


# -- callback forms --------------------------------------------------------------------


class Recorder:
    """Records the arguments each form receives."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def three(self, operation: OP, task: Task, context: AuthorizationContext) -> object:
        self.calls.append((operation, task, context))
        return True

    def two(self, operation: OP, task: Task) -> object:
        self.calls.append((operation, task))
        return True


class CallableThree(Recorder):
    def __call__(self, operation: OP, task: Task, context: AuthorizationContext) -> object:
        return self.three(operation, task, context)


class CallableTwo(Recorder):
    def __call__(self, operation: OP, task: Task) -> object:
        return self.two(operation, task)


def _lambda_form(arity: int) -> tuple[str, Recorder, Any, int]:
    """Lambdas closing over a recorder (a default argument would add a parameter)."""
    r = Recorder()
    if arity == 3:
        return ("lambda/3", r, lambda o, t, c: r.three(o, t, c), 3)
    return ("lambda/2", r, lambda o, t: r.two(o, t), 2)


def _forms() -> list[tuple[str, Recorder, Any, int]]:
    """(name, recorder, callback, expected arity) for every callable shape."""
    forms: list[tuple[str, Recorder, Any, int]] = []
    r = Recorder()
    forms.append(("bound method/3", r, r.three, 3))
    r = Recorder()
    forms.append(("bound method/2", r, r.two, 2))
    c3 = CallableThree()
    forms.append(("__call__/3", c3, c3, 3))
    c2 = CallableTwo()
    forms.append(("__call__/2", c2, c2, 2))
    forms.append(_lambda_form(3))
    forms.append(_lambda_form(2))
    r = Recorder()
    forms.append(("partial/3", r, functools.partial(Recorder.three, r), 3))
    r = Recorder()
    forms.append(("varargs", r, lambda *a, r=r: r.three(*a), 3))
    r = Recorder()
    forms.append(("optional context", r, lambda o, t, c=None, r=r: r.three(o, t, c), 3))
    return forms


@pytest.mark.parametrize(
    ("recorder", "callback", "arity"), [f[1:] for f in _forms()], ids=[f[0] for f in _forms()]
)
def test_callback_forms_get_the_arguments_they_accept(
    recorder: Recorder, callback: Any, arity: int
) -> None:
    task = _task()
    authorize(callback, OP.CANCEL, task, CTX)
    assert recorder.calls == [(OP.CANCEL, task, CTX)[:arity]]


def test_plain_functions() -> None:
    seen: list[object] = []

    def three(operation: OP, task: Task, context: AuthorizationContext) -> bool:
        seen.append(context.identity)
        return task.metadata is not None and task.metadata["owner"] == context.identity

    def two(operation: OP, task: Task) -> bool:
        seen.append(operation)
        return operation is OP.GET

    authorize(three, OP.GET, _task(owner="alice"), CTX)
    with pytest.raises(TaskNotFoundError):
        authorize(three, OP.GET, _task(owner="bob"), CTX)
    authorize(two, OP.GET, _task(), CTX)
    with pytest.raises(TaskNotFoundError):
        authorize(two, OP.PUSH_SET, _task(), CTX)
    assert seen == ["alice", "alice", OP.GET, OP.PUSH_SET]


@pytest.mark.parametrize("callback", [lambda: True, lambda o: True, lambda a, b, c, d: True])
def test_wrong_arity_is_a_usage_error(callback: Any) -> None:
    with pytest.raises(TypeError, match="2 or 3"):
        authorize(callback, OP.GET, _task(), CTX)


def test_no_callback_allows_everything() -> None:
    for op in OP:
        authorize(None, op, _task(), CTX)


# -- answers ---------------------------------------------------------------------------

ALLOW = [True, "ok", ("ok", None), ("ok", True), ("ok", {"scope": "read"})]
DENY = [
    False,
    None,
    0,
    1,
    "",
    "OK",
    "yes",
    "true",
    ("ok",),
    ("ok", 1, 2),
    ["ok", 1],
    ("error", "x"),
    ("OK", 1),
    {"ok": True},
    object(),
    TaskNotFoundError,
]


@pytest.mark.parametrize("answer", ALLOW, ids=repr)
def test_allow_forms(answer: object) -> None:
    assert authorize(lambda o, t, c: answer, OP.GET, _task(), CTX) is None


@pytest.mark.parametrize("answer", DENY, ids=repr)
def test_deny_forms_look_like_a_missing_task(answer: object) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        authorize(lambda o, t: answer, OP.GET, _task(), CTX)
    assert _denied(info.value)
    assert info.value.__cause__ is None


@pytest.mark.parametrize(
    "error",
    [
        InvalidParamsError("bad scope"),
        UnsupportedOperationError(),
        TaskNotFoundError("custom"),
        RPCError("teapot", code=-31000),
    ],
)
def test_returned_rpc_error_is_raised_as_is(error: RPCError) -> None:
    with pytest.raises(RPCError) as info:
        authorize(lambda o, t, c: error, OP.CANCEL, _task(), CTX)
    assert info.value is error


def test_raised_rpc_error_propagates() -> None:
    error = InvalidParamsError("nope", data={"field": "id"})

    def callback(operation: OP, task: Task) -> object:
        raise error

    with pytest.raises(InvalidParamsError) as info:
        authorize(callback, OP.GET, _task(), CTX)
    assert info.value is error


@pytest.mark.parametrize("bug", [KeyError("owner"), ValueError("x"), ZeroDivisionError()])
def test_a_buggy_callback_fails_closed(bug: Exception) -> None:
    def callback(operation: OP, task: Task, context: AuthorizationContext) -> object:
        raise bug

    with pytest.raises(TaskNotFoundError) as info:
        authorize(callback, OP.GET, _task(), CTX)
    assert _denied(info.value)
    assert info.value.__cause__ is bug  # kept for the server's log, not sent to the client


def test_base_exceptions_are_not_swallowed() -> None:
    def callback(operation: OP, task: Task) -> object:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        authorize(callback, OP.GET, _task(), CTX)


# -- list filtering --------------------------------------------------------------------


def test_filter_keeps_order_and_drops_denied_and_errors() -> None:
    tasks = [_task(f"t{i}") for i in range(6)]
    answers: dict[str, object] = {
        "t0": True,
        "t1": False,
        "t2": "ok",
        "t3": InvalidParamsError(),
        "t4": ("ok", 1),
        "t5": None,
    }
    seen: list[object] = []

    def callback(operation: OP, task: Task, context: AuthorizationContext) -> object:
        seen.append(operation)
        return answers[task.id]

    kept = filter_authorized(callback, tasks, CTX)
    assert [t.id for t in kept] == ["t0", "t2", "t4"]
    assert seen == [OP.LIST] * 6


def test_filter_reports_callback_bugs_and_drops_those_tasks() -> None:
    tasks = [_task("good"), _task("boom"), _task("rpc")]
    bug = RuntimeError("db down")

    def callback(operation: OP, task: Task) -> object:
        if task.id == "boom":
            raise bug
        if task.id == "rpc":
            raise UnsupportedOperationError()
        return True

    errors: list[tuple[str, Exception]] = []
    kept = filter_authorized(callback, tasks, CTX, on_error=lambda t, e: errors.append((t.id, e)))
    assert [t.id for t in kept] == ["good"]
    assert errors == [("boom", bug)]
    assert [t.id for t in filter_authorized(callback, tasks, CTX)] == ["good"]


def test_filter_without_callback_keeps_everything() -> None:
    tasks = [_task("a"), _task("b")]
    assert filter_authorized(None, iter(tasks), CTX) == tasks


@given(st.lists(st.booleans(), max_size=12), st.booleans())
def test_filter_matches_authorize(allowed: list[bool], two_args: bool) -> None:
    tasks = [_task(f"t{i}") for i in range(len(allowed))]
    decide = {t.id: ok for t, ok in zip(tasks, allowed, strict=True)}
    callback: Any = (
        (lambda o, t: decide[t.id])
        if two_args
        else (lambda o, t, c: "ok" if decide[t.id] else "no")
    )
    expected = []
    for task in tasks:
        try:
            authorize(callback, OP.LIST, task, CTX)
        except TaskNotFoundError:
            continue
        expected.append(task)
    assert filter_authorized(callback, tasks, CTX) == expected
    assert len(expected) == sum(allowed)


# -- operations and identities ---------------------------------------------------------


def test_every_task_operation_needs_an_authorization() -> None:
    named = [op.authorize for op in OPERATIONS if op.authorize is not None]
    assert set(named) == set(OP)
    # A message continuing a task is asked GET (its answer holds the task); the
    # extended card names no task.
    assert Operation.SEND_MESSAGE.authorize is OP.GET
    assert Operation.GET_EXTENDED_AGENT_CARD.authorize is None
    assert {op.value for op in OP} == {
        "get",
        "cancel",
        "list",
        "resubscribe",
        "push_set",
        "push_get",
        "push_list",
        "push_delete",
    }


def test_context_and_principal_are_frozen_values() -> None:
    with pytest.raises(FrozenInstanceError):
        CTX.identity = "mallory"  # type: ignore[misc]
    a, b = Principal(identity="alice"), Principal(identity="alice")
    assert a == b and a.tenant is None and a.claims == {}
    assert a.claims is not b.claims
    assert AuthorizationContext().metadata == {} and AuthorizationContext().identity is None


def test_an_authenticator_feeds_authorize() -> None:
    def bearer(headers: Mapping[str, str]) -> Principal | None:
        value = headers.get("authorization", "")
        return Principal(identity=value[7:], tenant="acme") if value.startswith("Bearer ") else None

    authenticator: Authenticator = bearer

    def owner_only(operation: OP, task: Task, context: AuthorizationContext) -> bool:
        principal = context.identity
        return isinstance(principal, Principal) and (task.metadata or {}).get("owner") == (
            principal.identity
        )

    alice = authenticator({"authorization": "Bearer alice"})
    authorize(owner_only, OP.GET, _task(owner="alice"), AuthorizationContext(identity=alice))
    for who in (authenticator({}), authenticator({"authorization": "Bearer bob"})):
        with pytest.raises(TaskNotFoundError):
            authorize(owner_only, OP.GET, _task(owner="alice"), AuthorizationContext(identity=who))
