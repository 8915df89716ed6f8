"""The echo agent behind bearer tokens, with an extended card and a signed card.

    .venv/bin/pip install -e '.[signing]'       # once: signed cards need the signing extra
    SECURE_TOKENS=alice=tok-alice,bob=tok-bob python examples/secure.py [HOST:PORT]
    SECURE_TOKENS=... SECURE_SIGNING_KEY=card-key.pem A2A_BASE_URL=https://agents.example/ \\
        gunicorn -k gthread --threads 16 -w 4 examples.secure:app

* ``$SECURE_TOKENS``: ``name=token`` pairs joined by commas; a caller sending
  ``Authorization: Bearer <token>`` is ``name``, and sees only its own tasks.
* The public card lists the echo skill; the extended card (GetExtendedAgentCard,
  for authenticated callers only) adds ``whoami``, which answers the caller's name.
* Every card is signed with the private key in the PEM file ``$SECURE_SIGNING_KEY``
  (``openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out card-key.pem``),
  published at ``/.well-known/jwks.json``. Without one a key is generated at start,
  with a warning: each process then has its own key, which several workers (or a
  restart) turn into cards their own JWKS cannot verify.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import logging
import os
import sys

from a2a_core._service import CallContext
from a2a_core.models import AgentCard, AgentSkill, Message
from a2a_core.signing import SigningKey
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi._agent import Outcome
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.settings import CardSettings

log = logging.getLogger("examples.secure")

WHOAMI = AgentSkill(id="whoami", name="Who am I", description="Answers the caller's name",
                    tags=["auth"], examples=["whoami"])


class TokenTable:
    """``name=token`` pairs; a lookup compares against every token, hit or miss alike."""

    def __init__(self, spec: str) -> None:
        self._digests: list[tuple[bytes, str]] = []
        for pair in filter(None, (p.strip() for p in spec.split(","))):
            name, equals, token = pair.partition("=")
            if not equals or not name.strip() or not token.strip():
                raise ValueError("SECURE_TOKENS holds name=token pairs joined by commas")
            self._digests.append((_digest(token.strip()), name.strip()))

    def __len__(self) -> int:
        return len(self._digests)

    def __repr__(self) -> str:
        return f"TokenTable(names={sorted(name for _, name in self._digests)})"

    def identity_of(self, token: str) -> str | None:
        """The name ``token`` belongs to, or None."""
        digest, found = _digest(token), None
        for candidate, name in self._digests:
            if hmac.compare_digest(candidate, digest):
                found = name
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class SecureEchoAgent(Agent):
    name = "Secure Echo Agent"
    description = "Answers with the text it is sent, to callers with a token"
    version = "1.0.0"
    skills = [
        AgentSkill(id="echo", name="Echo", description="Repeats your message", tags=["echo"])
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        """``whoami`` answers the caller's name; anything else comes back unchanged."""
        if msg.text.strip().lower() == "whoami":
            caller = getattr(ctx.identity, "identity", ctx.identity)
            return reply(f"You are {caller}.")
        return reply(*msg.parts)


def signing_key(path: str | None) -> SigningKey:
    """The card key from a PEM file, or a fresh one (with a warning: it lives in this process)."""
    if path:
        with open(path, "rb") as pem:
            key = SigningKey.from_pem("card", pem.read())
    else:
        key = SigningKey.generate("card", "ES256")
        log.warning("SECURE_SIGNING_KEY is not set: signing cards with a key generated now; "
                    "its signatures verify only against this process's JWKS")
    return dataclasses.replace(key, kid=thumbprint(key))


def thumbprint(key: SigningKey) -> str:
    """The key's RFC 7638 thumbprint: a kid that changes exactly when the key does."""
    jwk = key.public_jwk()
    members = {"EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x"),
               "RSA": ("e", "kty", "n")}[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    digest = hashlib.sha256(canonical.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def extended_card(ctx: CallContext) -> AgentCard:
    """The public card and one more skill, for authenticated callers."""
    card = app.card
    return dataclasses.replace(card, skills=[*card.skills, WHOAMI])


#: What to do when the signing extra is missing (README's first install has no extras).
MISSING_EXTRA = ("examples/secure.py signs its cards: install the signing extra: "
                 ".venv/bin/pip install -e '.[signing]'")

try:
    card_key = signing_key(os.environ.get("SECURE_SIGNING_KEY"))
except (ImportError, RuntimeError) as exc:
    if not isinstance(exc, ImportError) and not isinstance(exc.__cause__, ImportError):
        raise
    if __name__ == "__main__":
        raise SystemExit(MISSING_EXTRA) from None  # one line, no traceback
    raise RuntimeError(MISSING_EXTRA) from exc

tokens = TokenTable(os.environ.get("SECURE_TOKENS", ""))
if not tokens:
    log.warning("SECURE_TOKENS is empty: every call but the card is refused")

app = A2AApp(
    SecureEchoAgent(),
    base_url=os.environ.get("A2A_BASE_URL"),
    auth=BearerAuthenticator(tokens.identity_of, description="A token from the operator"),
    card=CardSettings(extended_card=extended_card, signing_keys=(card_key,)),
)


if __name__ == "__main__":
    # The access and task lines (docs/telemetry.md) need a handler; werkzeug's own
    # request line would repeat ours. Under gunicorn see examples/gunicorn_logging.py.
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    handle = serve(app, sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8000")
    print(f"Secure Echo Agent on {handle.url}/ (card: {handle.url}/.well-known/agent-card.json)")
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
