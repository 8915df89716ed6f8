"""What the client takes where a model is expected, what it logs, and how its enums print.

Against examples/echo.py over HTTP: a push config given as a dict or a URL is the one
the server stores; a wrong type is a TypeError naming it, before any request.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
import requests

from a2a_client import A2AClient
from a2a_core.models import PushNotificationConfig, Role, Task, TaskState, TextPart
from a2a_core.wire import encode


def _task(client: A2AClient) -> Task:
    task = client.send_message("hi")
    assert isinstance(task, Task)
    return task


def test_a_push_config_may_be_a_dict_or_a_url(echo_url: str) -> None:
    with A2AClient(echo_url) as client:
        task_id = _task(client).id
        given: list[Any] = [
            {"url": "https://example.com/a", "token": "t", "id": "a"},
            {"url": "https://example.com/b", "id": "b",
             "authentication": {"schemes": ["Bearer"], "credentials": "c"}},
            "https://example.com/c",
            PushNotificationConfig(url="https://example.com/d", id="d"),
        ]
        made = [client.create_task_push_notification_config(task_id, value) for value in given]
        stored = {c.push_notification_config.url: c.push_notification_config
                  for c in client.list_task_push_notification_configs(task_id)}
    assert [c.push_notification_config.url for c in made] == [
        f"https://example.com/{x}" for x in "abcd"]
    assert stored["https://example.com/a"].token == "t"
    auth = stored["https://example.com/b"].authentication
    # (the server masks stored credentials in its answers)
    assert auth is not None and auth.schemes == ("Bearer",) and auth.credentials


def test_a_push_config_of_another_type_is_a_type_error_naming_it(echo_url: str) -> None:
    with A2AClient(echo_url) as client:
        with pytest.raises(TypeError, match="PushNotificationConfig, a dict or a URL string, "
                                            "not int"):
            client.create_task_push_notification_config("tsk-x", 42)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"config\.url: required field is missing"):
            client.create_task_push_notification_config("tsk-x", {"token": "t"})
        with pytest.raises(TypeError, match="not list"):
            client.send_message("hi", push_notification_config=["https://x"])  # type: ignore[arg-type]


def test_a_message_and_a_list_request_may_be_dicts(echo_url: str) -> None:
    with A2AClient(echo_url) as client:
        answer = client.send_message(
            {"messageId": "m-dict", "role": "ROLE_USER", "parts": [{"text": "from a dict"}]},
            context_id="ctx-dicts")
        assert isinstance(answer, Task)
        assert answer.artifacts[0].parts == (TextPart(text="from a dict"),)
        page = client.list_tasks_page({"contextId": "ctx-dicts", "pageSize": 1})
        assert [t.id for t in page.tasks] == [answer.id]
        with pytest.raises(TypeError, match="message must be a str, a Message or a dict, "
                                            "not bytes"):
            client.send_message(b"hi")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="ListTasksRequest or a dict, not str"):
            client.list_tasks_page("ctx")  # type: ignore[arg-type]


def test_waiting_on_a_settled_task_logs_the_subscribe_fallback_at_debug_only(
        echo_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """SubscribeToTask on a finished task answers -32004: expected, so DEBUG, not INFO."""
    with A2AClient(echo_url) as client:
        task_id = _task(client).id
        with caplog.at_level(logging.DEBUG, logger="a2a_client"):
            settled = client.wait(task_id)
    assert settled.status.state is TaskState.COMPLETED
    fallback = [r for r in caplog.records if "polling instead" in r.getMessage()]
    assert len(fallback) == 1 and fallback[0].levelno == logging.DEBUG
    assert "-32004" in fallback[0].getMessage() or "terminal state" in fallback[0].getMessage()
    assert [r for r in caplog.records if r.levelno >= logging.INFO] == []


def test_enums_print_as_the_spec_spells_them_and_the_wire_is_unchanged(echo_url: str) -> None:
    assert [str(state) for state in TaskState] == [
        "submitted", "working", "input-required", "auth-required", "completed", "canceled",
        "failed", "rejected", "unknown"]
    assert f"{TaskState.COMPLETED} by {Role.AGENT}, asked by {Role.USER}" == (
        "completed by agent, asked by user")
    with A2AClient(echo_url) as client:
        task = _task(client)
    assert str(task.status.state) == "completed"
    assert encode(task, "1.0")["status"]["state"] == "TASK_STATE_COMPLETED"
    assert encode(task, "0.3")["status"]["state"] == "completed"
    assert encode(task.history[0], "1.0")["role"] == "ROLE_USER"
    assert encode(task.history[0], "0.3")["role"] == "user"


def test_a_card_may_be_its_json_and_anything_else_is_a_type_error(echo_url: str) -> None:
    document = requests.get(f"{echo_url}/.well-known/agent-card.json", timeout=10).json()
    with A2AClient(document) as client:
        assert client.card.name == "Echo Agent"
        assert isinstance(client.send_message("from a dict card"), Task)
    with pytest.raises(TypeError, match="URL string, an AgentCard or a dict, not bytes"):
        A2AClient(echo_url.encode())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="url_or_card: not a valid AgentCard"):
        A2AClient({"name": 3})
