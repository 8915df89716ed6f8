"""The ``a2a`` commands users reach for, run as the installed script against real servers.

``examples/echo.py`` over HTTP (it answers with the parts it was sent, so what the
command put on the wire comes back), the same agent restricted to A2A 0.3, and a
scripted JSON-RPC peer for what our own server never does (ignore ``blocking``,
answer ListTasks with -32601).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from client_peers import Peer, card_v03, card_v10, sse, sse_event, status_json, task_json

#: The console script installed beside this interpreter (.venv/bin/a2a).
A2A = str(Path(sys.executable).with_name("a2a"))


def a2a(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([A2A, *argv], capture_output=True, text=True, timeout=120,
                          check=False)


def sent_task(url: str, *argv: str) -> dict[str, Any]:
    """Send ``hi`` (plus ``argv``) with --json; the task the agent answered."""
    done = a2a("send", url, "hi", "--json", *argv)
    assert done.returncode == 0, done.stderr
    task: dict[str, Any] = json.loads(done.stdout)
    return task


def test_send_attaches_files_and_data_and_the_agent_gets_them(
        echo_url: str, tmp_path: Path) -> None:
    picture = tmp_path / "pic.png"
    picture.write_bytes(b"\x89PNG fake")
    notes = tmp_path / "notes.weird-extension"
    notes.write_bytes(b"\x00\x01")
    done = a2a("send", echo_url, "look", "--file", str(picture), "--file", str(notes),
               "--data", '{"k": [1, 2]}', "--data", "7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "look",
        "[file pic.png: image/png, 9 bytes]",
        "[file notes.weird-extension: application/octet-stream, 2 bytes]",
        '{"k": [1, 2]}',
        "7",
    ]
    task = sent_task(echo_url, "--file", str(picture), "--data", '{"k": 1}')
    parts = task["artifacts"][0]["parts"]
    assert parts[1] == {"raw": "iVBORyBmYWtl", "filename": "pic.png", "mediaType": "image/png"}
    assert parts[2] == {"data": {"k": 1}}


def test_send_with_only_a_file_and_bad_attachments(echo_url: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("text file")
    done = a2a("send", echo_url, "", "--file", str(tmp_path / "a.txt"))
    assert done.returncode == 0 and done.stdout.splitlines()[1:] == [
        "[file a.txt: text/plain, 9 bytes]"]
    missing = a2a("send", echo_url, "x", "--file", str(tmp_path / "nope.txt"))
    assert missing.returncode == 2
    assert missing.stderr == f"a2a: --file {tmp_path / 'nope.txt'}: No such file or directory\n"
    bad = a2a("send", echo_url, "x", "--data", "{not json")
    assert bad.returncode == 2 and "--data: not JSON" in bad.stderr
    empty = a2a("send", echo_url, "")
    assert empty.returncode == 2 and "nothing to send" in empty.stderr


def test_accept_and_its_default_go_on_the_wire(peer: Peer) -> None:
    peer.handlers["SendMessage"] = lambda call: {"task": task_json("t1")}
    assert a2a("send", peer.url, "x").returncode == 0
    assert a2a("send", peer.url, "x", "--accept", "image/png", "--accept", "text/csv",
               "--history", "2").returncode == 0
    first, second = (c.params["configuration"] for c in peer.rpc_calls("SendMessage"))
    assert first["acceptedOutputModes"] == ["text/plain", "application/json"]
    assert "historyLength" not in first
    assert second["acceptedOutputModes"] == ["image/png", "text/csv"]
    assert second["historyLength"] == 2


def test_history_limits_the_task_on_send_and_get(echo_url: str) -> None:
    assert "history" not in sent_task(echo_url, "--history", "0")
    task_id = sent_task(echo_url)["id"]
    one = a2a("get", echo_url, task_id, "--history", "1", "--json")
    assert one.returncode == 0 and len(json.loads(one.stdout)["history"]) == 1
    two = a2a("get", echo_url, task_id, "--json")
    assert len(json.loads(two.stdout)["history"]) == 2
    assert a2a("get", echo_url, task_id, "--history", "-1").returncode == 2


@pytest.mark.parametrize("url_fixture", ["echo_url", "echo_0_3_url"])
def test_subscribe_follows_a_task_and_shows_a_settled_one(
        request: pytest.FixtureRequest, url_fixture: str) -> None:
    url = request.getfixturevalue(url_fixture)
    task_id = sent_task(url)["id"]
    done = a2a("subscribe", url, task_id)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"task {task_id} (completed)  context {done.stdout.split()[-2]}", "hi"]
    as_json = a2a("subscribe", url, task_id, "--json")
    assert json.loads(as_json.stdout)["status"]["state"] == "TASK_STATE_COMPLETED"
    missing = a2a("subscribe", url, "tsk-missing")
    assert missing.returncode == 4 and "-32001" in missing.stderr


def test_subscribe_streams_events_until_the_task_settles(peer: Peer) -> None:
    peer.handlers["SubscribeToTask"] = lambda call: sse([
        sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}),
        sse_event({"statusUpdate": {"taskId": "t1", "contextId": "ctx-1",
                                    "status": status_json("TASK_STATE_COMPLETED", "done")}}),
    ])
    done = a2a("subscribe", peer.url, "t1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[working] task t1", "[completed] done"]
    lines = [json.loads(line) for line in a2a("subscribe", peer.url, "t1", "--json").stdout
             .splitlines()]
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("url_fixture", ["echo_url", "echo_0_3_url"])
def test_push_set_get_list_delete(request: pytest.FixtureRequest, url_fixture: str) -> None:
    url = request.getfixturevalue(url_fixture)
    task_id = sent_task(url)["id"]
    made = a2a("push", "set", url, task_id, "https://example.com/hook",
               "--webhook-token", "s3cret")
    assert made.returncode == 0, made.stderr
    config_id, webhook, *rest = made.stdout.split()
    assert webhook == "https://example.com/hook" and rest == ["token", "set"]
    assert "s3cret" not in made.stdout
    named = a2a("push", "set", url, task_id, "https://example.com/two", "--id", "mine",
                "--json")
    assert json.loads(named.stdout)["url"] == "https://example.com/two"
    listed = a2a("push", "list", url, task_id)
    assert sorted(listed.stdout.splitlines()) == sorted(
        [f"{config_id}  https://example.com/hook  token set", "mine  https://example.com/two"])
    got = a2a("push", "get", url, task_id, "mine")
    assert got.returncode == 0 and got.stdout == "mine  https://example.com/two\n"
    gone = a2a("push", "delete", url, task_id, "mine")
    assert gone.returncode == 0 and gone.stdout == "deleted mine\n"
    again = a2a("push", "get", url, task_id, "mine")
    assert again.returncode == 4 and "-32001" in again.stderr
    left = a2a("push", "list", url, task_id, "--json")
    assert [json.loads(line)["id"] for line in left.stdout.splitlines()] == [config_id]


def test_tasks_against_a_0_3_agent(echo_0_3_url: str, peer: Peer) -> None:
    """Our 0.3-only server still answers tasks/list; a 0.3 peer that does not is explained."""
    task_id = sent_task(echo_0_3_url)["id"]
    ours = a2a("tasks", echo_0_3_url)
    assert ours.returncode == 0 and task_id in ours.stdout
    peer.card = card_v03
    theirs = a2a("tasks", peer.url)
    assert theirs.returncode == 4
    assert theirs.stderr == ("a2a: ListTasks is A2A 1.0; this agent speaks 0.3 "
                             "(it answered -32601 Method not found)\n")


def test_a_send_answered_before_the_task_settles_says_how_to_follow(peer: Peer) -> None:
    """A peer that ignores ``blocking``: the plain send says so; --wait follows the task."""
    states = iter(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    peer.handlers["SendMessage"] = lambda call: {"task": task_json("t1", "TASK_STATE_SUBMITTED")}
    peer.handlers["GetTask"] = lambda call: task_json("t1", next(states), output="ok")
    peer.card = lambda url: {**card_v10(url), "capabilities": {"streaming": False}}
    plain = a2a("send", peer.url, "x")
    assert plain.returncode == 0 and "(submitted)" in plain.stdout
    assert plain.stderr == (f"a2a: task t1 is still submitted; follow it with "
                            f"'a2a subscribe {peer.url} t1', or send with --wait\n")
    waited = a2a("send", peer.url, "x", "--wait", "--poll-every", "0.01")
    assert waited.returncode == 0 and waited.stderr == ""
    assert "(completed)" in waited.stdout and waited.stdout.splitlines()[-1] == "ok"


def test_subscribe_polls_an_agent_that_does_not_stream(peer: Peer) -> None:
    states = iter(["TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    peer.handlers["GetTask"] = lambda call: task_json("t1", next(states), output="ok")
    peer.card = lambda url: {**card_v10(url), "capabilities": {"streaming": False}}
    done = a2a("subscribe", peer.url, "t1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[working] task t1", "task t1 (completed)  context ctx-1", "ok"]
    assert peer.rpc_calls("SubscribeToTask") == []
    states = iter(["TASK_STATE_WORKING", "TASK_STATE_FAILED"])
    as_json = a2a("subscribe", peer.url, "t1", "--json")
    assert as_json.returncode == 1
    assert [json.loads(line)["task"]["status"]["state"] for line in as_json.stdout.splitlines()
            ] == ["TASK_STATE_WORKING", "TASK_STATE_FAILED"]
