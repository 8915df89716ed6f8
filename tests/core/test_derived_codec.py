"""A model no hand-written codec names gets one from its fields (a2a_core/wire/_derived.py):
decoder, writer and caps; what cannot be derived is refused when the entry is built."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from a2a_core import wire
from a2a_core._jsonvalue import JSONValue
from a2a_core.auth import AuthorizeOperation
from a2a_core.errors import InvalidParamsError
from a2a_core.models import Task, TaskState, TaskStatus
from a2a_core.optable import Limits, OperationSpec
from a2a_core.wire._codecs import encode_model, result_decoder


@dataclass(frozen=True, slots=True)
class Inner:
    label: str
    count: int | None = None


@dataclass(frozen=True, slots=True)
class ProbeRequest:
    task_id: str
    flag: bool | None = None
    tags: tuple[str, ...] = ()
    inner: Inner | None = None
    inners: tuple[Inner, ...] = ()
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None


@dataclass(frozen=True, slots=True)
class ProbeResult:
    task: Task
    note: str | None = None


PROBE: OperationSpec[ProbeRequest, ProbeResult] = OperationSpec(
    name="Probe", name_0_3="tasks/probe", request=ProbeRequest, results=(ProbeResult,),
    encode_result=encode_model, decode_result=result_decoder(ProbeResult), authorize="probe",
)

TASK = Task(id="tsk-1", context_id="ctx-1", status=TaskStatus(state=TaskState.COMPLETED))


def test_a_request_is_decoded_from_its_fields_in_either_spelling() -> None:
    params: dict[str, JSONValue] = {
        "taskId": "tsk-1", "flag": True, "tags": ["a", "b"], "inner": {"label": "x", "count": 2},
        "inners": [{"label": "y"}], "metadata": {"k": 1}, "tenant": "t"}
    request = wire.decode_params(PROBE, params, "1.0")
    assert request == ProbeRequest(task_id="tsk-1", flag=True, tags=("a", "b"),
                                   inner=Inner("x", 2), inners=(Inner("y"),),
                                   metadata={"k": 1}, tenant="t")
    snake = wire.decode_params(PROBE, {"task_id": "tsk-1", "inner": {"label": "x"}}, "0.3")
    assert snake == ProbeRequest(task_id="tsk-1", inner=Inner("x"))


def test_the_writer_and_the_client_decoder_agree_in_both_versions() -> None:
    request = ProbeRequest(task_id="tsk-1", tags=("a",), inner=Inner("x"), tenant="t")
    assert wire.encode_params(PROBE, request, "1.0") == {
        "taskId": "tsk-1", "tags": ["a"], "inner": {"label": "x"}, "tenant": "t"}
    assert "tenant" not in wire.encode_params(PROBE, request, "0.3")  # 0.3 has none
    result = ProbeResult(task=TASK, note="n")
    for version in ("0.3", "1.0"):
        encoded = wire.encode_result(PROBE, result, version)
        # A nested model is written by its own (hand-written) codec, in the version's shape.
        assert encoded["task"] == wire.encode(TASK, version)
        assert wire.decode_result(PROBE, encoded, version) == result


def test_a_missing_or_misshapen_member_is_an_invalid_params_error() -> None:
    with pytest.raises(InvalidParamsError, match="taskId"):
        wire.decode_params(PROBE, {"flag": True}, "1.0")
    with pytest.raises(InvalidParamsError, match="flag"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "flag": "yes"}, "1.0")
    with pytest.raises(InvalidParamsError, match=r"inner\.label"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "inner": {}}, "1.0")


def test_the_derived_caps_and_the_task_id_rule() -> None:
    with pytest.raises(InvalidParamsError, match="tags"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "tags": ["t"] * 65}, "1.0")
    with pytest.raises(InvalidParamsError, match=r"tags\[0\]"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "tags": ["t" * 257]}, "1.0")
    deep: dict[str, JSONValue] = {}
    node = deep
    for _ in range(20):
        node["d"] = {}
        node = node["d"]  # type: ignore[assignment]
    with pytest.raises(InvalidParamsError, match="metadata"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "metadata": deep}, "1.0")
    with pytest.raises(InvalidParamsError, match="tenant"):
        wire.decode_params(PROBE, {"taskId": "tsk-1", "tenant": ".."}, "1.0")
    with pytest.raises(InvalidParamsError, match="taskId"):  # the id a request names
        wire.decode_params(PROBE, {"taskId": "x" * 200}, "1.0")


def test_a_limits_member_still_wins_over_the_derived_caps() -> None:
    capped = OperationSpec(name="Capped", name_0_3=None, request=ProbeRequest,
                           results=(ProbeResult,), encode_result=encode_model,
                           decode_result=result_decoder(ProbeResult), limits=Limits.TENANT_ONLY)
    # TENANT_ONLY caps no list: the 65 tags the derived caps refuse pass.
    assert len(wire.decode_params(capped, {"taskId": "tsk-1", "tags": ["t"] * 65}, "1.0").tags) \
        == 65


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True, slots=True)
class Painted:
    colour: Colour


def test_what_cannot_be_derived_is_refused_when_the_entry_is_built() -> None:
    with pytest.raises(TypeError, match=r"Painted\.colour"):
        OperationSpec(name="Paint", name_0_3=None, request=Painted, results=(Task,),
                      encode_result=encode_model, decode_result=result_decoder(Task))


def test_an_authorization_kind_of_its_own_is_a_string_like_the_others() -> None:
    assert PROBE.authorize == "probe"
    assert AuthorizeOperation.GET == "get" and isinstance(AuthorizeOperation.GET, str)
