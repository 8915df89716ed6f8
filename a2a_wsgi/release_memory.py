"""Give memory freed by ended streams back to the operating system.

When hundreds of streams end at once (slow consumers cut, clients gone), what
they held (frames being written, greenlet stacks, store connections and their
page caches) is freed into the C allocator, interleaved with what lives on;
glibc keeps such free pages inside its heap, so the worker's RSS stays at its
peak although the memory is unused. ``malloc_trim(0)`` returns every free page
of the heap to the kernel. Elsewhere than glibc this only collects garbage.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable

__all__ = ["release_memory"]


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc
    return trim


_TRIM = _malloc_trim()


def release_memory() -> None:
    """Collect garbage (cycles the ended streams left), then hand free heap pages back."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)
