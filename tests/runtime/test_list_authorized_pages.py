"""ListTasks with authorize_task: pages stay full while hidden tasks are skipped."""

from __future__ import annotations

from typing import Any

from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import ProtocolSettings


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


def _only_even(operation: Any, task: Any) -> bool:
    """Tasks whose first message says an even number are visible."""
    return int(task.history[0].parts[0].text) % 2 == 0


def _call(client: Client, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = client.post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    assert "result" in answer, answer
    return answer["result"]


def test_pages_are_refilled_past_hidden_tasks_and_paging_stays_exact() -> None:
    app = A2AApp(Echo(), protocol=ProtocolSettings(authorize_task=_only_even))
    client = Client(app)
    for n in range(30):
        _call(client, "SendMessage", {"message": {
            "messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": str(n)}]}})
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        params: dict[str, Any] = {"pageSize": 4}
        if token:
            params["pageToken"] = token
        page = _call(client, "ListTasks", params)
        pages += 1
        texts = [t["history"][0]["parts"][0]["text"] for t in page["tasks"]]
        assert all(int(text) % 2 == 0 for text in texts)
        token = page.get("nextPageToken", "")
        if token:
            assert len(texts) == 4, texts  # a full page while more follow
        seen += texts
        if not token:
            break
    assert sorted(seen, key=int) == [str(n) for n in range(0, 30, 2)]  # each once, none lost
    assert pages == 4
    app.close()
