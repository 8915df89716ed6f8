"""HTTP+JSON: a request (method, path below the interface URL, query string, Content-Type,
body) through the router and, when it routes, its params through the 1.0 decoder; the
body as an error answer through the client's ``google.rpc.Status`` reader, and an
``Accept`` value through the answer's media type choice.

The input is ``METHOD PATH[?QUERY]`` on the first line, an optional ``Content-Type`` on
the second, then the body (any bytes) after a blank line; anything else is read as a body
POSTed to ``/message:send``.

Documented errors: none from :func:`~a2a_core._rest.route` (it returns a RestError);
:class:`~a2a_core.errors.RPCError` from the params decoder; none from ``decode_status``
(None or an error object) and from ``answer_media_type``.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote

from _harness import fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from a2a_core import wire
    from a2a_core._rest import RestCall, decode_status, parse_json, route
    from a2a_core._rest._status import answer_media_type
    from a2a_core.errors import RPCError


def split(data: bytes) -> tuple[str, str, dict[str, str], str | None, bytes]:
    """(method, path, query, content type, body) as the WSGI adapter would hand them over."""
    head, blank, body = data.partition(b"\n\n")
    lines = head.decode("latin-1").split("\n")
    first = lines[0].split(" ", 1)
    if not blank or len(first) != 2:
        return "POST", "/message:send", {}, "application/json", data
    method, target = first
    path, _, query = target.partition("?")
    content_type = lines[1] if len(lines) > 1 else None
    # (werkzeug hands PATH_INFO over percent-decoded, bytes read as UTF-8)
    decoded = unquote(path.encode("latin-1").decode("utf-8", "replace"), errors="replace")
    return method, decoded, dict(parse_qsl(query)), content_type, body


def check(data: bytes) -> None:
    method, path, query, content_type, body = split(data)
    routed = route(method, path, query, body, content_type=content_type)
    if isinstance(routed, RestCall):
        try:
            wire.decode_params(routed.operation, routed.params, "1.0")
        except RPCError:
            pass
    try:
        payload = parse_json(body)
    except RPCError:
        payload = None
    decode_status(payload)
    answer_media_type(content_type)


if __name__ == "__main__":
    fuzz(check)
