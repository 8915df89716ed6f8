"""The HTTP+JSON binding's answer: route, run through the call pipeline, frame.

A request naming no ``A2A-Version`` is read as 1.0, the only version this
binding speaks (so a plain ``curl`` works); one naming another is refused.
Errors are ``google.rpc.Status`` bodies with the error table's HTTP status
(503 with ``Retry-After`` when no stream place is free). Bodies are labelled
``application/json`` unless ``Accept`` names ``application/a2a+json``
(:func:`~a2a_core._rest._status.answer_media_type`); a refused caller's
:class:`~a2a_core._calls.Refused` is always ``application/a2a+json``, with its
401/403 (``UNAUTHENTICATED``, ``PERMISSION_DENIED``) and its challenges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._calls import CallPipeline, Failed, Refused
from .._http import HttpRequest, HttpResponse
from .._observe import HTTP_JSON, observed
from .._operations import Events
from .._streaming import dumps
from .._versioning import V1_0, negotiate_version
from ..errors import RPCError
from ._responses import json_response, sse_response
from ._routes import RestError, route
from ._status import A2A_JSON, answer_media_type, encode_status, error_response

__all__ = ["RestBinding", "REST_VERSIONS"]

#: The protocol versions the REST binding speaks.
REST_VERSIONS: tuple[str, ...] = ("1.0",)


class RestBinding:
    """Answers HTTP+JSON requests through a :class:`~a2a_core._calls.CallPipeline`."""

    def __init__(self, calls: CallPipeline, *, max_json_depth: int) -> None:
        self.calls = calls
        self.max_json_depth = max_json_depth

    def answer(
        self,
        request: HttpRequest,
        sub_path: str,
        *,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
    ) -> HttpResponse:
        record = observed(request)
        record.start(HTTP_JSON, V1_0, identity)
        routed = route(
            request.method,
            sub_path,
            request.query,
            request.body,
            content_type=request.headers.get("Content-Type"),
            body_too_large=request.body_too_large,
            max_depth=self.max_json_depth,
            table=self.calls.operations.table,
        )
        media = answer_media_type(request.headers.get("Accept"))
        if isinstance(routed, RestError):
            record.failed(routed.error)
            return error_response(routed.error, status=routed.status, headers=routed.headers,
                                  media_type=media)
        try:
            version = self._version(request)
        except RPCError as err:
            record.operating(routed.operation, routed.params)
            record.failed(err)
            return error_response(err, headers=self.calls.response_headers(V1_0, None),
                                  media_type=media)
        answered = self.calls.call(request, routed.operation, routed.params, version,
                                   base_url=base_url, metadata=metadata, identity=identity,
                                   tenant=routed.tenant, record=record)
        answer, headers = answered.answer, answered.headers
        if isinstance(answer, Failed):
            if answer.refused:
                return self._refused(answer)
            return error_response(answer.error, status=answer.status,
                                  headers=[*headers, *answer.headers], media_type=media)
        if isinstance(answer, Events):
            return sse_response(answer.items, headers)
        return json_response(answer.value, headers, media_type=media)

    @classmethod
    def refuse(cls, refused: Refused) -> HttpResponse:
        """``refused`` as a ``google.rpc.Status``, for a caller turned away before its body
        was read."""
        return cls._refused(Failed.of(refused))

    @staticmethod
    def _refused(failed: Failed) -> HttpResponse:
        """A refused caller (by the adapter or the caller gate): its 401/403 as
        ``UNAUTHENTICATED``/``PERMISSION_DENIED``, with its challenges."""
        code = failed.status or 401
        status = encode_status(failed.error, status=code)
        status["error"]["status"] = "PERMISSION_DENIED" if code == 403 else "UNAUTHENTICATED"
        headers = [("Content-Type", A2A_JSON), ("A2A-Version", V1_0), *failed.headers]
        return HttpResponse(code, headers, dumps(status).encode())

    @staticmethod
    def _version(request: HttpRequest) -> str:
        header = request.headers.get("A2A-Version")
        query = request.query.get("A2A-Version")
        if not (header and header.strip()) and not query:
            return V1_0
        return negotiate_version(header, REST_VERSIONS, query=query)
