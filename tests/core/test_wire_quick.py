"""The one-pass reading of plain SendMessage params agrees with the two passes it stands in for.

``quick_send_request`` (a2a_core/wire/_quick.py) must return exactly the request that the
tolerant decoder and the caps return, or None; it never raises. Generated params near the
plain shape (odd spellings, nulls, wrong kinds, values at and past each cap) are read both
ways: whenever the quick reading answers, the long way answers the same request.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import wire
from a2a_core.errors import InvalidParamsError
from a2a_core.optable import Operation
from a2a_core.wire._quick import quick_send_request

SEND = Operation.SEND_MESSAGE
#: The same entry without its one-pass reader: decode_params then takes the long way.
LONG_SEND = dataclasses.replace(SEND, quick_decode=None)


def _long_way(params: Any, version: str, max_parts: int) -> Any:
    """decode_params with the quick reading turned off: the request, or the error."""
    try:
        return wire.decode_params(LONG_SEND, params, version, max_parts=max_parts)
    except InvalidParamsError as err:
        return err


# -- the plain shapes are read quickly -----------------------------------------------------

PLAIN = [
    {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
    {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                 "parts": [{"kind": "text", "text": "hi"}], "contextId": "c-1"},
     "configuration": {"acceptedOutputModes": ["text/plain"], "blocking": True}},
    {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": "tsk-1", "contextId": "c",
                 "parts": [{"text": "a", "mediaType": "text/plain", "metadata": {"k": 1}},
                           {"text": ""}], "metadata": {"x": [1, {"y": None}]},
                 "referenceTaskIds": [], "extensions": []},
     "configuration": {"returnImmediately": True, "historyLength": 0},
     "metadata": {"trace": "t"}, "tenant": "acme"},
]


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("params", PLAIN)
def test_plain_sends_are_read_in_one_pass(params: dict[str, Any], version: str) -> None:
    quick = quick_send_request(params, 256)
    assert quick is not None
    assert wire.decode_params(SEND, params, version) == quick == _long_way(params, version, 256)


# -- and never differ from the long way ---------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda kids: st.lists(kids, max_size=2) | st.dictionaries(st.text(max_size=2), kids,
                                                              max_size=2),
    max_leaves=4,
)
small_metadata = st.dictionaries(st.text(max_size=3), json_values, max_size=2)
deep: dict[str, Any] = {}
for _ in range(17):
    deep = {"d": deep}

#: Valid params of the plain shape ...
valid_parts = st.fixed_dictionaries({"text": st.text(max_size=4)}, optional={
    "kind": st.just("text"), "mediaType": st.sampled_from(["text/plain", ""]),
    "metadata": small_metadata,
})
valid_messages = st.fixed_dictionaries({
    "messageId": st.sampled_from(["m-1", "x" * 256]),
    "role": st.sampled_from(["ROLE_USER", "user", "ROLE_AGENT"]),
    "parts": st.lists(valid_parts, min_size=1, max_size=3),
}, optional={
    "contextId": st.sampled_from(["c-1", "", "x" * 256]),
    "taskId": st.sampled_from(["tsk-1", "t.1", "", "x" * 128]),
    "metadata": small_metadata,
    "kind": st.just("message"),
    "referenceTaskIds": st.just([]),
    "extensions": st.just([]),
})
valid_configurations = st.fixed_dictionaries({}, optional={
    "acceptedOutputModes": st.lists(st.sampled_from(["text/plain", "x" * 255]), max_size=2),
    "blocking": st.booleans(),
    "returnImmediately": st.booleans(),
    "historyLength": st.integers(0, 3) | st.just(2**31 - 1),
})
valid_params = st.fixed_dictionaries({"message": valid_messages}, optional={
    "configuration": valid_configurations,
    "metadata": small_metadata,
    "tenant": st.sampled_from(["acme", "x" * 256]),
})

#: ... and what may be put in any of their objects: other spellings, nulls, wrong kinds,
#: values just past a cap.
KEYS = ["message", "configuration", "metadata", "tenant", "messageId", "message_id", "role",
        "parts", "contextId", "context_id", "taskId", "task_id", "referenceTaskIds",
        "extensions", "kind", "text", "mediaType", "mimeType", "media_type", "data", "url",
        "raw", "file", "type", "acceptedOutputModes", "blocking", "returnImmediately",
        "historyLength", "pushNotificationConfig", "ifGenerationMatch", "other"]
odd_values = st.one_of(
    st.none(), st.integers(-1, 3), st.booleans(), st.just(1.5), st.text(max_size=3),
    st.sampled_from(["", " ", ".", "..", " . ", "ROLE_USER", "user", "agent", "USER", "x",
                     "text", "data", "file", "message", "task", ".bad", "a/b", "a..b",
                     "text/plain", "3", "x" * 129, "x" * 256, "x" * 257]),
    st.lists(st.sampled_from(["tsk-1", "a/b", "text/plain", "x" * 256, 3]), max_size=2),
    st.just(["a"] * 65), st.just(2**31), st.just({}), st.just(deep),
    st.just({"big": "x" * (64 * 1024)}), st.just({"url": "https://x.test/hook"}),
    st.just([{"text": "a"}, {"text": "b"}, {"text": "c"}]), st.just([]), st.just([{}]),
    small_metadata,
).map(copy.deepcopy)  # a fresh object each time: a later change may go into it


def _objects(value: Any) -> list[dict[str, Any]]:
    """Every object in ``value`` (itself included), where a change may go."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found += _objects(item)
    elif isinstance(value, list):
        for item in value:
            found += _objects(item)
    return found


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(params=valid_params, data=st.data(), version=st.sampled_from(["1.0", "0.3"]),
       max_parts=st.sampled_from([1, 2, 256]))
def test_the_quick_reading_answers_what_the_long_way_answers(
    params: dict[str, Any], data: st.DataObject, version: str, max_parts: int
) -> None:
    for _ in range(data.draw(st.integers(0, 2))):
        target = data.draw(st.sampled_from(_objects(params)))
        target[data.draw(st.sampled_from(KEYS))] = data.draw(odd_values)
    quick = quick_send_request(params, max_parts)
    if quick is not None:
        assert _long_way(params, version, max_parts) == quick
