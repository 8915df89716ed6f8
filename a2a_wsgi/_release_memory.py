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
import gc
from collections.abc import Callable

__all__ = ["release_memory"]


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the symbols already loaded in this process, else None."""
    try:
        trim: Callable[[int], int] | None = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None
    return trim


_TRIM: list[Callable[[int], int] | None] = []  # looked up at the first release, not at import


def release_memory() -> None:
    """Collect garbage (cycles the ended streams left), then hand free heap pages back."""
    gc.collect()
    if not _TRIM:
        _TRIM.append(_malloc_trim())
    trim = _TRIM[0]
    if trim is not None:
        trim(0)
