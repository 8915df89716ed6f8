"""An app called in-process the way a WSGI server calls it: a fresh environ per request,
the body read to its end and closed."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Answer", "call", "environ"]

#: The status line, the headers as the app gave them, and the body.
Answer = tuple[str, list[tuple[str, str]], bytes]


def environ(method: str = "GET", path: str = "/", body: bytes = b"", *,
            host: str = "127.0.0.1:8000", script: str = "", query: str = "",
            **headers: str) -> dict[str, Any]:
    """A request's environ; ``headers`` by their Python names (``if_none_match=...``)."""
    env: dict[str, Any] = {
        "REQUEST_METHOD": method, "SCRIPT_NAME": script, "PATH_INFO": path,
        "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": host, "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
        "wsgi.version": (1, 0)}
    if body:
        env["CONTENT_LENGTH"], env["CONTENT_TYPE"] = str(len(body)), "application/json"
    for name, value in headers.items():
        env["HTTP_" + name.upper()] = value
    return env


def call(app: Callable[..., Iterable[bytes]], env: dict[str, Any]) -> Answer:
    """What ``app`` answers ``env``."""
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen["status"], seen["headers"] = status, headers
        return lambda data: None

    body = app(env, start_response)
    try:
        data = b"".join(body)
    finally:
        getattr(body, "close", lambda: None)()
    return seen["status"], list(seen["headers"]), data
