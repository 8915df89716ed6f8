"""The error tree shared by the server and the client.

One registry maps every JSON-RPC code the A2A spec defines (-32700…-32603 and
-32001…-32009, and the dev-1.1 preview's -32010) to one class named as in the
spec. A handler on the server that raises :class:`TaskNotFoundError` makes the
client raise the very same class.
Codes we do not know survive as a plain :class:`RPCError` with the code kept,
so a newer peer never crashes us (h2's ``_error_code_from_int`` idea).

Misuse of *our* API raises ``TypeError``/``ValueError``/``RuntimeError``, never
an :class:`A2AError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = [
    "A2AError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "InvalidTransitionError",
    "RPCError",
    "ParseError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "InvalidParamsError",
    "InternalError",
    "TaskNotFoundError",
    "TaskNotCancelableError",
    "PushNotificationNotSupportedError",
    "UnsupportedOperationError",
    "ContentTypeNotSupportedError",
    "InvalidAgentResponseError",
    "ExtendedAgentCardNotConfiguredError",
    "AuthenticatedExtendedCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "VersionNotSupportedError",
    "TaskGenerationMismatchError",
    "ERROR_CLASSES",
    "error_from_code",
]


class A2AError(Exception):
    """Root of every exception this library raises on purpose."""


class ProtocolError(A2AError):
    """Somebody broke the protocol's rules. Abstract: raise a child."""

    def __init__(self, *args: object) -> None:
        if type(self) is ProtocolError:
            raise TypeError("raise LocalProtocolError or RemoteProtocolError")
        super().__init__(*args)


class LocalProtocolError(ProtocolError):
    """Our caller asked for something illegal (e.g. a state change after COMPLETED)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something illegal (bad SSE framing, an invalid card)."""


class InvalidTransitionError(LocalProtocolError):
    """A task update that the lifecycle table does not allow."""


class RPCError(A2AError):
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``.

    Subclasses fix ``code``, the spec's default ``message``, the 1.0 ErrorInfo
    ``reason`` and the ``http_status`` a REST binding would use.
    """

    code: ClassVar[int] = 0
    default_message: ClassVar[str] = "Error"
    reason: ClassVar[str | None] = None
    http_status: ClassVar[int] = 500
    #: The JSON-RPC id of the failing request when it could be read, so it can be echoed.
    request_id: str | int | None = None

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        code: int | None = None,
        metadata: Mapping[str, str] | None = None,
        field_violations: Mapping[str, str] | None = None,
    ) -> None:
        if code is not None:
            if type(self) is not RPCError:
                raise TypeError("only a plain RPCError takes an explicit code")
            self.code = code  # type: ignore[misc]  # instance override for unknown codes
        self.message = message if message is not None else self.default_message
        #: Free-form detail; in 0.3 it is sent as ``data`` as is.
        self.data = data
        #: String to string map placed in the 1.0 ErrorInfo ``metadata``.
        self.metadata: dict[str, str] = dict(metadata or {})
        #: JSON path of a bad field -> what is wrong with it (1.0 BadRequest).
        self.field_violations: dict[str, str] = dict(field_violations or {})
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RPCError):
            return NotImplemented
        return (type(self), self.code, self.message, self.data) == (
            type(other),
            other.code,
            other.message,
            other.data,
        )

    __hash__ = Exception.__hash__


class ParseError(RPCError):
    """The body is not valid JSON."""

    code = -32700
    default_message = "Invalid JSON payload"
    http_status = 400


class InvalidRequestError(RPCError):
    """Valid JSON, but not a valid JSON-RPC request."""

    code = -32600
    default_message = "Request payload validation error"
    reason = "INVALID_REQUEST"
    http_status = 400


class MethodNotFoundError(RPCError):
    code = -32601
    default_message = "Method not found"
    reason = "METHOD_NOT_FOUND"
    http_status = 404


class InvalidParamsError(RPCError):
    code = -32602
    default_message = "Invalid parameters"
    reason = "INVALID_PARAMS"
    http_status = 400


class InternalError(RPCError):
    code = -32603
    default_message = "Internal error"
    reason = "INTERNAL_ERROR"
    http_status = 500


class TaskNotFoundError(RPCError):
    """Unknown, expired or not visible to this caller: the three are indistinguishable."""

    code = -32001
    default_message = "Task not found"
    reason = "TASK_NOT_FOUND"
    http_status = 404


class TaskNotCancelableError(RPCError):
    code = -32002
    default_message = "Task cannot be canceled"
    reason = "TASK_NOT_CANCELABLE"
    http_status = 400


class PushNotificationNotSupportedError(RPCError):
    code = -32003
    default_message = "Push Notification is not supported"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
    http_status = 400


class UnsupportedOperationError(RPCError):
    code = -32004
    default_message = "This operation is not supported"
    reason = "UNSUPPORTED_OPERATION"
    http_status = 400


class ContentTypeNotSupportedError(RPCError):
    code = -32005
    default_message = "Incompatible content types"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    http_status = 400


class InvalidAgentResponseError(RPCError):
    code = -32006
    default_message = "Invalid agent response"
    reason = "INVALID_AGENT_RESPONSE"
    http_status = 500


class ExtendedAgentCardNotConfiguredError(RPCError):
    """1.0 name; 0.3 calls it AuthenticatedExtendedCardNotConfiguredError (an alias here)."""

    code = -32007
    default_message = "Authenticated Extended Card is not configured"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    http_status = 400


AuthenticatedExtendedCardNotConfiguredError = ExtendedAgentCardNotConfiguredError


class ExtensionSupportRequiredError(RPCError):
    code = -32008
    default_message = "Extension support is required"
    reason = "EXTENSION_SUPPORT_REQUIRED"
    http_status = 400


class VersionNotSupportedError(RPCError):
    code = -32009
    default_message = "Version not supported"
    reason = "VERSION_NOT_SUPPORTED"
    http_status = 400


class TaskGenerationMismatchError(RPCError):
    """dev-1.1 preview: a send's ``ifGenerationMatch`` is not the task's generation."""

    code = -32010
    default_message = "Task generation mismatch"
    reason = "TASK_GENERATION_MISMATCH"
    http_status = 409


#: code -> class, built once at import (werkzeug's ``default_exceptions``).
ERROR_CLASSES: Mapping[int, type[RPCError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        TaskNotFoundError,
        TaskNotCancelableError,
        PushNotificationNotSupportedError,
        UnsupportedOperationError,
        ContentTypeNotSupportedError,
        InvalidAgentResponseError,
        ExtendedAgentCardNotConfiguredError,
        ExtensionSupportRequiredError,
        VersionNotSupportedError,
        TaskGenerationMismatchError,
    )
}


def error_from_code(code: int, message: str | None = None, data: Any = None) -> RPCError:
    """Build the registered class for ``code``; unknown codes become a plain RPCError."""
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        return RPCError(message, data, code=code)
    return cls(message, data)
