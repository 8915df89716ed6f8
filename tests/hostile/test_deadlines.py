"""The watchdog behind the header-block deadline (a2a_client.deadlines), and where it
applies: the client's own session, not one the caller lends."""

from __future__ import annotations

import threading

import requests

from a2a_client.deadlines import DeadlineAdapter, Watchdog
from a2a_client.transport import Transport


def test_an_armed_action_runs_and_a_cancelled_one_does_not() -> None:
    watchdog = Watchdog()
    ran, cancelled = threading.Event(), threading.Event()
    handle = watchdog.arm(0.2, cancelled.set)
    watchdog.arm(0.05, ran.set)
    watchdog.cancel(handle)
    assert ran.wait(10)
    later = threading.Event()
    watchdog.arm(0.3, later.set)  # runs after the cancelled one's time
    assert later.wait(10)
    assert not cancelled.is_set()


def test_cancelled_actions_do_not_pile_up() -> None:
    watchdog = Watchdog()
    handles = [watchdog.arm(3600, lambda: None) for _ in range(10_000)]
    for handle in handles:
        watchdog.cancel(handle)
    assert len(watchdog._heap) <= 128


def test_only_the_clients_own_session_gets_the_deadline_adapter() -> None:
    own = Transport()
    assert isinstance(own._session.get_adapter("https://agent.example/"), DeadlineAdapter)
    lent = requests.Session()
    Transport(session=lent)
    assert not isinstance(lent.get_adapter("https://agent.example/"), DeadlineAdapter)
    own.close()
    lent.close()
