"""Extension negotiation: header parsing, activation, hooks, card merge, timestamps."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core.errors import ExtensionSupportRequiredError, RPCError, UnsupportedOperationError
from a2a_core.extensions import (
    TIMESTAMP_EXTENSION_URI,
    ActivatedExtensions,
    Activation,
    Extension,
    TimestampExtension,
    format_extensions_header,
    merge_card_extensions,
    negotiate_extensions,
    parse_extensions_header,
)
from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

A, B, C = "urn:a", "urn:b", "urn:c"


class Recording(Extension):
    """A real subclass that records the calls it gets and tags what passes through."""

    def __init__(self, uri: str, log: list[str], *, required: bool = False, skip: bool = False):
        self.uri = uri
        self.required = required
        self.skip = skip
        self.log = log

    def activate(self, requested: tuple[str, ...], context: Mapping[str, Any]) -> Activation | None:
        self.log.append(f"activate {self.uri}")
        if self.skip:
            return None
        return Activation(uri=self.uri, value={"user": context.get("user"), "seen": requested})

    def handle_request(
        self, message: Message, params: dict[str, Any], activation: Activation
    ) -> tuple[Message, dict[str, Any]]:
        self.log.append(f"request {self.uri}")
        trail = [*params.get("trail", []), self.uri]
        return message, {**params, "trail": trail}

    def handle_response(self, result: Any, params: dict[str, Any], activation: Activation) -> Any:
        self.log.append(f"response {self.uri}")
        return [*result, self.uri]


class Refusing(Extension):
    uri = "urn:refuse"

    def activate(self, requested: tuple[str, ...], context: Mapping[str, Any]) -> Activation | None:
        raise UnsupportedOperationError("urn:refuse needs a newer client")


class Plain(Extension):
    """Overrides nothing but the attributes."""

    uri = "urn:plain"
    description = "plain"
    params = {"level": 2}


def _message(**kwargs: Any) -> Message:
    return Message(message_id="m1", role=Role.USER, parts=[TextPart(text="hi")], **kwargs)


def _task(**kwargs: Any) -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.COMPLETED), **kwargs)


# -- header -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (None, ()),
        ("", ()),
        ([], ()),
        ("urn:a", (A,)),
        ("urn:a,urn:b", (A, B)),
        (" urn:a , ,urn:b,, ", (A, B)),
        ("urn:b, urn:a, urn:b", (B, A)),
        (["urn:a, urn:b", "urn:c", " urn:a"], (A, B, C)),
        (("urn:c", "", "  ,  "), (C,)),
        (iter(["urn:a", "urn:a"]), (A,)),
        ("https://x.example/ext/v1 , urn:A", ("https://x.example/ext/v1", "urn:A")),
    ],
)
def test_parse_extensions_header(values: Any, expected: tuple[str, ...]) -> None:
    assert parse_extensions_header(values) == expected


def test_format_extensions_header() -> None:
    assert format_extensions_header([A, B]) == "urn:a, urn:b"
    assert format_extensions_header([]) == ""
    for bad in ["urn:a,urn:b", "urn:a\r\nX-Evil: 1", "urn:\n"]:
        with pytest.raises(ValueError):
            format_extensions_header([bad])


uri_text = (
    st.text(st.characters(exclude_characters=",\r\n", codec="utf-8"), min_size=1)
    .map(str.strip)
    .filter(bool)
)


@given(st.lists(uri_text, max_size=6))
def test_format_then_parse_round_trip(uris: list[str]) -> None:
    assert parse_extensions_header(format_extensions_header(uris)) == tuple(dict.fromkeys(uris))


# -- negotiation --------------------------------------------------------------------------


def test_required_extension_missing() -> None:
    log: list[str] = []
    configured = [
        Recording(A, log, required=True),
        Recording(B, log),
        Recording(C, log, required=True),
    ]
    with pytest.raises(ExtensionSupportRequiredError) as info:
        negotiate_extensions((B,), configured, {})
    error = info.value
    assert error.code == -32008
    assert error.message == "Client missing required extensions: urn:a, urn:c"
    assert error.metadata == {"extensions": "urn:a, urn:c"}
    assert error.data == {"extensions": [A, C]}
    assert log == []  # nothing was activated before refusing


def test_required_extension_requested_is_fine() -> None:
    log: list[str] = []
    active = negotiate_extensions((A,), [Recording(A, log, required=True)], {})
    assert active.uris == (A,)


def test_activation_follows_configured_order_and_ignores_unknown_uris() -> None:
    log: list[str] = []
    configured = [Recording(A, log), Recording(B, log), Recording(C, log)]
    active = negotiate_extensions(("urn:unknown", C, A), configured, {"user": "ann"})
    assert log == [f"activate {A}", f"activate {C}"]
    assert active.uris == (A, C)
    assert active.header_value() == "urn:a, urn:c"
    assert active.by_uri[A] == {"user": "ann", "seen": ("urn:unknown", C, A)}
    assert A in active and B not in active and len(active) == 2
    with pytest.raises(TypeError):
        active.by_uri[B] = 1  # type: ignore[index]


def test_skipped_extensions_are_not_active() -> None:
    log: list[str] = []
    configured = [Recording(A, log, skip=True), Recording(B, log)]
    active = negotiate_extensions((A, B), configured)
    assert log == [f"activate {A}", f"activate {B}"]
    assert active.uris == (B,)
    assert dict(active.by_uri) == {B: {"user": None, "seen": (A, B)}}


def test_nothing_active_means_no_header() -> None:
    active = negotiate_extensions((), [Plain()])
    assert active.uris == ()
    assert active.header_value() is None
    assert ActivatedExtensions().header_value() is None


def test_an_activation_error_aborts_the_negotiation() -> None:
    log: list[str] = []
    configured = [Recording(A, log), Refusing(), Recording(B, log)]
    with pytest.raises(UnsupportedOperationError) as info:
        negotiate_extensions((A, "urn:refuse", B), configured)
    assert isinstance(info.value, RPCError)
    assert log == [f"activate {A}"]


def test_default_activation_has_value_none() -> None:
    active = negotiate_extensions(("urn:plain",), [Plain()])
    assert active.pairs[0][1] == Activation(uri="urn:plain", value=None)
    assert dict(active.by_uri) == {"urn:plain": None}


def test_misconfiguration_is_a_programming_error() -> None:
    log: list[str] = []
    with pytest.raises(ValueError):
        negotiate_extensions((A,), [Recording(A, log), Recording(A, log)])

    class NoUri(Extension):
        pass

    with pytest.raises(TypeError):
        negotiate_extensions((), [NoUri()])
    with pytest.raises(TypeError):
        NoUri().declaration()

    class WrongUri(Extension):
        uri = "urn:right"

        def activate(self, requested: tuple[str, ...], context: Mapping[str, Any]) -> Activation:
            return Activation(uri="urn:wrong")

    with pytest.raises(ValueError):
        negotiate_extensions(("urn:right",), [WrongUri()])


def test_hooks_run_in_order_and_chain() -> None:
    log: list[str] = []
    active = negotiate_extensions((A, B, C), [Recording(C, log), Recording(A, log)])
    message = _message()
    new_message, params = active.apply_request(message, {"trail": ["start"]})
    assert new_message is message
    assert params == {"trail": ["start", C, A]}
    assert active.apply_response([], params) == [C, A]
    assert log[2:] == [f"request {C}", f"request {A}", f"response {C}", f"response {A}"]


def test_default_hooks_leave_things_unchanged() -> None:
    active = negotiate_extensions(("urn:plain",), [Plain()])
    message, params, task = _message(), {"k": 1}, _task()
    assert active.apply_request(message, params) == (message, params)
    assert active.apply_response(task, params) is task


# -- agent card ---------------------------------------------------------------------------


def test_declaration_from_attributes() -> None:
    assert Plain().declaration() == AgentExtension(
        uri="urn:plain", description="plain", required=False, params={"level": 2}
    )
    log: list[str] = []
    assert Recording(A, log, required=True).declaration() == AgentExtension(uri=A, required=True)


def test_merge_card_extensions_without_duplicates() -> None:
    mine = AgentExtension(uri="urn:plain", description="declared on the card", required=True)
    card = AgentCard(name="x", capabilities=AgentCapabilities(streaming=True, extensions=[mine]))
    log: list[str] = []
    merged = merge_card_extensions(card, [Plain(), Recording(A, log), Recording(A, log)])
    assert merged.capabilities.extensions == (mine, AgentExtension(uri=A))
    assert merged.capabilities.streaming is True
    assert merged.name == "x"
    assert card.capabilities.extensions == (mine,)  # the original is untouched
    assert merge_card_extensions(merged, [Plain(), Recording(A, log)]) is merged


# -- the timestamp extension --------------------------------------------------------------


class Clock:
    """A deterministic clock: each call is one second after the previous one."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        current = self.now
        self.now += timedelta(seconds=1)
        return current


def test_timestamp_extension_stamps_request_and_response() -> None:
    clock = Clock(datetime(2025, 1, 2, 3, 4, 5, 678900, tzinfo=timezone(timedelta(hours=2))))
    extension = TimestampExtension(clock)
    assert extension.declaration().uri == TIMESTAMP_EXTENSION_URI
    active = negotiate_extensions((TIMESTAMP_EXTENSION_URI,), [extension])
    received = {"received_at": "2025-01-02T01:04:05.678Z"}
    assert active.by_uri[TIMESTAMP_EXTENSION_URI] == received

    message = _message(metadata={"keep": 1, TIMESTAMP_EXTENSION_URI: {"client": "x"}})
    stamped, params = active.apply_request(message, {"p": 1})
    assert params == {"p": 1}
    assert stamped.metadata == {"keep": 1, TIMESTAMP_EXTENSION_URI: {"client": "x", **received}}
    assert stamped.extensions == (TIMESTAMP_EXTENSION_URI,)
    assert message.metadata == {"keep": 1, TIMESTAMP_EXTENSION_URI: {"client": "x"}}

    task = active.apply_response(_task(metadata={"other": True}), params)
    assert task.metadata == {
        "other": True,
        TIMESTAMP_EXTENSION_URI: {**received, "completed_at": "2025-01-02T01:04:06.678Z"},
    }


def test_timestamp_extension_details() -> None:
    clock = Clock(datetime(2030, 6, 1, tzinfo=timezone.utc))
    active = negotiate_extensions((TIMESTAMP_EXTENSION_URI,), [TimestampExtension(clock)])
    stamped, _ = active.apply_request(_message(extensions=[TIMESTAMP_EXTENSION_URI]), {})
    assert stamped.extensions == (TIMESTAMP_EXTENSION_URI,)
    reply = _message()
    assert active.apply_response(reply, {}) is reply  # only Tasks get completed_at
    task = active.apply_response(_task(), {})
    assert task.metadata[TIMESTAMP_EXTENSION_URI]["completed_at"] == "2030-06-01T00:00:01.000Z"

    naive = TimestampExtension(lambda: datetime(2030, 6, 1))
    with pytest.raises(ValueError):
        negotiate_extensions((TIMESTAMP_EXTENSION_URI,), [naive])
