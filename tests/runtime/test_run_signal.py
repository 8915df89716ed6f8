"""A run's Signal counts its waiters: a notify with nobody waiting is skipped, none is lost."""

from __future__ import annotations

import threading
import time

from a2a_wsgi._wakeups import Signal


def test_a_waiter_is_counted_while_it_waits_and_woken_by_a_notify() -> None:
    lock = threading.RLock()
    signal = Signal(lock)
    ready = threading.Event()
    woke: list[bool] = []

    def waiter() -> None:
        with signal:
            ready.set()
            woke.append(signal.wait_for(lambda: bool(woke) or flag[0], timeout=5))

    flag = [False]
    thread = threading.Thread(target=waiter)
    thread.start()
    assert ready.wait(5)
    deadline = time.monotonic() + 5
    while True:  # the waiter is inside wait() once it released the lock
        with lock:
            if signal.waiting:
                flag[0] = True
                signal.notify_all()
                break
        assert time.monotonic() < deadline
        time.sleep(0.001)
    thread.join(5)
    assert woke == [True] and signal.waiting == 0


def test_nobody_waiting_notifies_nothing_and_a_timed_wait_uncounts_itself() -> None:
    signal = Signal(threading.RLock())
    with signal:
        signal.notify_all()
        signal.notify()
        assert signal.wait(timeout=0.01) is False
        assert signal.waiting == 0
