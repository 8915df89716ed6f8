"""What reaches an agent on a Celery worker, as in the web worker: the caller's identity with
its tenant and claims, the merged metadata (static, then the request's), the caller's trace;
the request's tenant scoping its task; the long-poll GetTask preview across the tiers; and
revoke, the backstop for an agent that ignores its cancel. tests/celery/context_app.py is
the app: its agent answers with JSON of its call."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest
import requests
from celery_support import Stack, need_broker, until

from a2a_client import A2AClient
from a2a_core._generations import GENERATIONS_EXTENSION_URI
from a2a_core.models import Task, TaskState, TextPart

pytestmark = pytest.mark.celery

DIALECTS = [("0.3", "JSONRPC"), ("1.0", "JSONRPC"), ("1.0", "HTTP+JSON")]
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
ALICE = {"Authorization": "Bearer tok-alice"}
#: The backstop's grace: a canceled run still going after this long is revoked.
GRACE = 1.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    need_broker()
    running = Stack(tmp_path_factory.mktemp("call-context"), app="tests.celery.context_app",
                    concurrency=2, extra_env={"A2A_CANCEL_GRACE": str(GRACE)})
    try:
        yield running
    finally:
        running.stop()


def _answer(task: Task) -> dict[str, object]:
    texts = [p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart)]
    return json.loads(texts[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("version, binding", DIALECTS, ids=[f"{v}-{b}" for v, b in DIALECTS])
def test_identity_tenant_claims_metadata_and_trace_reach_the_worker(
        stack: Stack, version: str, binding: str) -> None:
    headers = {**ALICE, "traceparent": f"00-{TRACE_ID}-b7ad6b7169203331-01"}
    with A2AClient(stack.url, version=version, binding=binding, timeout=60,
                   headers=headers) as client:
        task = client.send_message("hello", metadata={"request": "r-1", "deployment": "mine"})
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert _answer(task) == {
        "identity": "alice", "tenant": "acme", "claims": {"role": "reviewer"},
        # static metadata, then the request's (which wins)
        "metadata": {"deployment": "mine", "request": "r-1"},
        "trace_id": TRACE_ID,
    }


def test_a_send_without_the_token_is_refused_before_anything_is_queued(stack: Stack) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "anon-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}}
    answer = requests.post(stack.url, json=body, headers={"A2A-Version": "1.0"}, timeout=30)
    assert answer.status_code == 401


def _rpc(stack: Stack, method: str, params: dict[str, object],
         headers: dict[str, str] | None = None) -> dict[str, object]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = requests.post(stack.url, json=body, timeout=60,
                           headers={"A2A-Version": "1.0", **ALICE, **(headers or {})})
    return answer.json()  # type: ignore[no-any-return]


def test_the_request_tenant_scopes_the_task_the_worker_runs(stack: Stack) -> None:
    message = {"messageId": f"tenant-{time.monotonic_ns()}", "role": "ROLE_USER",
               "parts": [{"text": "hello"}]}
    sent = _rpc(stack, "SendMessage", {"message": message, "tenant": "globex"})
    task = sent["result"]["task"]  # type: ignore[index]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", sent
    found = _rpc(stack, "GetTask", {"id": task["id"], "tenant": "globex"})
    assert found["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    elsewhere = _rpc(stack, "GetTask", {"id": task["id"]})
    assert elsewhere["error"]["code"] == -32001  # type: ignore[index]
    rest = requests.get(f"{stack.url}rest/globex/tasks/{task['id']}", timeout=30,
                        headers={"A2A-Version": "1.0", **ALICE})
    assert rest.status_code == 200 and rest.json()["id"] == task["id"]
    assert requests.get(f"{stack.url}rest/tasks/{task['id']}", timeout=30,
                        headers={"A2A-Version": "1.0", **ALICE}).status_code == 404


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_long_poll_get_task_is_answered_by_the_workers_change(stack: Stack,
                                                                binding: str) -> None:
    """One long-poll GetTask, held by the web tier, answers the change a worker made."""
    preview = {"A2A-Extensions": GENERATIONS_EXTENSION_URI}
    message = {"messageId": f"poll-{time.monotonic_ns()}", "role": "ROLE_USER",
               "parts": [{"text": "slow 2500"}]}
    sent = _rpc(stack, "SendMessage", {"message": message,
                                       "configuration": {"blocking": False}}, preview)
    task_id = sent["result"]["task"]["id"]  # type: ignore[index]

    def get(current: str | None) -> dict[str, object]:
        if binding == "JSONRPC":
            params: dict[str, object] = {"id": task_id}
            if current is not None:
                params["currentGeneration"] = current
            return _rpc(stack, "GetTask", params, preview)["result"]  # type: ignore[return-value]
        query = "" if current is None else f"?currentGeneration={current}"
        return requests.get(f"{stack.url}rest/tasks/{task_id}{query}", timeout=60,  # type: ignore[no-any-return]
                            headers={"A2A-Version": "1.0", **ALICE, **preview}).json()

    assert until(lambda: get(None)["status"]["state"] == "TASK_STATE_WORKING", 20)  # type: ignore[index]
    working = get(None)
    started = time.monotonic()
    held = get(str(working["generation"]))
    assert held["status"]["state"] == "TASK_STATE_COMPLETED", held  # type: ignore[index]
    assert int(held["generation"]) > int(working["generation"])  # type: ignore[call-overload]
    assert time.monotonic() - started > 0.3  # it was held until the worker's change came


def _pid_of(task: Task) -> int | None:
    message = task.status.message
    if message is None or not message.parts or not isinstance(message.parts[0], TextPart):
        return None
    text = message.parts[0].text
    return int(text.split()[1]) if text.startswith("pid ") else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_agent_that_ignores_its_cancel_is_revoked_after_the_grace(stack: Stack) -> None:
    with A2AClient(stack.url, version="1.0", binding="JSONRPC", timeout=60,
                   headers=ALICE) as client:
        task = client.send_message("stubborn", blocking=False)
        assert isinstance(task, Task)
        pids: list[int] = []

        def reported() -> bool:
            pid = _pid_of(client.get_task(task.id))
            pids[:] = [pid] if pid is not None else []
            return bool(pids)

        assert until(reported, 20), stack.logs()
        assert _alive(pids[0])
        assert client.cancel_task(task.id).status.state is TaskState.CANCELED
        # heard within the poll interval, then GRACE, then the worker kills the process
        assert until(lambda: not _alive(pids[0]), GRACE + 10), stack.logs()
        assert "revoking Celery task" in stack.logs()
        assert client.get_task(task.id).status.state is TaskState.CANCELED
        # The prefork pool replaced the process: the next run goes on as usual.
        after = client.send_message("hello")
        assert isinstance(after, Task) and after.status.state is TaskState.COMPLETED
