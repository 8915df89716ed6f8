"""One client call against the hostile server, in a process of its own so that its memory
can be measured: ``python hostile_client.py CALL URL`` prints one JSON line with the
error raised (its class and module), the seconds the call took, and the resident memory
at the start and at the peak of the call (kB, from /proc/self/status).

CALL is ``get_card``, ``send_message``, ``get_task``, ``cancel_task``, ``stream_message``
or ``subscribe``. The client gets short
limits (2 s timeouts and event timeout, events of at most 4 MiB, one resubscription 50 ms
later), all given to the client's constructor, and credentials
(a bearer token and an API key header), which must never reach another origin.
"""

from __future__ import annotations

import json
import sys
import time

from a2a_client import A2AClient

TIMEOUT = 2.0
#: The longest stream event the client reads (the constructor's max_event_size).
MAX_EVENT = 4 * 1024 * 1024
TOKEN = "hostile-test-token"
API_KEY = "hostile-api-key"


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def _reset_peak() -> None:
    """Start the peak (VmHWM) afresh at the current size, so imports do not count."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass  # an older kernel: the peak then includes the imports (an upper bound)


def call(name: str, url: str) -> None:
    agent = A2AClient(url, timeout=TIMEOUT, stream_idle_timeout=TIMEOUT, auth=TOKEN,
                      headers={"X-API-Key": API_KEY}, max_reconnects=1, reconnect_delay=0.05,
                      event_timeout=TIMEOUT, max_event_size=MAX_EVENT)
    if name == "get_card":
        agent.get_card()
    elif name == "send_message":
        agent.send_message("hello")
    elif name == "get_task":
        agent.get_task("t-1")
    elif name == "cancel_task":
        agent.cancel_task("t-1")
    elif name in ("stream_message", "subscribe"):
        stream = agent.stream_message("hello") if name == "stream_message" else \
            agent.subscribe("t-1")
        for _ in stream:
            pass
    else:
        raise SystemExit(f"unknown call {name}")


def main() -> None:
    name, url = sys.argv[1], sys.argv[2]
    _reset_peak()
    start_rss = _status("VmRSS")
    began = time.monotonic()
    error: BaseException | None = None
    try:
        call(name, url)
    except BaseException as exc:  # reported, not raised: the test judges it
        error = exc
    elapsed = time.monotonic() - began
    print(json.dumps({
        "error": None if error is None else type(error).__name__,
        "module": None if error is None else type(error).__module__,
        "mro": [] if error is None else [c.__name__ for c in type(error).__mro__],
        "message": None if error is None else str(error)[:3000],
        "elapsed": elapsed,
        "start_kb": start_rss,
        "peak_kb": _status("VmHWM"),
    }))


if __name__ == "__main__":
    main()
