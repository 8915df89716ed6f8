"""Push notifications: safe webhook URLs, a durable outbox, delivery with retries, signing.

``A2AApp(push=True)`` (or ``push=PushSettings(...)``) switches it on; see
``docs/push.md`` for senders and receivers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from ._delivery import AttemptResult as AttemptResult
    from ._delivery import PushDeliverer as PushDeliverer
    from ._delivery import backoff_delay as backoff_delay
    from ._planner import IDEMPOTENCY_HEADER as IDEMPOTENCY_HEADER
    from ._planner import PushPlanner as PushPlanner
    from ._planner import idempotency_key as idempotency_key
    from ._settings import REDACTED as REDACTED
    from ._settings import PushSettings as PushSettings
    from ._settings import redact as redact
    from ._signing import JWKS_PATH as JWKS_PATH
    from ._signing import SIGNATURE_HEADER as SIGNATURE_HEADER
    from ._signing import PushSigner as PushSigner
    from ._signing import SigningKey as SigningKey
    from ._ssrf import LOOPBACK_NETWORKS as LOOPBACK_NETWORKS
    from ._ssrf import Target as Target
    from ._ssrf import UnresolvableHostError as UnresolvableHostError
    from ._ssrf import UnsafeURLError as UnsafeURLError
    from ._ssrf import UrlPolicy as UrlPolicy
    from ._ssrf import address_problem as address_problem

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
    "AttemptResult": "a2a_wsgi.push._delivery",
    "PushDeliverer": "a2a_wsgi.push._delivery",
    "backoff_delay": "a2a_wsgi.push._delivery",
    "IDEMPOTENCY_HEADER": "a2a_wsgi.push._planner",
    "PushPlanner": "a2a_wsgi.push._planner",
    "idempotency_key": "a2a_wsgi.push._planner",
    "REDACTED": "a2a_wsgi.push._settings",
    "PushSettings": "a2a_wsgi.push._settings",
    "redact": "a2a_wsgi.push._settings",
    "JWKS_PATH": "a2a_wsgi.push._signing",
    "SIGNATURE_HEADER": "a2a_wsgi.push._signing",
    "PushSigner": "a2a_wsgi.push._signing",
    "SigningKey": "a2a_wsgi.push._signing",
    "LOOPBACK_NETWORKS": "a2a_wsgi.push._ssrf",
    "Target": "a2a_wsgi.push._ssrf",
    "UnresolvableHostError": "a2a_wsgi.push._ssrf",
    "UnsafeURLError": "a2a_wsgi.push._ssrf",
    "UrlPolicy": "a2a_wsgi.push._ssrf",
    "address_problem": "a2a_wsgi.push._ssrf",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
