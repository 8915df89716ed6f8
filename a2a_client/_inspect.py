"""``a2a inspect URL``: the inspector page for any agent, served on loopback with a small proxy.

::

    a2a inspect https://agents.example.com/echo/ [--port N] [--no-open] [--timeout S]
                [--allow-origin https://other.example.com ...]
    python -m a2a_client._inspect URL ...       (the same, without the ``a2a`` script)

A browser page cannot call an agent on another origin unless the agent
allows it (CORS), and most do not. So the page is served from
``http://127.0.0.1:PORT/inspector/`` and every call goes to
``/proxy/<scheme>/<host:port>/<path>``, which this process forwards with
``requests``: streamed (SSE passes through as it arrives), hop-by-hop
headers dropped, redirects not followed, with timeouts.

It is not an open proxy. It forwards only to the origin the user typed (and
those named with ``--allow-origin``, which get no credentials: no
``Authorization``, no API key, only the protocol's own headers), and there
only to the agent's own URLs: its card URL, and the interface URLs its card
lists (a JSON-RPC URL exactly, an HTTP+JSON URL and the paths below it); the
card is re-read when a target is not on the list yet. An interface the card
lists on another origin is ignored. It never connects to a link-local or
cloud metadata address (judged on the address each connection reached), and
reads a card of at most ``MAX_CARD`` bytes. It answers only requests addressed to itself by a
loopback name, and no request another site's page makes (``Origin`` and
``Sec-Fetch-Site``).

The page's files are :mod:`a2a_inspector`, the same ones the
server's built-in inspector serves. werkzeug's server is imported when the
inspector starts, never with this module.
"""

from __future__ import annotations

import argparse
import logging
import sys
import webbrowser
from collections.abc import Sequence
from urllib.parse import urlsplit

from ._cli_signals import stop_on_signals
from ._inspect_proxy import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from ._inspect_proxy import DEFAULT_TIMEOUT, InspectProxy
from ._inspect_proxy import MAX_BODY as MAX_BODY
from ._inspect_proxy import MAX_CARD as MAX_CARD
from ._inspect_proxy import PROXY_PREFIX as PROXY_PREFIX
from ._inspect_proxy import forwarded_request_headers as forwarded_request_headers
from ._inspect_proxy import forwarded_response_headers as forwarded_response_headers
from ._inspect_proxy import proxy_target as proxy_target
from ._inspect_site import InspectApp, InspectorHandle, start_inspector
from ._inspect_targets import CARD_RECHECK as CARD_RECHECK
from ._inspect_targets import AgentTargets

__all__ = [
    "AgentTargets", "InspectApp", "InspectorHandle", "InspectProxy", "main", "start_inspector",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="a2a inspect",
        description="Open the A2A inspector page for an agent (served on loopback, with a proxy).")
    parser.add_argument("url", help="the agent's base URL, or its card URL (…/agent-card.json)")
    parser.add_argument("--port", type=int, default=0, help="local port (default: any free one)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to wait for the agent (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="another origin (scheme://host[:port]) the card's interfaces may use;"
                             " it gets no credentials (repeatable)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``a2a inspect``: serve until Ctrl-C or SIGTERM; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        print(f"a2a inspect: not an http(s) URL: {args.url!r}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535 or args.timeout <= 0:
        print("a2a inspect: --port must be 0-65535 and --timeout positive", file=sys.stderr)
        return 2
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    stop_on_signals()  # serves until stopped: a background job must still stop on a signal
    try:
        handle = start_inspector(args.url, port=args.port, timeout=args.timeout,
                                 allow_origins=args.allow_origin)
    except ValueError as exc:
        print(f"a2a inspect: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"a2a inspect: cannot listen on port {args.port}: {exc}", file=sys.stderr)
        return 5
    print(f"A2A inspector for {args.url} at {handle.url} (Ctrl-C or SIGTERM stops it)", flush=True)
    if not args.no_open:
        webbrowser.open(handle.url)
    try:
        while handle.thread.is_alive():
            handle.thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
