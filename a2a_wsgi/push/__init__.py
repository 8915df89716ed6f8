"""Push notifications: safe webhook URLs, a durable outbox, delivery with retries, signing.

``A2AApp(push=True)`` (or ``push=PushSettings(...)``) switches it on; see
``docs/push.md`` for senders and receivers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from .delivery import AttemptResult as AttemptResult
    from .delivery import PushDeliverer as PushDeliverer
    from .delivery import backoff_delay as backoff_delay
    from .planner import IDEMPOTENCY_HEADER as IDEMPOTENCY_HEADER
    from .planner import PushPlanner as PushPlanner
    from .planner import idempotency_key as idempotency_key
    from .settings import REDACTED as REDACTED
    from .settings import PushSettings as PushSettings
    from .settings import redact as redact
    from .signing import JWKS_PATH as JWKS_PATH
    from .signing import SIGNATURE_HEADER as SIGNATURE_HEADER
    from .signing import PushSigner as PushSigner
    from .signing import SigningKey as SigningKey
    from .ssrf import LOOPBACK_NETWORKS as LOOPBACK_NETWORKS
    from .ssrf import Target as Target
    from .ssrf import UnresolvableHostError as UnresolvableHostError
    from .ssrf import UnsafeURLError as UnsafeURLError
    from .ssrf import UrlPolicy as UrlPolicy
    from .ssrf import address_problem as address_problem

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

#: Where each name lives (imported on first use, :mod:`a2a_core._lazy`).
_WHERE = {
    "AttemptResult": ".delivery",
    "PushDeliverer": ".delivery",
    "backoff_delay": ".delivery",
    "IDEMPOTENCY_HEADER": ".planner",
    "PushPlanner": ".planner",
    "idempotency_key": ".planner",
    "REDACTED": ".settings",
    "PushSettings": ".settings",
    "redact": ".settings",
    "JWKS_PATH": ".signing",
    "SIGNATURE_HEADER": ".signing",
    "PushSigner": ".signing",
    "SigningKey": ".signing",
    "LOOPBACK_NETWORKS": ".ssrf",
    "Target": ".ssrf",
    "UnresolvableHostError": ".ssrf",
    "UnsafeURLError": ".ssrf",
    "UrlPolicy": ".ssrf",
    "address_problem": ".ssrf",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
