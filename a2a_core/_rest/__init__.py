"""The HTTP+JSON (REST) binding of A2A 1.0, sans-IO, on top of the JSON-RPC handlers.

One place decides each operation; two thin bindings map onto it. A REST
request is routed to an operation (:mod:`a2a_core.optable`) and the params
a 1.0 JSON-RPC call would carry (:func:`route`), so the same decoders and
handlers answer it; the handler's encoded result goes back as the body
(:func:`json_response`), a stream as SSE of bare StreamResponse objects
(:func:`sse_response`), and an error as a ``google.rpc.Status`` body with
the spec's HTTP status (:func:`error_response`). The client builds its
requests from the same routes (:func:`request_target`) and reads
errors back into the same classes (:func:`decode_status`).

Only 1.0 has this binding here (0.3's REST is a different, ``/v1``-prefixed
transcoding): a request is answered in 1.0 or refused with
VersionNotSupportedError, so negotiate with :data:`REST_VERSIONS`.
"""

from __future__ import annotations

from ._binding import REST_VERSIONS as REST_VERSIONS
from ._binding import RestBinding as RestBinding
from ._responses import frame_stream as frame_stream
from ._responses import json_response as json_response
from ._responses import sse_body as sse_body
from ._responses import sse_response as sse_response
from ._routes import RestCall as RestCall
from ._routes import RestError as RestError
from ._routes import parse_json as parse_json
from ._routes import route as route
from ._status import A2A_JSON as A2A_JSON
from ._status import GRPC_STATUS as GRPC_STATUS
from ._status import decode_status as decode_status
from ._status import encode_status as encode_status
from ._status import error_response as error_response
from ._status import grpc_status as grpc_status
from ._target import RestTarget as RestTarget
from ._target import request_target as request_target

__all__ = [
    "A2A_JSON",
    "GRPC_STATUS",
    "REST_VERSIONS",
    "RestBinding",
    "RestCall",
    "RestError",
    "RestTarget",
    "decode_status",
    "encode_status",
    "error_response",
    "frame_stream",
    "grpc_status",
    "json_response",
    "parse_json",
    "request_target",
    "route",
    "sse_body",
    "sse_response",
]
