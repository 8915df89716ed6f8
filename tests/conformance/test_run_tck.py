"""The runner's own parts that need no kit: the agent it starts and the tables it prints."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
import requests
import run_tck
import tck_plugin

from a2a_core._grpc import grpc_methods, request_message


def _outcome(outcome: str, level: str, transport: str, reason: str = "") -> dict[str, str]:
    return {"outcome": outcome, "level": level, "transport": transport, "reason": reason}


OUTCOMES = {
    "a.py::t[jsonrpc]": _outcome("passed", "MUST", "jsonrpc"),
    "a.py::t[grpc]": _outcome("skipped", "MUST", "grpc"),
    "b.py::u[jsonrpc]": _outcome("skipped", "MUST", "jsonrpc"),
    "c.py::v[jsonrpc]": _outcome("xfailed", "SHOULD", "jsonrpc"),
    "d.py::card": _outcome("failed", "MUST", "any", "E   assert False"),
}
REPORT = {"per_requirement": {
    "REQ-A-001": {"level": "MUST", "status": "PASS",
                  "test_ids": ["a.py::t[jsonrpc]", "a.py::t[grpc]", "b.py::u[jsonrpc]"]},
    "REQ-C-001": {"level": "SHOULD", "status": "FAIL", "test_ids": ["c.py::v[jsonrpc]"]},
}}
REQUIREMENTS = [{"id": "REQ-A-001", "level": "MUST", "title": "a"},
                {"id": "REQ-C-001", "level": "SHOULD", "title": "c"},
                {"id": "REQ-D-001", "level": "MUST", "title": "d"}]


def _run() -> run_tck.KitRun:
    return run_tck.KitRun(["jsonrpc"], OUTCOMES, REPORT, REQUIREMENTS, 1.0, Path("log"), 0)


def test_the_summary_counts_tests_by_level_and_transport() -> None:
    lines = run_tck.kit_10_dev_summary(_run()).splitlines()
    must = next(line for line in lines if line.startswith("MUST"))
    assert must.split() == ["MUST", "1/0/1", "0/0/1", "0/1/0"]  # jsonrpc, grpc, any
    should = next(line for line in lines if line.startswith("SHOULD"))
    assert "0/0/0 +1xf" in should
    assert "1 passed, 1 failed, 2 skipped, 1 xfailed of 5 tests" in lines[-1]


def test_every_requirement_of_the_registry_is_reported() -> None:
    report = run_tck.requirement_report(_run())
    assert "REQ-A-001" in report and "jsonrpc 1p1s" in report
    assert "grpc" not in report.split("REQ-A-001")[1].splitlines()[0]  # not run: not shown
    assert "REQ-D-001                MUST   NOT TESTED" in report
    assert "MUST NOT TESTED 1, MUST PASS 1, SHOULD FAIL 1" in report


def test_failures_are_listed_and_skips_only_when_asked() -> None:
    assert "d.py::card" in run_tck.kit_10_dev_details(_run(), show_skips=False)
    assert "b.py::u[jsonrpc]" not in run_tck.kit_10_dev_details(_run(), show_skips=False)
    assert "b.py::u[jsonrpc]" in run_tck.kit_10_dev_details(_run(), show_skips=True)


def test_the_agent_runs_under_the_venvs_gunicorn_and_declares_json_rpc() -> None:
    argv = run_tck.gunicorn_argv(1234)
    assert argv[0] == str(Path(sys.executable).parent / "gunicorn")
    assert "127.0.0.1:1234" in argv and argv[-1] == "examples.tck_agent:app"
    port = run_tck.free_port()
    with run_tck.agent_server(run_tck.gunicorn_argv(port), port) as url:
        declared = run_tck.declared_transports(url)
        assert declared[0] == "jsonrpc" and set(declared) <= set(run_tck.KIT_TRANSPORTS)
        card = requests.get(url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][0]["url"] == f"http://localhost:{port}/"
        assert "protocolVersion" not in card  # the strict 1.0 card, header or not


class _KitClient:
    """What tck_plugin wraps: a kit transport client, whose ``_client.headers`` go on each call."""

    def __init__(self, fail: bool = False) -> None:
        self._client = SimpleNamespace(headers={"A2A-Version": "1.0"})
        self.fail = fail
        self.seen: list[dict[str, str]] = []

    def get_extended_agent_card(self) -> str:
        self.seen.append(dict(self._client.headers))
        if self.fail:
            raise OSError("connection refused")
        return "card"


def test_the_plugin_sends_the_token_on_the_extended_card_call_only() -> None:
    client = _KitClient()
    get_card = tck_plugin._with_bearer(_KitClient.get_extended_agent_card, "t0k")
    assert get_card(client) == "card"
    assert client.seen == [{"A2A-Version": "1.0", "Authorization": "Bearer t0k"}]
    assert client._client.headers == {"A2A-Version": "1.0"}  # gone for every other call
    failing = _KitClient(fail=True)
    with pytest.raises(OSError):
        get_card(failing)
    assert failing._client.headers == {"A2A-Version": "1.0"}


def test_each_run_gives_the_agent_its_own_token_and_the_legacy_agent_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(run_tck.TOKEN_VARIABLE, "from-the-shell")
    port = run_tck.free_port()
    with run_tck.agent_server(run_tck.gunicorn_argv(port), port) as url:
        card = requests.get(url + "/.well-known/agent-card.json", timeout=5).json()
        assert not card["capabilities"].get("extendedAgentCard")  # the shell's is dropped
    port = run_tck.free_port()
    with run_tck.agent_server(run_tck.gunicorn_argv(port), port,
                              env={run_tck.TOKEN_VARIABLE: "run-token"}) as url:
        refused = requests.get(url + "/rest/extendedAgentCard", timeout=5,
                               headers={"A2A-Version": "1.0"})
        served = requests.get(url + "/rest/extendedAgentCard", timeout=5,
                              headers={"A2A-Version": "1.0",
                                       "Authorization": "Bearer run-token"})
        assert (refused.status_code, served.status_code) == (401, 200)


class _KitGrpcClient:
    """What tck_plugin wraps on the gRPC side: a client whose class-level ``_METADATA`` goes
    on each call."""

    _METADATA = (("a2a-version", "1.0"),)

    def __init__(self) -> None:
        self.seen: list[tuple[tuple[str, str], ...]] = []

    def get_extended_agent_card(self) -> str:
        self.seen.append(self._METADATA)
        return "card"


def test_the_plugin_sends_the_token_as_grpc_metadata_on_that_call_only() -> None:
    client = _KitGrpcClient()
    get_card = tck_plugin._with_bearer_metadata(_KitGrpcClient.get_extended_agent_card, "t0k")
    assert get_card(client) == "card"
    assert client.seen == [(("a2a-version", "1.0"), ("authorization", "Bearer t0k"))]
    assert client._METADATA == (("a2a-version", "1.0"),)  # the class's again
    assert "_METADATA" not in vars(client)


def _grpc_call(target: str, rpc_name: str, params: dict[str, object],
               metadata: tuple[tuple[str, str], ...] = ()) -> object:
    method = next(m for m in grpc_methods() if m.operation.name == rpc_name)
    with grpc.insecure_channel(target) as channel:
        rpc = channel.unary_unary(method.path, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=method.response.FromString)
        return rpc(request_message(method, params), metadata=metadata, timeout=10)


def test_with_grpc_the_agent_serves_all_three_bindings_on_one_store(tmp_path: Path) -> None:
    port, grpc_port = run_tck.free_port(), run_tck.free_port()
    argv = run_tck.serve_grpc_argv(port, grpc_port)
    env = {**run_tck.grpc_env(tmp_path, grpc_port), run_tck.TOKEN_VARIABLE: "run-token"}
    with run_tck.agent_server(argv, port, env=env) as url:
        run_tck._wait_for_port(grpc_port)
        assert run_tck.declared_transports(url) == ["jsonrpc", "http_json", "grpc"]
        card = requests.get(url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][2]["url"] == f"localhost:{grpc_port}"
        task = _grpc_call(f"localhost:{grpc_port}", "SendMessage", {"message": {
            "role": "ROLE_USER", "messageId": "tck-complete-task-1",
            "parts": [{"text": "hi"}]}})
        task_id = task.task.id  # type: ignore[attr-defined]
        got = requests.get(f"{url}/rest/tasks/{task_id}", timeout=5,
                           headers={"A2A-Version": "1.0"})
        assert got.json()["status"]["state"] == "TASK_STATE_COMPLETED"  # one store
        with pytest.raises(grpc.RpcError) as refused:
            _grpc_call(f"localhost:{grpc_port}", "GetExtendedAgentCard", {})
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
        extended = _grpc_call(f"localhost:{grpc_port}", "GetExtendedAgentCard", {},
                              (("authorization", "Bearer run-token"),))
        assert "conformance-extended" in [s.id for s in extended.skills]  # type: ignore[attr-defined]
    assert list(tmp_path.iterdir())  # the run's store was a file there, not memory
