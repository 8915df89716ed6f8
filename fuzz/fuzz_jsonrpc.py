"""JSON-RPC: a request body through the envelope parser and, when it is a request, its
params through the operation's decoder in both dialects (0.3 and 1.0); the same bytes as
a response body through the client's envelope reader and each operation's result decoder.

Documented errors: :class:`~a2a_core.errors.RPCError` (ParseError, InvalidRequestError,
InvalidParamsError, MethodNotFoundError…) on the server side; RemoteProtocolError and
InvalidAgentResponseError (both A2AError) on the client side.
"""

from __future__ import annotations

from _harness import fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from a2a_core import wire
    from a2a_core._jsonrpc import parse_request, parse_response
    from a2a_core.errors import A2AError, RPCError
    from a2a_core.optable import OPERATIONS

VERSIONS = ("0.3", "1.0")


def check(data: bytes) -> None:
    for notifications in (False, True):
        try:
            rpc = parse_request(data, allow_notifications=notifications)
        except RPCError:
            continue
        try:
            operation = OPERATIONS.for_method(rpc.method)
        except RPCError:
            break
        for version in VERSIONS:
            try:
                wire.decode_params(operation, rpc.params, version)
            except RPCError:
                pass
        break
    try:
        response = parse_response(data)
    except A2AError:
        return
    if response.error is not None:
        wire.decode_error(response.error)
        return
    for operation in OPERATIONS:
        for version in VERSIONS:
            try:
                wire.decode_result(operation, response.result, version)
            except A2AError:
                pass


if __name__ == "__main__":
    fuzz(check)
