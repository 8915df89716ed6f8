"""The agent the gRPC tests serve, and the app around it (served over HTTP and gRPC)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from a2a_client._cards import Endpoint
from a2a_client.grpc_binding import GrpcChannel
from a2a_core.models import AgentCard, AgentSkill, Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, message, reply, serve
from a2a_wsgi.grpc import GrpcServer, serve_grpc
from a2a_wsgi.settings import CardSettings

#: Declares push (configs are stored; no delivery worker) and streaming.
PUSH = {"capabilities": {"push_notifications": True, "streaming": True}}
TIMEOUT = (5.0, 10.0)


class GrpcAgent(Agent):
    """Echoes; "wait" holds WORKING until canceled (10 s at most); "ask" asks for input;
    "direct" answers with a bare message; "words" emits three artifact chunks 0.1 s apart;
    a message whose first part is "parts" gets its parts back unchanged."""

    name = "gRPC Agent"
    description = "Target of the gRPC tests"
    skills = [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        text = msg.text
        if text == "wait":
            ctx.emit_status(TaskState.WORKING, "holding")
            deadline = time.monotonic() + 10
            while not ctx.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.01)
            return None if ctx.is_cancelled() else reply("released")
        if text == "ask":
            return input_required("Which numbers?")
        if text == "parts":  # the message's parts back, unchanged
            return reply(*msg.parts)
        if text == "direct":
            return message("direct answer")
        if text == "words":
            ctx.emit_status(TaskState.WORKING)
            artifact_id = None
            for word in ("one", "two", "three"):
                time.sleep(0.1)
                artifact_id = ctx.emit_artifact(word, artifact_id=artifact_id,
                                                append=artifact_id is not None,
                                                last_chunk=word == "three")
            return reply("done")
        return reply(f"echo: {text}")


def grpc_app(**options: Any) -> A2AApp:
    card = CardSettings(overrides=PUSH,
                        extended_card=lambda ctx: AgentCard(name="gRPC Agent (extended)"))
    return A2AApp(GrpcAgent(), card=card, **options)


@dataclass
class Both:
    """One app served over HTTP (``url``) and gRPC (``target``)."""

    app: A2AApp
    url: str
    grpc: GrpcServer

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc.port}"

    def channel(self, **options: Any) -> GrpcChannel:
        endpoint = Endpoint(url=self.target, version="1.0", binding="GRPC")
        return GrpcChannel(lambda: endpoint, **options)


@contextmanager
def served_both(app: A2AApp) -> Iterator[Both]:
    """``app`` on an HTTP port and a gRPC port at once, sharing its runtime and store."""
    http = serve(app, "127.0.0.1:0")
    server = serve_grpc(app, "127.0.0.1:0", max_workers=16, base_url=http.url)
    try:
        yield Both(app, http.url, server)
    finally:
        server.stop(0)
        http.stop()
        app.close()
