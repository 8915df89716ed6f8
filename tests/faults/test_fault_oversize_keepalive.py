"""An oversized body under real gunicorn leaves the connection usable (or honestly closed).

The module is the gunicorn app (an 8 KiB body limit). A client sends a
chunked body over the limit on a keep-alive connection, reads the refusal,
then sends its next request on the same connection: it must be answered.
Refusing without reading the rest left the body on the socket while
answering ``Connection: keep-alive``, and the next request raced the server's
close (``RemoteDisconnected``).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gunicorn import WORKER_CLASSES, start_gunicorn

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import LimitSettings

pytestmark = pytest.mark.slow

LIMIT = 8192


class Echo(Agent):
    name = "Echo"
    description = "Answers what it is sent"

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        return reply(*msg.parts)


app = A2AApp(Echo(), store="memory", limits=LimitSettings(max_body_bytes=LIMIT))


def _chunks(data: bytes, size: int = 4096) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def _rpc(method: str, params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


@pytest.mark.parametrize("worker_class", WORKER_CLASSES)
@pytest.mark.parametrize("size", [LIMIT * 4, LIMIT * 200])
def test_the_request_after_an_oversized_chunked_body_is_answered(
        tmp_path: Path, worker_class: str, size: int) -> None:
    if worker_class == "gevent":
        pytest.importorskip("gevent")
    server = start_gunicorn("test_fault_oversize_keepalive:app", log_path=tmp_path / "g.log",
                            pythonpath=[Path(__file__).parent, Path(__file__).parents[1]],
                            worker_class=worker_class)
    with server:
        server.wait_ready()
        big = _rpc("SendMessage", {"message": {"role": "ROLE_USER", "messageId": "m-big",
                                               "parts": [{"text": "x" * size}]}})
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
        for attempt in range(4):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                connection.request("POST", "/", body=_chunks(big), headers=headers,
                                   encode_chunked=True)
                refused = connection.getresponse()
                answer = json.loads(refused.read())
                assert answer["error"]["code"] == -32600, answer
                closing = (refused.getheader("Connection") or "").lower() == "close"
                if closing:  # told to close: a new connection, as the client then does
                    connection.close()
                connection.request("POST", "/", body=_rpc("GetTask", {"id": "tsk-none"}),
                                   headers=headers)
                nxt = connection.getresponse()
                assert json.loads(nxt.read())["error"]["code"] == -32001, attempt
            finally:
                connection.close()
