"""How a deployment switches push on, and the rules a push config must pass.

``A2AApp(push=True)`` turns delivery on with the defaults below (public
webhooks only); ``A2AApp(push=PushSettings(...))`` tunes it. The same rules
run when a config is created (bad input is a -32602 naming the field) and,
for the URL, again before every delivery.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from a2a_core.errors import InvalidParamsError
from a2a_core.models import (
    AuthenticationInfo,
    PushNotificationConfig,
    TaskPushNotificationConfig,
)

from ._signing import PushSigner
from ._ssrf import UnresolvableHostError, UnsafeURLError, UrlPolicy

__all__ = ["PushSettings", "REDACTED", "redact"]

#: What stored credentials read back as (they are write-only).
REDACTED = "********"

# RFC 7230 token: what an auth scheme may be spelled with.
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_MAX_ID = 256
_MAX_SECRET = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class PushSettings:
    """Push delivery options. Defaults: public http(s) webhooks only, unsigned.

    ``policy``: which URLs are allowed (:class:`~a2a_wsgi.push._ssrf.UrlPolicy`;
    ``UrlPolicy.allowing_loopback()`` for a local test receiver). ``signer``: sign each
    delivery and serve the JWKS (None: off). ``attempt_timeout``: the most one
    POST may take, connect to last byte (the spec suggests 10-30 s);
    ``connect_timeout`` bounds the TCP/TLS connect alone. A failed delivery is
    retried after ``backoff_base * 2**(n-1)`` seconds (jittered, at most
    ``backoff_cap``) and abandoned after ``max_attempts``. ``concurrency``
    deliveries run at once per process, so one slow receiver never holds up
    the others. ``default_version`` is the payload dialect for configs whose
    dialect is unknown (stored before it was recorded).
    """

    policy: UrlPolicy = field(default_factory=UrlPolicy)
    signer: PushSigner | None = None
    attempt_timeout: float = 10.0
    connect_timeout: float = 5.0
    max_attempts: int = 8
    backoff_base: float = 1.0
    backoff_cap: float = 300.0
    concurrency: int = 4
    poll_interval: float = 0.5
    max_configs_per_task: int = 10
    max_response_bytes: int = 65536
    default_version: str = "1.0"
    user_agent: str = "a2a-wsgi-push"

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.concurrency < 1:
            raise ValueError("max_attempts and concurrency must be at least 1")
        if self.attempt_timeout <= 0 or self.connect_timeout <= 0:
            raise ValueError("timeouts must be positive")

    @property
    def claim_seconds(self) -> float:
        """How long a claimed delivery stays ours: one attempt plus a margin. After a crash
        mid-attempt, the entry waits this long before another worker takes it over."""
        return 2 * self.attempt_timeout + 1.0

    def prepare(
        self,
        config: TaskPushNotificationConfig,
        version: str,
        existing: Sequence[TaskPushNotificationConfig] = (),
    ) -> TaskPushNotificationConfig:
        """The config to store: checked (-32602 naming the field) and stamped with ``version``.

        A host that does not resolve *now* is accepted: it is no SSRF risk, and
        delivery checks it again (a temporary DNS failure should not refuse a
        config). ``existing`` are the task's stored configs, for the per-task cap.
        """
        push = config.push_notification_config
        _check_url(self.policy, push.url)
        _check_fields(push)
        replaced = push.id is not None and any(
            c.push_notification_config.id == push.id for c in existing)
        if not replaced and len(existing) >= self.max_configs_per_task:
            raise _invalid("pushNotificationConfig",
                           f"a task may have at most {self.max_configs_per_task} push configs")
        return replace(config, protocol_version=version)


def redact(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """The config as read back: credentials are write-only (A2A#1681)."""
    push = config.push_notification_config
    auth = push.authentication
    if auth is None or not auth.credentials:
        return config
    hidden = replace(push, authentication=replace(auth, credentials=REDACTED))
    return replace(config, push_notification_config=hidden)


def _invalid(name: str, reason: str) -> InvalidParamsError:
    return InvalidParamsError(f"Invalid push notification config: {name}: {reason}",
                              field_violations={f"params.{name}": reason})


def _check_url(policy: UrlPolicy, url: str) -> None:
    try:
        policy.check(url)
    except UnresolvableHostError:
        return
    except UnsafeURLError as err:
        raise _invalid("url", f"webhook URL refused: {err.reason}") from None


def _check_fields(push: PushNotificationConfig) -> None:
    """Header-bound values: no CR/LF/control characters (header injection), bounded sizes."""
    if push.id is not None and (not push.id or len(push.id) > _MAX_ID or _has_control(push.id)):
        raise _invalid("id", f"must be 1-{_MAX_ID} characters without control characters")
    if push.token is not None and (len(push.token) > _MAX_SECRET or _has_control(push.token)):
        raise _invalid("token", "must not contain control characters (CR, LF, ...)")
    if push.authentication is not None:
        _check_authentication(push.authentication)


def _check_authentication(auth: AuthenticationInfo) -> None:
    if not auth.schemes:
        raise _invalid("authentication.scheme", "an authentication scheme is required")
    scheme = auth.schemes[0]
    if not _TOKEN.fullmatch(scheme):  # (match's $ would let 'Basic\n' through)
        raise _invalid("authentication.scheme", "must be an HTTP authentication scheme token")
    credentials = auth.credentials
    if credentials is None or not credentials.strip():
        raise _invalid("authentication.credentials",
                       "required with a scheme (the Authorization header would be empty)")
    if len(credentials) > _MAX_SECRET or _has_control(credentials):
        raise _invalid("authentication.credentials",
                       "must not contain control characters (CR, LF, ...)")


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)
