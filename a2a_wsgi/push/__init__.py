"""Push notifications: safe webhook URLs, a durable outbox, delivery with retries, signing.

``A2AApp(push=True)`` (or ``push=PushSettings(...)``) switches it on; see
``docs/push.md`` for senders and receivers.
"""

from __future__ import annotations

from .delivery import AttemptResult, PushDeliverer, backoff_delay
from .planner import IDEMPOTENCY_HEADER, PushPlanner, idempotency_key
from .settings import REDACTED, PushSettings, redact
from .signing import JWKS_PATH, SIGNATURE_HEADER, PushSigner, SigningKey
from .ssrf import (
    LOOPBACK_NETWORKS,
    Target,
    UnresolvableHostError,
    UnsafeURLError,
    UrlPolicy,
    address_problem,
)

__all__ = [
    "AttemptResult",
    "IDEMPOTENCY_HEADER",
    "JWKS_PATH",
    "LOOPBACK_NETWORKS",
    "PushDeliverer",
    "PushPlanner",
    "PushSettings",
    "PushSigner",
    "REDACTED",
    "SIGNATURE_HEADER",
    "SigningKey",
    "Target",
    "UnresolvableHostError",
    "UnsafeURLError",
    "UrlPolicy",
    "address_problem",
    "backoff_delay",
    "idempotency_key",
    "redact",
]
