"""The JSON-RPC binding: one POST to the endpoint, a JSON-RPC response or SSE of them.

Order of checks, and why:

1. body size (the adapter flags it) and envelope: nothing else can be read
   from a body that is not a JSON-RPC request;
2. version, then method, then extensions: an unsupported version is refused
   before anything runs; the request id is echoed whenever it was readable;
3. extensions, capability gates, stream admission, params, authorization, the
   operation: the one call sequence of :mod:`a2a_core._calls`, which answers a
   :class:`~a2a_core._calls.Failed` for anything that went wrong there.

Every error, the streaming methods' included when nothing was streamed yet,
is a JSON-RPC error response (``application/json``, HTTP 200; 503 with
``Retry-After`` when no stream place is free; a refused caller's
:class:`~a2a_core._calls.Refused` with its own 401/403 and challenges).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import wire
from ._calls import CallPipeline, Failed, Refused
from ._http import HttpRequest, HttpResponse
from ._jsonrpc import RPCRequest, encode_error_response, encode_response, parse_request
from ._observe import JSONRPC, observed
from ._operations import Events
from ._streaming import SSE_HEADERS, sse_body
from ._versioning import V0_3, V1_0, negotiate_version
from .errors import InvalidRequestError, RPCError, VersionNotSupportedError

__all__ = ["JsonRpcBinding"]

_JSON = "application/json"


class JsonRpcBinding:
    """Answers JSON-RPC POSTs through a :class:`~a2a_core._calls.CallPipeline`."""

    def __init__(self, calls: CallPipeline, *, versions: Sequence[str], max_json_depth: int):
        self.calls = calls
        self.versions = tuple(versions)
        self.max_json_depth = max_json_depth

    def answer(
        self,
        request: HttpRequest,
        *,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
    ) -> HttpResponse:
        version, version_error = self._negotiate_version(request)
        record = observed(request)
        record.start(JSONRPC, version, identity)
        request_id: Any = None
        try:
            rpc = self._parse(request, version)
            request_id = rpc.id
            record.identify(rpc.id)
            if version_error is not None:
                raise version_error
            operation = self.calls.operations.table.for_method(rpc.method)
        except RPCError as err:  # the envelope, the version or the method: nothing ran
            record.failed(err)
            # A parse error knows the id when it could read one; later errors use rpc.id.
            echoed = request_id if request_id is not None else err.request_id
            record.identify(echoed)
            return self._error(echoed, Failed(err), version, [])
        answered = self.calls.call(request, operation, rpc.params or {}, version,
                                   base_url=base_url, metadata=metadata, identity=identity,
                                   record=record)
        answer, headers = answered.answer, answered.headers
        if isinstance(answer, Failed):
            return self._error(request_id, answer, version, headers)
        if isinstance(answer, Events):
            body = sse_body(request_id, version, answer.items)
            return HttpResponse(200, SSE_HEADERS + headers, body)
        payload = encode_response(request_id, answer.value)
        return HttpResponse(200, [("Content-Type", _JSON), *headers], payload)

    def refuse(self, request: HttpRequest, refused: Refused) -> HttpResponse:
        """``refused`` for a caller turned away before its body was read (id null)."""
        version, _ = self._negotiate_version(request)
        return self._error(None, Failed.of(refused), version, [])

    def _negotiate_version(self, request: HttpRequest) -> tuple[str, RPCError | None]:
        """The version to answer in, and the error to raise once the id is known.

        An unsupported version is reported after the body is parsed, so the
        error can echo the request id; it is written in the 1.0 shape.
        """
        try:
            header = request.headers.get("A2A-Version")
            return negotiate_version(
                header, self.versions, query=request.query.get("A2A-Version")
            ), None
        except VersionNotSupportedError as err:
            return V1_0, err

    def _parse(self, request: HttpRequest, version: str) -> RPCRequest:
        if request.body_too_large:
            raise InvalidRequestError("Request body too large")
        # 0.3 peers (the 0.3 SDK and kit) send id-less requests and expect an
        # answer with id null; 1.0 stays strict.
        return parse_request(
            request.body, max_depth=self.max_json_depth, allow_notifications=version == V0_3
        )

    def _error(self, request_id: Any, failed: Failed, version: str,
               headers: list[tuple[str, str]]) -> HttpResponse:
        """A JSON-RPC error response: HTTP 200 unless the failure has its own status (503
        when busy, a refused caller's 401/403), with its headers (``Retry-After``, the
        challenges). A refused caller's answer names no extensions (none were applied)."""
        body = encode_error_response(request_id, wire.encode_error(failed.error, version))
        if failed.refused or not headers:
            headers = self.calls.response_headers(version, None)
        return HttpResponse(failed.status or 200,
                            [("Content-Type", _JSON), *headers, *failed.headers], body)
