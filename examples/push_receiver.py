"""A webhook on loopback that verifies each push from an agent and prints it.

    .venv/bin/python examples/push_receiver.py http://127.0.0.1:8000/ --send hello --until-done

Listens on ``--listen`` (default 127.0.0.1:9000) at ``/webhook``. Every POST is checked
with :func:`a2a_client.verify_push`: the notification token this receiver registered,
and the agent's signature (a key from the agent's JWKS, over this exact body, recent,
for this webhook's URL, never seen before). A push that passes prints one line on
stdout; one that fails gets 401 and a line on stderr (the sender is never told why).
``--send TEXT`` sends TEXT to the agent with this webhook as the task's push config;
``--until-done`` exits 0 after the push that reports the task finished. Needs the
signing extra (``.venv/bin/pip install -e '.[signing]'``); see docs/push.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urljoin

from a2a_client import A2AClient, JWKSFetcher, PushVerificationError, ReplayCache, verify_push
from a2a_core.models import PushNotificationConfig
from a2a_wsgi import serve  # a plain loopback server for the webhook

#: States after which a task changes no more.
FINAL_STATES = {"completed", "failed", "canceled", "rejected"}


class PushReceiver:
    """The WSGI app: verify, print, answer 200 (or 401 without saying why)."""

    def __init__(self, agent_url: str, webhook_url: str, token: str,
                 on_push: Callable[[str, str], None]) -> None:
        self.webhook_url, self.token, self.on_push = webhook_url, token, on_push
        self.jwks = JWKSFetcher(urljoin(agent_url, "/.well-known/jwks.json"))
        self.seen = ReplayCache()

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != "/webhook":
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(min(length, 1 << 20))
        headers = {key[5:].replace("_", "-").title(): str(value)
                   for key, value in environ.items() if key.startswith("HTTP_")}
        try:
            claims = verify_push(headers, body, jwks=self.jwks, token=self.token,
                                 audience=self.webhook_url, max_age=300,
                                 replay_cache=self.seen)
        except PushVerificationError as exc:
            print(f"refused a push: {exc.reason}", file=sys.stderr, flush=True)
            start_response("401 Unauthorized", [("Content-Length", "0")])
            return [b""]
        task_id, state = describe(json.loads(body))
        print(f"verified push: task {task_id} {state} (signature and token good, "
              f"jti {claims.get('jti')})", flush=True)
        self.on_push(task_id, state)
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]


def describe(payload: dict[str, Any]) -> tuple[str, str]:
    """The task id and the state a push body reports (a 1.0 stream event or a 0.3 task)."""
    for name in ("statusUpdate", "task"):
        if isinstance(payload.get(name), dict):
            event = payload[name]
            task_id = event.get("taskId") or event.get("id")
            return str(task_id), state_name(event.get("status", {}).get("state"))
    if isinstance(payload.get("artifactUpdate"), dict):
        return str(payload["artifactUpdate"].get("taskId")), "artifact"
    return str(payload.get("id")), state_name(payload.get("status", {}).get("state"))


def state_name(state: object) -> str:
    """``completed`` for the 1.0 ``TASK_STATE_COMPLETED`` and the 0.3 ``completed`` alike."""
    return str(state or "?").lower().removeprefix("task_state_").replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="push_receiver.py", description=__doc__.split("\n")[0])
    parser.add_argument("agent", help="the agent's base URL, e.g. http://127.0.0.1:8000/")
    parser.add_argument("--listen", default="127.0.0.1:9000", help="HOST:PORT to listen on")
    parser.add_argument("--send", metavar="TEXT", help="send TEXT with this webhook registered")
    parser.add_argument("--until-done", action="store_true",
                        help="exit after the push that reports the task finished")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Listen, optionally send, print each verified push; 0 when stopped or done."""
    args = build_parser().parse_args(argv)
    done = threading.Event()
    token = secrets.token_urlsafe(16)

    def on_push(task_id: str, state: str) -> None:
        if state in FINAL_STATES:
            done.set()

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # our line per push suffices
    receiver = PushReceiver(args.agent, "", token, on_push)
    handle = serve(receiver, args.listen)
    receiver.webhook_url = f"{handle.url}/webhook"  # the audience the agent signs for
    print(f"listening for pushes on {receiver.webhook_url}", flush=True)
    try:
        if args.send is not None:
            with A2AClient(args.agent) as agent:
                config = PushNotificationConfig(url=receiver.webhook_url, token=token)
                sent = agent.send_message(args.send, push_notification_config=config,
                                          blocking=False)
            print(f"sent {args.send!r}: task {getattr(sent, 'id', '?')}", flush=True)
        while not (args.until_done and done.is_set()):
            done.wait(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
    return 0

if __name__ == "__main__":
    sys.exit(main())
