"""The ``a2a`` command: output, --json, --header expansion, live status, exit codes."""

from __future__ import annotations

import io
import json
import socket
from typing import Any

import pytest
from client_peers import Peer, task_json
from werkzeug.wrappers import Response

from a2a_client.cli import main


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_card_human_and_json(calc_url: str, capsys: Any) -> None:
    code, out, _ = run(capsys, "card", calc_url)
    assert code == 0 and out.startswith("Calc Agent") and "calc: Adds the numbers" in out
    code, out, _ = run(capsys, "card", calc_url, "--json")
    assert code == 0 and json.loads(out)["name"] == "Calc Agent"


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
def test_send_prints_the_answer(calc_url: str, capsys: Any, protocol: str) -> None:
    code, out, err = run(capsys, "send", calc_url, "add 2 and 3", "--protocol", protocol)
    assert code == 0 and "The sum is 5." in out and err == ""


def test_send_wait_input_required_exit_code_and_no_status_on_a_pipe(
    calc_url: str, capsys: Any
) -> None:
    code, out, err = run(capsys, "send", calc_url, "add numbers", "--wait", "--poll-every", "0.02")
    assert code == 3
    assert "input-required" in out and "Which numbers" in out
    assert err == ""  # stderr is not a terminal: no live line


def test_live_status_line_on_a_terminal(peer: Peer, capsys: Any, monkeypatch: Any) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    states = iter(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    peer.handlers["SendMessage"] = lambda call: {"task": task_json("t1", "TASK_STATE_SUBMITTED")}
    peer.handlers["GetTask"] = lambda call: task_json("t1", next(states), output="ok")
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    code = main(["send", peer.url, "x", "--wait", "--poll-every", "0.01"])
    assert code == 0
    shown = terminal.getvalue()
    assert "[submitted] t1" in shown and "[working] t1" in shown and shown.endswith("\r\x1b[K")


def test_stream_json_lines(calc_url: str, capsys: Any) -> None:
    code, out, _ = run(capsys, "send", calc_url, "add 2 and 3", "--stream", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert "task" in lines[0]
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_get_cancel_tasks_and_rpc_error_exit(calc_url: str, capsys: Any) -> None:
    context = "cli-ctx-1"
    code, out, _ = run(capsys, "send", calc_url, "add 1 and 1", "--context", context, "--json")
    task_id = json.loads(out)["id"]
    code, out, _ = run(capsys, "get", calc_url, task_id, "--json")
    assert code == 0 and json.loads(out)["id"] == task_id
    code, out, _ = run(capsys, "tasks", calc_url, "--context", context)
    assert code == 0 and out.split()[0] == task_id and "completed" in out
    code, _, err = run(capsys, "cancel", calc_url, task_id)
    assert code == 4 and "-32002" in err
    code, _, err = run(capsys, "get", calc_url, "tsk-missing")
    assert code == 4 and "-32001" in err


def test_failed_task_exit_code(peer: Peer, capsys: Any) -> None:
    peer.handlers["GetTask"] = lambda call: task_json(
        "t1", "TASK_STATE_FAILED", status_text="Error: x"
    )
    code, out, _ = run(capsys, "get", peer.url, "t1")
    assert code == 1 and "failed" in out and "Error: x" in out


def test_wait_timeout_exit_code(peer: Peer, capsys: Any) -> None:
    peer.handlers["SendMessage"] = lambda call: task_json("t1", "TASK_STATE_WORKING")
    peer.handlers["GetTask"] = lambda call: task_json("t1", "TASK_STATE_WORKING")
    code, _, err = run(
        capsys, "send", peer.url, "x", "--wait", "--wait-timeout", "0.1", "--poll-every", "0.02"
    )
    assert code == 8 and "still working" in err


def test_transport_http_and_protocol_exit_codes(serve: Any, capsys: Any) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    closed = sock.getsockname()[1]
    sock.close()
    assert run(capsys, "card", f"http://127.0.0.1:{closed}")[0] == 5
    not_found = serve(lambda environ, start: Response("gone", status=404)(environ, start)).url
    assert run(capsys, "card", not_found + "/card.json")[0] == 6
    garbage = serve(
        lambda environ, start: Response("[1]", mimetype="application/json")(environ, start)
    ).url
    assert run(capsys, "card", garbage)[0] == 7


def test_header_expands_from_the_environment(peer: Peer, capsys: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("A2A_CLI_TOKEN", "cli-secret")
    peer.handlers["GetTask"] = lambda call: task_json("t1")
    code, out, err = run(
        capsys, "get", peer.url, "t1", "--header", "Authorization: Bearer ${A2A_CLI_TOKEN}"
    )
    assert code == 0
    assert {c.headers["authorization"] for c in peer.calls} == {"Bearer cli-secret"}
    assert "cli-secret" not in out + err


def test_usage_errors_exit_2(capsys: Any) -> None:
    assert run(capsys, "send")[0] == 2
    assert run(capsys, "get", "http://h", "t", "--header", "no-colon")[0] == 2


def test_serve_is_delegated_to_a2a_wsgi(capsys: Any) -> None:
    code, _, err = run(capsys, "serve", "no_colon_target")
    assert code == 2 and "MODULE:OBJECT" in err
