"""The agent to run the official conformance kit (a2a-tck) against.

By default it speaks the contract of the kit's A2A 1.0 line (a2a-tck
``1.0-dev``, version 1.0.0): the kit picks the agent's behaviour by the prefix
of ``message.messageId``, as its ``scenarios/*.feature`` describe:

* ``tck-complete-task``: COMPLETED, status message "Hello from TCK";
* ``tck-artifact-text`` / ``-file`` / ``-file-url`` / ``-data``: one artifact
  (text, inline file ``output.txt``, file URL, data), then COMPLETED;
* ``tck-message-response``: a bare Message "Direct message response", no task;
* ``tck-input-required``: INPUT_REQUIRED (a follow-up continues the task);
* ``tck-reject-task``: REJECTED, status message "rejected";
* ``tck-stream-001`` / ``-003`` / ``-ordering-001`` / ``-artifact-text`` /
  ``-artifact-file``: WORKING, one artifact, COMPLETED; ``tck-stream-002``:
  COMPLETED; ``tck-stream-artifact-chunked``: WORKING, an artifact in two
  chunks (the second ``lastChunk``), COMPLETED;
* ``test-resubscribe-message-id``: WORKING, then COMPLETED after
  2 x ``TCK_STREAMING_TIMEOUT`` seconds (default 2), so a subscriber can attach;
* anything else: COMPLETED, status message echoing the text it was sent.

With ``TCK_LEGACY=1`` it speaks the contract of the earlier kit line (commit
410ba92): every task goes SUBMITTED -> WORKING and **stays WORKING**; a
follow-up keeps it working; cancel moves it to CANCELED; message ids starting
with ``test-subscribe-message-id`` / ``test-resubscribe-message-id`` wait
``TCK_SUBSCRIBE_DELAY`` seconds (default 3) first.

    PYTHONPATH=. python examples/tck_agent.py              # http://localhost:9999/
    PYTHONPATH=. TCK_PORT=9000 .venv/bin/gunicorn -k gthread --threads 32 \\
        -b 127.0.0.1:9000 examples.tck_agent:app

It serves A2A 1.0 only (the legacy line: 0.3 and 1.0; ``TCK_VERSIONS=0.3,1.0``
to choose): with 0.3 served too, a card request without ``A2A-Version`` (the
1.0 kit sends none for the card) gets the card with the 0.3 members, which the
kit's strict 1.0 schema check refuses. The card advertises ``A2A_BASE_URL``
(default ``http://localhost:<TCK_PORT>/``: the kits flag IP addresses in
cards) and declares what the library implements:
streaming, push notifications (webhooks on loopback allowed, for the kit's
receiver) and the optional timestamp extension. With
``TCK_EXTENDED_CARD_TOKEN`` set (1.0 mode; ``run_tck.py`` sets a fresh one per
run) it also declares an extended card, served only to callers sending
``Authorization: Bearer <that token>``; every other call stays open to anonymous
callers (the kit sends no credentials). ``tests/conformance/run_tck.py`` runs
either kit line against this agent.
"""

from __future__ import annotations

import dataclasses
import hmac
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone

from a2a_core._service import CallContext
from a2a_core.extensions import TimestampExtension
from a2a_core.models import (
    AgentCard,
    AgentSkill,
    DataPart,
    FilePart,
    Message,
    TaskState,
    TextPart,
)
from a2a_wsgi import (
    A2AApp,
    Agent,
    AgentContext,
    input_required,
    message,
    reject,
    serve,
    working,
)
from a2a_wsgi._agent import Outcome
from a2a_wsgi.auth import AuthPolicy, BearerAuthenticator
from a2a_wsgi.push import PushSettings, UrlPolicy
from a2a_wsgi.settings import CardSettings, ProtocolSettings

PORT = int(os.environ.get("TCK_PORT", "9999"))
LEGACY = os.environ.get("TCK_LEGACY", "") == "1"
STREAMING_TIMEOUT = float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0"))
SUBSCRIBE_DELAY = float(os.environ.get("TCK_SUBSCRIBE_DELAY", "3.0"))
#: The protocol versions served: the 1.0 kit speaks only 1.0; the legacy line has a 0.3 kit too.
VERSIONS = tuple(v.strip() for v in os.environ.get(
    "TCK_VERSIONS", "0.3,1.0" if LEGACY else "1.0").split(",") if v.strip())
#: The bearer token that opens the extended card (1.0 mode); empty: no extended card.
EXTENDED_CARD_TOKEN = os.environ.get("TCK_EXTENDED_CARD_TOKEN", "")
_DELAYED_PREFIXES = ("test-subscribe-message-id", "test-resubscribe-message-id")

#: What one scenario does with a message: an outcome, or None once it completed the task.
Behaviour = Callable[[Message, AgentContext], Outcome | None]


def _complete(text: str | None = None) -> Behaviour:
    """COMPLETED now, with ``text`` as the status message when given."""

    def run(msg: Message, ctx: AgentContext) -> None:
        ctx.emit_status(TaskState.COMPLETED, text)

    return run


def _artifact(*parts: TextPart | FilePart | DataPart, streamed: bool = False) -> Behaviour:
    """One artifact holding ``parts``, then COMPLETED (after WORKING when ``streamed``)."""

    def run(msg: Message, ctx: AgentContext) -> None:
        if streamed:
            ctx.emit_status(TaskState.WORKING)
        ctx.emit_artifact(list(parts), name="output")
        ctx.emit_status(TaskState.COMPLETED)

    return run


def _chunked(msg: Message, ctx: AgentContext) -> None:
    """WORKING, one artifact sent as two chunks (the second is the last), COMPLETED."""
    ctx.emit_status(TaskState.WORKING)
    artifact_id = ctx.emit_artifact("chunk-1 ", name="output")
    ctx.emit_artifact("chunk-2", artifact_id=artifact_id, append=True, last_chunk=True)
    ctx.emit_status(TaskState.COMPLETED)


def _long_running(msg: Message, ctx: AgentContext) -> None:
    """WORKING for 2 x the kit's streaming timeout (a subscriber attaches), then COMPLETED."""
    ctx.emit_status(TaskState.WORKING)
    if _wait(ctx, 2 * STREAMING_TIMEOUT):
        ctx.emit_status(TaskState.COMPLETED)


def _echo(msg: Message, ctx: AgentContext) -> None:
    """Anything the scenarios do not name: COMPLETED, echoing the text parts."""
    text = " ".join(p.text for p in msg.parts if isinstance(p, TextPart))
    ctx.emit_status(TaskState.COMPLETED, f"Echo: {text}")


def _wait(ctx: AgentContext, seconds: float) -> bool:
    """Sleep up to ``seconds``; False as soon as the task is canceled."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ctx.is_cancelled():
            return False
        time.sleep(0.05)
    return not ctx.is_cancelled()


_OUTPUT_FILE = FilePart(raw=b"tck", filename="output.txt", media_type="text/plain")

#: The kit's scenarios by messageId prefix; a longer prefix comes before any it extends.
SCENARIOS: tuple[tuple[str, Behaviour], ...] = (
    ("tck-complete-task", _complete("Hello from TCK")),
    ("tck-artifact-text", _artifact(TextPart(text="Generated text content"))),
    ("tck-artifact-file-url", _artifact(FilePart(url="https://example.com/output.txt",
                                                 filename="output.txt",
                                                 media_type="text/plain"))),
    ("tck-artifact-file", _artifact(_OUTPUT_FILE)),
    ("tck-artifact-data", _artifact(DataPart(data={"key": "value", "count": 42}))),
    ("tck-message-response", lambda msg, ctx: message("Direct message response")),
    ("tck-input-required", lambda msg, ctx: input_required("More input is needed")),
    ("tck-reject-task", lambda msg, ctx: reject("rejected")),
    ("tck-stream-001", _artifact(TextPart(text="Stream hello from TCK"), streamed=True)),
    ("tck-stream-002", _complete()),
    ("tck-stream-003", _artifact(TextPart(text="Stream task lifecycle"), streamed=True)),
    ("tck-stream-ordering-001", _artifact(TextPart(text="Ordered output"), streamed=True)),
    ("tck-stream-artifact-text", _artifact(TextPart(text="Streamed text content"),
                                           streamed=True)),
    ("tck-stream-artifact-file", _artifact(_OUTPUT_FILE, streamed=True)),
    ("tck-stream-artifact-chunked", _chunked),
    ("test-resubscribe-message-id", _long_running),
)


def behaviour_for(message_id: str) -> Behaviour:
    """The scenario whose prefix ``message_id`` starts with; the echo when none does."""
    for prefix, behaviour in SCENARIOS:
        if message_id.startswith(prefix):
            return behaviour
    return _echo


class ScenarioAgent(Agent):
    """The 1.0 kit line's agent: each messageId prefix selects one scenario."""

    # Wording matters: the kits flag cards mentioning credentials or "internal"-like words.
    name = "Conformance Agent"
    description = "Answers each message as the A2A conformance scenarios describe."
    version = "1.0.0"
    skills = [
        AgentSkill(
            id="conformance",
            name="Conformance",
            description="Completes, streams or pauses each task as its message asks",
            tags=["a2a", "conformance"],
            examples=["hello"],
        )
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome | None:
        return behaviour_for(msg.message_id)(msg, ctx)


class ConformanceAgent(Agent):
    """The legacy kit line's agent (``TCK_LEGACY=1``): every task stays WORKING until canceled.

    It keeps the name it had when it was the only conformance agent.
    """

    name = "Conformance Agent"
    description = "Accepts every message and keeps its task working until it is canceled."
    version = "1.0.0"
    skills = [
        AgentSkill(
            id="conformance",
            name="Conformance",
            description="Keeps each task in the working state",
            tags=["a2a", "conformance"],
            examples=["hello"],
        )
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome | None:
        if msg.message_id.startswith(_DELAYED_PREFIXES):
            _wait(ctx, SUBSCRIBE_DELAY)
        return working()


#: The one skill only the extended card lists.
EXTENDED_SKILL = AgentSkill(
    id="conformance-extended",
    name="Conformance (extended)",
    description="Listed only for callers that authenticated",
    tags=["a2a", "conformance"],
    examples=["hello"],
)


def extended_card_auth(token: str) -> AuthPolicy:
    """Bearer ``token`` authenticates; without credentials a caller is anonymous.

    Anonymous callers reach every operation but the extended card, which the app
    serves to authenticated callers only. A wrong token is refused (401).
    """
    expected = token.encode("utf-8")

    def verify(presented: str) -> str | None:
        return "tck" if hmac.compare_digest(presented.encode("utf-8"), expected) else None

    return AuthPolicy([BearerAuthenticator(verify, description="The conformance run's token")],
                      required=False)


def build_app(*, legacy: bool = LEGACY, versions: tuple[str, ...] = VERSIONS,
              base_url: str | None = None, extended_card_token: str = "") -> A2AApp:
    """The conformance agent, with an extended card behind ``extended_card_token`` if given."""
    protect = bool(extended_card_token) and not legacy

    def extended_card(ctx: CallContext) -> AgentCard:
        card = app.card
        return dataclasses.replace(card, skills=[*card.skills, EXTENDED_SKILL])

    app = A2AApp(
        ConformanceAgent() if legacy else ScenarioAgent(),
        base_url=base_url or f"http://localhost:{PORT}/",
        push=PushSettings(policy=UrlPolicy.allowing_loopback()),
        auth=extended_card_auth(extended_card_token) if protect else None,
        card=CardSettings(extended_card=extended_card if protect else None),
        protocol=ProtocolSettings(
            versions=tuple(versions),
            extensions=(TimestampExtension(lambda: datetime.now(timezone.utc)),),
            preview_generations=os.environ.get("A2A_PREVIEW_GENERATIONS") == "1",
        ),
    )
    return app


app = build_app(base_url=os.environ.get("A2A_BASE_URL"),
                extended_card_token=EXTENDED_CARD_TOKEN)


if __name__ == "__main__":
    # Loopback only: this agent may POST webhooks to loopback addresses.
    handle = serve(app, f"127.0.0.1:{PORT}")
    print(f"Conformance agent on http://localhost:{handle.port}/")
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
