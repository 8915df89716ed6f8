"""An app's settings are data: a few keywords and frozen, validated groups, one way each."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.push import PushPlanner
from a2a_wsgi.settings import (
    CardSettings,
    LimitSettings,
    ProtocolSettings,
    RuntimeSettings,
    StreamSettings,
)


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


def test_the_app_keeps_its_keywords_and_groups_as_one_value() -> None:
    app = A2AApp(Echo(), base_url="https://a.example/", push=True,
                 card=CardSettings(path=None, trusted_hosts=("a.example",)),
                 limits=LimitSettings(max_parts=3),
                 streams=StreamSettings(heartbeat_interval=2.0),
                 runtime=RuntimeSettings(lease_seconds=5), inspector=True)
    settings = app.settings
    assert settings.base_url == app.base_url == "https://a.example/"
    assert settings.card.path is None and settings.card.trusted_hosts == ("a.example",)
    assert settings.limits.max_parts == 3 and settings.streams.heartbeat_interval == 2.0
    assert settings.runtime.lease_seconds == 5
    assert settings.push is not None and settings.inspector is True
    assert A2AApp(Echo()).settings == A2AApp(Echo()).settings  # one default each, comparable


@pytest.mark.parametrize("name", ["max_part", "heartbeat_interval", "runtime_options",
                                  "agent_card_opts"])
def test_an_option_outside_the_keywords_is_refused_by_name(name: str) -> None:
    """The flat style is gone: an option lives in its group only."""
    with pytest.raises(TypeError, match=name):
        A2AApp(Echo(), **{name: 3})


def test_the_runtime_settings_are_typed_fields_not_a_mapping() -> None:
    names = {f.name for f in dataclasses.fields(RuntimeSettings)}
    assert "options" not in names
    assert {"lease_seconds", "retention", "max_history", "retry_wait_timeout",
            "long_poll_timeout", "push_planner", "owner_key"} <= names
    with pytest.raises(TypeError):
        RuntimeSettings(lease_secs=5)  # type: ignore[call-arg]


@pytest.mark.parametrize("build", [
    lambda: LimitSettings(max_parts=0),
    lambda: LimitSettings(max_body_bytes=-1),
    lambda: StreamSettings(heartbeat_interval=0),
    lambda: ProtocolSettings(bindings=("GRPC",)),
    lambda: ProtocolSettings(versions=()),
    lambda: RuntimeSettings(lease_seconds=0),
    lambda: RuntimeSettings(retry_wait_timeout=-1),
    lambda: CardSettings(overrides={"nmae": "typo"}),
])
def test_bad_values_are_refused_when_the_settings_are_made(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


def test_settings_are_frozen_and_copied_with_replace() -> None:
    settings = A2AApp(Echo(), card=CardSettings(path="card.json")).settings
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.card.path = "other.json"  # type: ignore[misc]
    other = dataclasses.replace(settings, limits=LimitSettings(max_parts=4))
    assert other.card == settings.card and other.limits.max_parts == 4


def test_a_planner_of_ones_own_beside_push_true() -> None:
    """The docs' combination: push=True with the runtime's own planner and pool size."""
    planner = PushPlanner()
    app = A2AApp(Echo(), push=True,
                 runtime=RuntimeSettings(max_workers=3, push_planner=planner))
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    answer = Client(app).post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert app.runtime._pool._max_workers == 3  # type: ignore[attr-defined]
    assert app.runtime._updates._push_planner is planner  # type: ignore[attr-defined]
    app.close()


def test_the_inspector_is_off_by_default_and_served_to_loopback_when_on() -> None:
    environ = {"REMOTE_ADDR": "127.0.0.1"}
    off = Client(A2AApp(Echo())).get("/inspector/", environ_overrides=environ)
    assert off.status_code == 404
    on = A2AApp(Echo(), inspector=True)
    page = Client(on).get("/inspector/", environ_overrides=environ,
                          headers={"Host": "127.0.0.1"})
    assert page.status_code == 200 and b"<html" in page.get_data().lower()
    remote = Client(on).get("/inspector/", environ_overrides={"REMOTE_ADDR": "203.0.113.9"},
                            headers={"Host": "agents.example"})
    assert remote.status_code == 403
