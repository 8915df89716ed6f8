"""An app's settings are data: grouped, frozen, validated, with the flat names still working."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.push import PushPlanner
from a2a_wsgi.settings import AppSettings, CardSettings, LimitSettings, StreamSettings


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


def test_the_flat_names_land_in_their_groups() -> None:
    settings = AppSettings.from_options(
        base_url="https://a.example/", agent_card_path=False, max_parts=3,
        heartbeat_interval=2.0, runtime_options={"lease_seconds": 5}, push=True,
        versions=["1.0"], trusted_hosts="a.example", inspector=1)
    assert settings.card.base_url == "https://a.example/" and settings.card.path is None
    assert settings.card.trusted_hosts == ("a.example",)
    assert settings.limits.max_parts == 3 and settings.streams.heartbeat_interval == 2.0
    assert settings.runtime.options == {"lease_seconds": 5}
    assert settings.push is not None and settings.protocol.versions == ("1.0",)
    assert settings.inspector is True
    assert AppSettings.from_options() == AppSettings()  # one default each, comparable


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['max_part'\]"):
        A2AApp(Echo(), max_part=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("build", [
    lambda: LimitSettings(max_parts=0),
    lambda: LimitSettings(max_body_bytes=-1),
    lambda: StreamSettings(heartbeat_interval=0),
    lambda: AppSettings.from_options(bindings=["GRPC"]),
    lambda: AppSettings.from_options(versions=[]),
])
def test_bad_values_are_refused_when_the_settings_are_made(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


def test_settings_are_frozen_and_copied_with_replace() -> None:
    settings = AppSettings(card=CardSettings(base_url="https://a.example/"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.card.base_url = "https://b.example/"  # type: ignore[misc]
    other = dataclasses.replace(settings, limits=LimitSettings(max_parts=4))
    assert other.card == settings.card and other.limits.max_parts == 4


def test_an_app_takes_a_settings_value_and_options_replace_its_fields() -> None:
    base = AppSettings(card=CardSettings(base_url="https://a.example/"),
                       limits=LimitSettings(max_parts=2))
    app = A2AApp(Echo(), base, max_parts=5)
    assert app.settings.card.base_url == "https://a.example/"
    assert app.settings.limits.max_parts == 5 and app.base_url == "https://a.example/"


def test_combinations_the_docs_show_do_not_clash() -> None:
    """A planner of one's own beside push=True, max_workers in both places: the
    deployment's runtime_options win, no TypeError."""
    planner = PushPlanner()
    app = A2AApp(Echo(), push=True, max_workers=2,
                 runtime_options={"push_planner": planner, "max_workers": 3})
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    answer = Client(app).post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert app.runtime._pool._max_workers == 3  # type: ignore[attr-defined]
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
