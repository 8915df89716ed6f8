"""REST answers are labelled application/json unless the client asks for application/a2a+json.

v1.0.0 of the spec (and the 1.0 conformance kit) says ``application/json``; later 1.0 text
registers ``application/a2a+json``. A server that answers the one the client names
satisfies both readers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from support.a2a_http import served

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> object:
        return reply(message.text or "")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(A2AApp(Echo())) as handle:
        yield handle.url + "/rest"


SEND = {"message": {"messageId": "m-media", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}


@pytest.mark.parametrize("accept, expected", [
    (None, "application/json"),
    ("*/*", "application/json"),
    ("application/json", "application/json"),
    ("application/a2a+json", "application/a2a+json"),
    ("application/a2a+json, application/json;q=0.5", "application/a2a+json"),
])
def test_answers_and_errors_carry_the_type_the_client_named(
        url: str, accept: str | None, expected: str) -> None:
    headers = {"A2A-Version": "1.0", **({"Accept": accept} if accept else {})}
    sent = requests.post(url + "/message:send", json=SEND, headers=headers, timeout=5)
    assert sent.status_code == 200 and sent.headers["Content-Type"] == expected
    missing = requests.get(url + "/tasks/tsk-nope", headers=headers, timeout=5)
    assert missing.status_code == 404 and missing.headers["Content-Type"] == expected
    unknown = requests.get(url + "/nowhere", headers=headers, timeout=5)
    assert unknown.status_code == 404 and unknown.headers["Content-Type"] == expected
