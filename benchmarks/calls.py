"""Python calls per request, counted with cProfile: a measure that does not depend on the machine.

    .venv/bin/python benchmarks/calls.py            # the table
    .venv/bin/python benchmarks/calls.py --top 25   # and the 25 most-called functions of each
    .venv/bin/python benchmarks/calls.py --top 25 --sort tottime    # or by own time
    .venv/bin/python benchmarks/calls.py --tree 8 --only send       # who calls how much

``--tree DEPTH`` prints, for one warmed-up request of each row, the call tree with
each function's calls including its callees' (``--min N`` hides smaller ones):
where a request's calls go, which the flat list cannot show.

``examples/echo.py``'s app (the stream row: ``benchmarks/apps/ours.py``'s, whose
``"stream 10"`` streams ten chunks) is called in-process the way a WSGI server calls
it: a fresh environ per request, the body iterated and closed. Each request
is warmed up first (the app assembles itself on its first request), then
repeated; the figure is cProfile's total call count (primitive calls plus
recursive ones, builtins included) divided by the number of requests.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.apps.ours import app as bench_app  # noqa: E402
from examples.echo import app  # noqa: E402

Environ = dict[str, Any]


def _environ(method: str, path: str, body: bytes = b"", **headers: str) -> Environ:
    environ: Environ = {
        "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if body:
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["CONTENT_TYPE"] = "application/json"
    for name, value in headers.items():
        environ["HTTP_" + name.upper()] = value
    return environ


def _call(environ: Environ) -> tuple[str, dict[str, str], bytes]:
    seen: dict[str, Any] = {}
    serve = bench_app if environ.pop("bench.app", False) else app

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen["status"], seen["headers"] = status, dict(headers)
        return lambda data: None

    body = serve(environ, start_response)
    try:
        data = b"".join(body)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    return seen["status"], seen["headers"], data


def _message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def send_jsonrpc() -> Environ:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": _message("hello")}}
    return _environ("POST", "/", json.dumps(body).encode(), a2a_version="1.0")


def send_rest() -> Environ:
    body = {"message": _message("hello")}
    return _environ("POST", "/rest/message:send", json.dumps(body).encode(), a2a_version="1.0")


def stream_10() -> Environ:
    """A 10-event stream (benchmarks/apps/ours.py's "stream 10"), read to its end."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": _message("stream 10")}}
    environ = _environ("POST", "/", json.dumps(body).encode(), a2a_version="1.0",
                       accept="text/event-stream")
    environ["bench.app"] = True
    return environ


def card() -> Environ:
    return _environ("GET", "/.well-known/agent-card.json")


def card_304() -> Environ:
    _, headers, _ = _call(card())
    etag = headers["ETag"]
    return _environ("GET", "/.well-known/agent-card.json", if_none_match=etag)


REQUESTS: dict[str, tuple[Callable[[], Environ], str]] = {
    "blocking SendMessage (1.0, JSON-RPC)": (send_jsonrpc, "200"),
    "the same over HTTP+JSON (POST /rest/message:send)": (send_rest, "200"),
    "10-event stream (SendStreamingMessage, SSE)": (stream_10, "200"),
    "card GET": (card, "200"),
    "card 304 (If-None-Match)": (card_304, "304"),
}


def tree(make: Callable[[], Environ], depth: int, smallest: int) -> str:
    """One request's call tree: each function's calls with its callees', to ``depth``."""
    for _ in range(20):
        _call(make())
    environ = make()
    root: dict[str, Any] = {"n": 0, "kids": {}}
    stack = [root]

    def name(frame: Any, event: str, arg: Any) -> str:
        if event == "c_call":
            return "{" + getattr(arg, "__qualname__", repr(arg)) + "}"
        code = frame.f_code
        where = code.co_filename.replace(str(ROOT) + "/", "")
        return f"{where}:{code.co_firstlineno}({code.co_name})"

    def trace(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            node = stack[-1]["kids"].setdefault(name(frame, event, arg), {"n": 0, "kids": {}})
            node["n"] += 1
            stack.append(node)
        elif len(stack) > 1:  # return, c_return, c_exception
            stack.pop()

    sys.setprofile(trace)
    try:
        _call(environ)
    finally:
        sys.setprofile(None)

    def total(node: dict[str, Any]) -> int:
        node["total"] = node["n"] + sum(total(kid) for kid in node["kids"].values())
        return int(node["total"])

    lines = [f"{total(root)} calls"]

    def show(node: dict[str, Any], level: int) -> None:
        for label, kid in sorted(node["kids"].items(), key=lambda item: -item[1]["total"]):
            if kid["total"] >= smallest:
                lines.append(f"{'  ' * level}{kid['total']:5d} x{kid['n']} {label}")
                if level < depth:
                    show(kid, level + 1)

    show(root, 0)
    return "\n".join(lines)


def count(make: Callable[[], Environ], expect: str, repeat: int,
          top: int, sort: str = "ncalls") -> tuple[float, str]:
    """Calls per request of ``make``'s request, and (``top`` > 0) the costliest functions."""
    for _ in range(20):  # warm up: assembly, caches, first-use imports
        status, _, data = _call(make())
        if not status.startswith(expect):
            raise SystemExit(f"unexpected answer {status}: {data[:200]!r}")
    environs = [make() for _ in range(repeat)]
    profile = cProfile.Profile()
    profile.enable()
    for environ in environs:
        _call(environ)
    profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_calls  # type: ignore[attr-defined]
    report = ""
    if top:
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats(sort).print_stats(top)
        report = out.getvalue()
    return total / repeat, report


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="requests counted per row")
    parser.add_argument("--top", type=int, default=0, help="print the N most-called functions")
    parser.add_argument("--sort", default="ncalls",
                        help="order of --top: ncalls (default), tottime, cumulative")
    parser.add_argument("--tree", type=int, default=0, metavar="DEPTH",
                        help="print one request's call tree, to DEPTH levels")
    parser.add_argument("--min", type=int, default=3, help="smallest subtree --tree shows")
    parser.add_argument("--only", default="", help="rows whose name contains this text")
    args = parser.parse_args(list(argv) if argv is not None else None)
    rows = []
    for name, (make, expect) in REQUESTS.items():
        if args.only.lower() not in name.lower():
            continue
        if args.tree:
            print(f"## {name}\n{tree(make, args.tree, args.min)}\n")
        calls, report = count(make, expect, args.repeat, args.top, args.sort)
        rows.append((name, calls))
        if report:
            print(f"## {name}\n{report}")
    width = max(len(name) for name, _ in rows)
    print(f"| {'request'.ljust(width)} | Python calls per request |")
    print(f"| {'-' * width} | ------------------------ |")
    for name, calls in rows:
        print(f"| {name.ljust(width)} | {calls:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
