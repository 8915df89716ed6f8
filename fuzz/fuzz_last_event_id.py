"""``Last-Event-ID``: the value a reconnecting client sends, as the server's stream resume
reads it (a sequence number it gave, or nothing it recognises).

Documented behaviour: ``parse_seq`` answers a non-negative int the store can hold (at most
18 digits: PostgreSQL's bigint) or None; it raises nothing.
"""

from __future__ import annotations

from _harness import fuzz, instrument_module

from a2a_wsgi._runtime import _subscriptions
from a2a_wsgi._runtime._subscriptions import parse_seq

instrument_module(__name__ == "__main__", _subscriptions)

BIGINT_MAX = 2**63 - 1


def check(data: bytes) -> None:
    # (a WSGI server hands header values over as latin-1 text)
    seq = parse_seq(data.decode("latin-1"))
    if seq is not None and not 0 <= seq <= BIGINT_MAX:
        raise AssertionError(f"sequence number {seq} is outside the store's range")


if __name__ == "__main__":
    fuzz(check)
