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
    "AttemptResult": "a2a_wsgi.push.delivery",
    "PushDeliverer": "a2a_wsgi.push.delivery",
    "backoff_delay": "a2a_wsgi.push.delivery",
    "IDEMPOTENCY_HEADER": "a2a_wsgi.push.planner",
    "PushPlanner": "a2a_wsgi.push.planner",
    "idempotency_key": "a2a_wsgi.push.planner",
    "REDACTED": "a2a_wsgi.push.settings",
    "PushSettings": "a2a_wsgi.push.settings",
    "redact": "a2a_wsgi.push.settings",
    "JWKS_PATH": "a2a_wsgi.push.signing",
    "SIGNATURE_HEADER": "a2a_wsgi.push.signing",
    "PushSigner": "a2a_wsgi.push.signing",
    "SigningKey": "a2a_wsgi.push.signing",
    "LOOPBACK_NETWORKS": "a2a_wsgi.push.ssrf",
    "Target": "a2a_wsgi.push.ssrf",
    "UnresolvableHostError": "a2a_wsgi.push.ssrf",
    "UnsafeURLError": "a2a_wsgi.push.ssrf",
    "UrlPolicy": "a2a_wsgi.push.ssrf",
    "address_problem": "a2a_wsgi.push.ssrf",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
