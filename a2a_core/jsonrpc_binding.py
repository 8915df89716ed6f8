"""The JSON-RPC binding: one POST to the endpoint, a JSON-RPC response or SSE of them.

Order of checks, and why:

1. body size (the adapter flags it) and envelope: nothing else can be read
   from a body that is not a JSON-RPC request;
2. version, then method, then extensions: an unsupported version is refused
   before anything runs; the request id is echoed whenever it was readable;
3. capability gates, stream admission, params, authorization, the operation
   (:mod:`a2a_core.calls`, :mod:`a2a_core.operations`).

Every error, the streaming methods' included when nothing was streamed yet,
is a JSON-RPC error response (``application/json``, HTTP 200; 503 with
``Retry-After`` when no stream place is free; a refused caller's
:class:`~a2a_core.calls.Refused` with its own 401/403 and challenges).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from . import wire
from .calls import Busy, CallPipeline, Refused
from .errors import InternalError, InvalidRequestError, RPCError, VersionNotSupportedError
from .extensions import ActivatedExtensions
from .http import HttpRequest, HttpResponse
from .jsonrpc import RPCRequest, encode_error_response, encode_response, parse_request
from .observe import JSONRPC, observed
from .operations import Stream
from .streaming import SSE_HEADERS, sse_body
from .versioning import V0_3, V1_0, negotiate_version

__all__ = ["JsonRpcBinding"]

logger = logging.getLogger("a2a_core.server")

_JSON = "application/json"


class JsonRpcBinding:
    """Answers JSON-RPC POSTs through a :class:`~a2a_core.calls.CallPipeline`."""

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
        activated: ActivatedExtensions | None = None
        try:
            rpc = self._parse(request, version)
            request_id = rpc.id
            record.identify(rpc.id)
            if version_error is not None:
                raise version_error
            operation = self.calls.operations.table.for_method(rpc.method)
            params: Mapping[str, Any] = rpc.params or {}
            record.operating(operation, params)
            activated = self.calls.activate(request, params, version)
            ctx = self.calls.context(request, params, version, activated, base_url=base_url,
                                     metadata=metadata, identity=identity)
            outcome = self.calls.run(operation, params, ctx, activated, record)
        except Busy as busy:
            record.failed(busy.error())
            answer = self._error(request_id, busy.error(), version, activated)
            return HttpResponse(503, [*answer.headers, *busy.headers()], answer.body)
        except Refused as refused:
            record.failed(refused.error)
            return self._refused(request_id, refused, version)
        except RPCError as err:
            record.failed(err)
            # A parse error knows the id when it could read one; later errors use rpc.id.
            echoed = request_id if request_id is not None else err.request_id
            record.identify(echoed)
            return self._error(echoed, err, version, activated)
        except Exception:
            logger.exception("unhandled error while dispatching a JSON-RPC request")
            record.failed(InternalError())
            return self._error(request_id, InternalError(), version, activated)
        headers = self.calls.response_headers(version, activated)
        if isinstance(outcome, Stream):
            body = sse_body(request_id, version, outcome.items)
            return HttpResponse(200, SSE_HEADERS + headers, body)
        payload = encode_response(request_id, outcome.value)
        return HttpResponse(200, [("Content-Type", _JSON), *headers], payload)

    def refuse(self, request: HttpRequest, refused: Refused) -> HttpResponse:
        """``refused`` for a caller turned away before its body was read (id null)."""
        version, _ = self._negotiate_version(request)
        return self._refused(None, refused, version)

    def _refused(self, request_id: Any, refused: Refused, version: str) -> HttpResponse:
        """The refusal's error in ``version``'s dialect, with its status and challenges."""
        answer = self._error(request_id, refused.error, version, None)
        return HttpResponse(refused.status, [*answer.headers, *refused.headers], answer.body)

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

    def _error(
        self, request_id: Any, err: RPCError, version: str, activated: ActivatedExtensions | None
    ) -> HttpResponse:
        body = encode_error_response(request_id, wire.encode_error(err, version))
        headers = [("Content-Type", _JSON), *self.calls.response_headers(version, activated)]
        return HttpResponse(200, headers, body)
