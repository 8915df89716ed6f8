"""W3C traceparent, read and written (a2a_core._observe.TraceParent)."""

from __future__ import annotations

import pytest

from a2a_core._observe import TraceParent

TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@pytest.mark.parametrize("value, flags", [(f"00-{TRACE}-{SPAN}-01", 1),
                                          (f"00-{TRACE}-{SPAN}-00", 0),
                                          (f" 00-{TRACE}-{SPAN}-01\t", 1),
                                          (f"cc-{TRACE}-{SPAN}-09-what-comes-later", 9),
                                          (f"01-{TRACE}-{SPAN}-01", 1)])
def test_valid_headers_are_read(value: str, flags: int) -> None:
    parent = TraceParent.parse(value)
    assert parent == TraceParent(TRACE, SPAN, flags)
    assert parent.sampled is bool(flags & 1)
    assert TraceParent.parse(parent.header()) == parent


@pytest.mark.parametrize("value", [
    None, "", f"00-{TRACE}-{SPAN}", f"00-{TRACE}-{SPAN}-1", f"00-{TRACE}-{SPAN}-011",
    f"0-{TRACE}-{SPAN}-01", f"00-{TRACE.upper()}-{SPAN}-01", f"00-{TRACE}-{SPAN.upper()}-01",
    f"ff-{TRACE}-{SPAN}-01", f"00-{'0' * 32}-{SPAN}-01", f"00-{TRACE}-{'0' * 16}-01",
    f"00-{TRACE}-{SPAN}-01-", f"01-{TRACE}-{SPAN}-01x", f"00_{TRACE}_{SPAN}_01",
    f"00-{TRACE}-{SPAN}-zz", f"00-{TRACE[:-1]}g-{SPAN}-01",
])
def test_invalid_headers_are_none(value: str | None) -> None:
    assert TraceParent.parse(value) is None
