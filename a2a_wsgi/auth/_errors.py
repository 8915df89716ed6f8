"""Authentication failures, each knowing its HTTP answer.

::

    A2AError
    └── AuthError                      http_status, challenges (WWW-Authenticate values)
        ├── AuthenticationRequiredError  401: no credentials of any scheme the card declares
        │   └── InvalidCredentialsError  401: credentials present but wrong, expired, malformed,
        │                                    oversized, or for another audience or issuer
        └── PermissionDeniedError        403: authenticated, but not allowed (a missing scope)

``reason`` is fixed text of ours, safe to show the client and to log: it never
contains the credential, a token's claims or a key.

Inside the protocol the two answers are the JSON-RPC errors
:class:`UnauthenticatedError` (-31401) and :class:`UnauthorizedError` (-31403),
the codes and ErrorInfo reasons the A2A project's Go SDK uses: outside
JSON-RPC's reserved -32768…-32000, so no current or future A2A code can
collide with them, and a client that does not know them still sees the HTTP
status.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from a2a_core._calls import Refused
from a2a_core._http import HttpResponse
from a2a_core.errors import A2AError, RPCError

__all__ = [
    "AuthError",
    "AuthenticationRequiredError",
    "InvalidCredentialsError",
    "PermissionDeniedError",
    "UnauthenticatedError",
    "UnauthorizedError",
]


class UnauthenticatedError(RPCError):
    """The JSON-RPC (and HTTP+JSON) error of a 401: no acceptable credentials."""

    code = -31401
    default_message = "Authentication required"
    reason = "UNAUTHENTICATED"
    http_status = 401
    #: The google.rpc.Code name an HTTP+JSON ``Status`` body carries.
    grpc_status = "UNAUTHENTICATED"


class UnauthorizedError(RPCError):
    """The JSON-RPC (and HTTP+JSON) error of a 403: authenticated, but not allowed."""

    code = -31403
    default_message = "Permission denied"
    reason = "UNAUTHORIZED"
    http_status = 403
    grpc_status = "PERMISSION_DENIED"


class AuthError(A2AError):
    """The request may not go on; :meth:`response` is the answer to send."""

    http_status: ClassVar[int] = 401

    def __init__(self, reason: str, *, challenges: Sequence[str] = (),
                 error: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        #: ``WWW-Authenticate`` values, one per scheme the client may use.
        self.challenges = tuple(challenges)
        #: The RFC 6750 error code (``invalid_token``, ``invalid_request``,
        #: ``insufficient_scope``), when there is one.
        self.error = error

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, error={self.error!r})"

    def headers(self) -> list[tuple[str, str]]:
        return [("WWW-Authenticate", challenge) for challenge in self.challenges]

    def rpc_error(self) -> UnauthenticatedError | UnauthorizedError:
        """This refusal as the protocol error a JSON-RPC or HTTP+JSON client reads."""
        if self.http_status == 403:
            return UnauthorizedError(self.reason)
        return UnauthenticatedError(self.reason)

    def refused(self) -> Refused:
        """This refusal as the core carries it: each binding writes it in its own shape."""
        return Refused(self.rpc_error(), status=self.http_status,
                       headers=[("Cache-Control", "no-store"), *self.headers()])

    def response(self) -> HttpResponse:
        """A small JSON answer, bound to no binding: ``{"error": {"code", "message"}}``."""
        return self.refused().response()


class AuthenticationRequiredError(AuthError):
    """401: the request carries no credentials for any declared scheme."""

    http_status: ClassVar[int] = 401


class InvalidCredentialsError(AuthenticationRequiredError):
    """401: the credentials were not accepted."""


class PermissionDeniedError(AuthError):
    """403: the caller is known but may not do this."""

    http_status: ClassVar[int] = 403
