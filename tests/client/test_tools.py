"""Remote skills as tools: the toolnexus seed's rules (checklist 59-72) and our improvements."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from client_peers import Err, Peer, card_v03, card_v10, task_json
from support.wsgi_server import Served
from werkzeug.wrappers import Response

from a2a_client._errors import HTTPStatusError
from a2a_client.tools import (
    TASK_INPUT_SCHEMA,
    Tool,
    ToolContext,
    agent,
    agent_tools,
    agents_from_config,
    anthropic_tools,
    openai_tools,
    sanitize,
)

SKILLS = [
    {"id": "add", "name": "Add", "description": "Adds numbers", "tags": []},
    {"id": "echo!", "name": "Echo", "description": "", "tags": []},
]


def one_tool(peer: Peer, **options: Any) -> Tool:
    peer.card = lambda url: card_v10(url, skills=SKILLS[:1])
    tools = agent_tools(agent(peer.url + "/", **options))
    assert len(tools) == 1
    return tools[0]


def script(peer: Peer, *states: str, first: str = "TASK_STATE_SUBMITTED", **task: Any) -> None:
    """SendMessage answers ``first``; GetTask walks ``states`` (the last one repeats)."""
    peer.handlers["SendMessage"] = lambda call: {"task": task_json("t1", first)}
    remaining = list(states)

    def get(call: Any) -> Any:
        state = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return task_json("t1", state, **task)

    peer.handlers["GetTask"] = get
    peer.handlers["CancelTask"] = lambda call: task_json("t1", "TASK_STATE_CANCELED")


# -- descriptors and discovery -------------------------------------------------------------


def test_descriptor_is_pure_and_hides_header_values() -> None:
    descriptor = agent(
        "http://127.0.0.1:1/never-contacted", headers={"Authorization": "Bearer literal"}
    )
    assert (descriptor.timeout, descriptor.poll_every) == (300_000, 1_000)
    assert "literal" not in repr(descriptor) and "Authorization" in repr(descriptor)
    with pytest.raises(ValueError):
        agent("")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Calc Agent", "Calc_Agent"), ("echo!", "echo_"), ("a-b_c9", "a-b_c9"), ("ü.x", "__x")],
)
def test_sanitize(text: str, expected: str) -> None:
    assert sanitize(text) == expected


@pytest.mark.parametrize("card", [card_v10, card_v03])
def test_one_tool_per_skill_named_like_the_seed(peer: Peer, card: Any) -> None:
    peer.card = lambda url: card(url, skills=SKILLS)
    tools = agent_tools(agent(peer.url + "/.well-known/agent-card.json"))
    assert [t.name for t in tools] == ["Calc_Agent_add", "Calc_Agent_echo_"]
    assert [t.description for t in tools] == ["Adds numbers", "Echo"]  # falls back to the name
    assert all(t.source == "a2a" and t.input_schema == TASK_INPUT_SCHEMA for t in tools)
    assert len([c for c in peer.calls if c.method == "GET"]) == 1  # the card is fetched once


def test_no_skills_no_tools(peer: Peer) -> None:
    peer.card = lambda url: card_v10(url, skills=[])
    assert agent_tools(agent(peer.url)) == []


def test_card_fetch_failure_raises_http_status(serve: Any) -> None:
    url = serve(lambda environ, start: Response("nope", status=404)(environ, start)).url
    with pytest.raises(HTTPStatusError, match="HTTP 404: nope"):
        agent_tools(agent(url + "/.well-known/agent-card.json"))


def test_function_calling_exports(peer: Peer) -> None:
    tool = one_tool(peer)
    assert openai_tools([tool]) == [
        {
            "type": "function",
            "function": {
                "name": "Calc_Agent_add",
                "description": "Adds numbers",
                "parameters": TASK_INPUT_SCHEMA,
            },
        }
    ]
    assert anthropic_tools([tool]) == [
        {"name": "Calc_Agent_add", "description": "Adds numbers", "input_schema": TASK_INPUT_SCHEMA}
    ]


# -- execute: the seed's outcomes ----------------------------------------------------------


def test_completed_output_and_metadata(peer: Peer) -> None:
    script(peer, "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", output="The sum is 5.")
    result = one_tool(peer, poll_every=10).execute({"task": "add 2 and 3"})
    assert (result.output, result.is_error) == ("The sum is 5.", False)
    assert result.metadata is not None
    assert {k: result.metadata[k] for k in ("agent", "taskId", "state", "polls")} == {
        "agent": "Calc Agent",
        "taskId": "t1",
        "state": "completed",
        "polls": 2,
    }
    assert isinstance(result.metadata["ms"], int) and result.metadata["ms"] >= 0
    send = peer.rpc_calls("SendMessage")
    assert len(send) == 1
    message = send[0].params["message"]
    assert message["role"] == "ROLE_USER" and message["parts"] == [{"text": "add 2 and 3"}]
    assert send[0].params["configuration"]["returnImmediately"] is True


def test_completed_falls_back_to_the_last_agent_message(peer: Peer) -> None:
    script(peer, "TASK_STATE_COMPLETED", history_text="from history")
    assert one_tool(peer, poll_every=10).execute({"task": "x"}).output == "from history"


def test_completed_with_nothing_is_empty(peer: Peer) -> None:
    script(peer, "TASK_STATE_COMPLETED")
    result = one_tool(peer, poll_every=10).execute({"task": "x"})
    assert (result.output, result.is_error) == ("", False)


@pytest.mark.parametrize(
    ("state", "text", "expected"),
    [
        ("TASK_STATE_FAILED", "Error: division", "A2A task t1 failed: Error: division"),
        ("TASK_STATE_CANCELED", None, "A2A task t1 canceled"),
        ("TASK_STATE_REJECTED", "not my job", "A2A task t1 rejected: not my job"),
    ],
)
def test_unsuccessful_ends(peer: Peer, state: str, text: str | None, expected: str) -> None:
    script(peer, state, status_text=text)
    result = one_tool(peer, poll_every=10).execute({"task": "x"})
    assert (result.output, result.is_error) == (expected, True)


def test_rejected_at_once_is_an_error_without_polling(peer: Peer) -> None:
    script(peer, "TASK_STATE_WORKING", first="TASK_STATE_REJECTED")
    result = one_tool(peer).execute({"task": "x"})
    assert result.is_error and result.output == "A2A task t1 rejected"
    assert result.metadata is not None and result.metadata["polls"] == 0


def test_input_required_returns_the_prompt_at_once(peer: Peer) -> None:
    script(peer, "TASK_STATE_INPUT_REQUIRED", status_text="Which numbers?")
    started = time.monotonic()
    result = one_tool(peer, poll_every=10, timeout=60_000).execute({"task": "add"})
    assert time.monotonic() - started < 2
    assert result.is_error
    assert result.output == "A2A task t1 input-required: Which numbers?"
    assert result.metadata is not None
    assert (
        result.metadata["state"] == "input-required"
        and result.metadata["prompt"] == "Which numbers?"
    )


def test_budget_exhausted_times_out_and_cancels_the_remote_task(peer: Peer) -> None:
    script(peer, "TASK_STATE_WORKING")
    result = one_tool(peer, timeout=150, poll_every=20).execute({"task": "x"})
    assert result.output == "A2A task t1 timed out after 150ms (state=working)"
    assert result.is_error
    assert result.metadata is not None and result.metadata["ms"] >= 150
    assert len(peer.rpc_calls("CancelTask")) == 1


def test_context_timeout_overrides_the_agent_budget(peer: Peer) -> None:
    script(peer, "TASK_STATE_WORKING")
    started = time.monotonic()
    result = one_tool(peer, poll_every=20).execute({"task": "x"}, ToolContext(timeout=0.1))
    assert result.output == "A2A task t1 timed out after 100ms (state=working)"
    assert time.monotonic() - started < 2


def test_caller_cancel_stops_polling_and_cancels_remotely(peer: Peer) -> None:
    script(peer, "TASK_STATE_WORKING")
    signal = threading.Event()
    threading.Timer(0.15, signal.set).start()
    result = one_tool(peer, poll_every=30).execute({"task": "x"}, ToolContext(signal=signal))
    assert (result.output, result.is_error) == ("A2A task t1 canceled", True)
    assert result.metadata is not None and result.metadata["state"] == "canceled"
    polls_at_cancel = len(peer.rpc_calls("GetTask"))
    time.sleep(0.1)
    assert len(peer.rpc_calls("GetTask")) == polls_at_cancel
    assert len(peer.rpc_calls("CancelTask")) == 1


# -- execute: failures never raise ---------------------------------------------------------


def test_jsonrpc_error_message_is_the_output(peer: Peer) -> None:
    tool = one_tool(peer)
    peer.handlers["SendMessage"] = lambda call: Err(-32602, "Invalid parameters: message.parts")
    result = tool.execute({"task": "x"})
    assert (result.output, result.is_error) == ("Invalid parameters: message.parts", True)


def test_http_failure_is_http_status_and_body(peer: Peer) -> None:
    tool = one_tool(peer)
    peer.handlers["SendMessage"] = lambda call: Response("upstream down", status=503)
    result = tool.execute({"task": "x"})
    assert (result.output, result.is_error) == ("HTTP 503: upstream down", True)


def test_transport_failure_is_an_error_result() -> None:
    peer = Peer()
    served = Served(peer)
    peer.url = served.url
    tool = one_tool(peer, timeout=2_000)
    served.stop()
    result = tool.execute({"task": "x"})
    assert result.is_error and result.output
    assert result.metadata is not None and result.metadata["taskId"] == ""


def test_missing_task_argument_sends_empty_text(peer: Peer) -> None:
    script(peer, "TASK_STATE_COMPLETED", output="ok")
    assert one_tool(peer, poll_every=10).execute({}).output == "ok"
    assert peer.rpc_calls("SendMessage")[0].params["message"]["parts"] == [{"text": ""}]


def test_toolnexus_style_server_bare_lowercase(peer: Peer) -> None:
    peer.card = lambda url: card_v03(url, skills=SKILLS[:1])
    peer.handlers["message/send"] = lambda call: task_json("t1", "TASK_STATE_SUBMITTED", v03=True)
    peer.handlers["tasks/get"] = lambda call: task_json("t1", output="bare and lower", v03=True)
    (tool,) = agent_tools(agent(peer.url, poll_every=10))
    assert tool.execute({"task": "x"}).output == "bare and lower"


# -- ${ENV} headers ------------------------------------------------------------------------


def test_env_headers_expand_on_every_call_and_never_show(peer: Peer, monkeypatch: Any) -> None:
    monkeypatch.setenv("A2A_TOOL_TOKEN", "one")
    script(peer, "TASK_STATE_COMPLETED", output="done")
    peer.card = lambda url: card_v10(url, skills=SKILLS[:1])
    (tool,) = agent_tools(
        agent(peer.url, headers={"Authorization": "Bearer ${A2A_TOOL_TOKEN}"}, poll_every=10)
    )
    monkeypatch.setenv("A2A_TOOL_TOKEN", "two")
    result = tool.execute({"task": "x"})
    seen = [c.headers["authorization"] for c in peer.calls]
    assert seen[0] == "Bearer one"
    assert set(seen[1:]) == {"Bearer two"}
    assert not any("${" in value for value in seen)
    text = repr(tool) + repr(result)
    assert "one" not in text.replace("done", "") and "two" not in text


def test_agents_config_block() -> None:
    block = {
        "zeta": {"card": "http://z/card.json", "pollEvery": 250, "timeout": 5_000},
        "alpha": {"card": "http://a/card.json", "headers": {"X": "${T}"}},
        "off": {"card": "http://o/card.json", "disabled": True, "enabled": True},
        "disabled-by-flag": {"card": "http://d/card.json", "enabled": False},
        "no-card": {"headers": {}},
        "not-a-string": {"card": 42},
        "empty": {"card": ""},
    }
    descriptors = agents_from_config(block)
    assert [d.card for d in descriptors] == ["http://a/card.json", "http://z/card.json"]
    assert (descriptors[0].timeout, descriptors[0].poll_every) == (300_000, 1_000)
    assert dict(descriptors[0].headers) == {"X": "${T}"}  # templates stay unexpanded
    assert (descriptors[1].timeout, descriptors[1].poll_every) == (5_000, 250)
