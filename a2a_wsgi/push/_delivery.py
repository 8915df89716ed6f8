"""The delivery worker: POSTs the push outbox to webhooks, in order, with retries.

One :class:`PushDeliverer` runs per process (a daemon thread). It claims due
outbox entries from the store, at most one per (task, config) at a time and
oldest first (the store guarantees this), and POSTs each on a small thread
pool, so one slow or dead receiver holds up only its own queue.
"""

# Theory of operation
# -------------------
#
# Rule 1: the store is the queue. An entry is claimed for ``claim_seconds``;
# a worker that dies mid-POST loses the claim and another worker (or this one
# after a restart) sends it again. Deliveries are therefore at least once; the
# Idempotency-Key header lets a receiver drop duplicates.
#
# Rule 2: every attempt is re-checked. The config is re-read (deleted: nothing
# more is sent), its URL goes through the policy again, and the connection is
# made to the checked address itself (no second DNS lookup; no proxy; a 3xx is
# a failure whose Location is never fetched).
#
# Rule 3: every attempt is bounded. Per-socket timeouts do not stop a receiver
# that drips one byte per second, so a watchdog shuts the socket down when the
# attempt's total budget (``attempt_timeout``) is spent. At most
# ``max_response_bytes`` of the answer are read.
#
# Rule 4: failures back off. Attempt n waits base * 2**(n-1) seconds, capped,
# with equal jitter (half fixed, half random), or the receiver's Retry-After if
# longer; after ``max_attempts`` the entry is abandoned so the next one of that
# queue can go. A 410 Gone abandons at once and removes the config.

from __future__ import annotations

import http.client
import logging
import os
import random
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from a2a_core.models import TaskPushNotificationConfig

from .._telemetry import PushAttempt, push_settled
from ..stores._base import Delivery, PushStore
from ._settings import PushSettings
from ._signing import SIGNATURE_HEADER
from ._ssrf import Target, UnresolvableHostError, UnsafeURLError

__all__ = ["AttemptResult", "PushDeliverer", "TOKEN_HEADER", "backoff_delay", "post"]

log = logging.getLogger("a2a_wsgi.push")

TOKEN_HEADER = "X-A2A-Notification-Token"


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """What one POST came to: the status, or None with ``error`` when none was received."""

    status: int | None
    error: str | None = None
    retry_after: float | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def backoff_delay(attempt: int, settings: PushSettings, rng: Callable[[], float]) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): capped, equal jitter."""
    ceiling = min(settings.backoff_cap, settings.backoff_base * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng() * ceiling / 2


def post(target: Target, headers: Sequence[tuple[str, str]], body: bytes, *,
         connect_timeout: float, attempt_timeout: float, max_response_bytes: int,
         ssl_context: ssl.SSLContext | None = None) -> AttemptResult:
    """One POST to the checked addresses of ``target`` (first that connects), bounded in time."""
    deadline = time.monotonic() + attempt_timeout
    try:
        conn = _connect(target, connect_timeout, deadline, ssl_context)
    except (OSError, ssl.SSLError) as exc:
        return AttemptResult(None, f"connect failed: {_describe(exc)}")
    sock = conn.sock
    watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _cut, (sock,))
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request("POST", target.path, body=body,
                     headers={"Host": target.host_header, **dict(headers)})
        response = conn.getresponse()
        response.read(max_response_bytes)
        return AttemptResult(response.status, None, _retry_after(response))
    except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
        late = time.monotonic() >= deadline
        return AttemptResult(None, "timed out" if late else f"failed: {_describe(exc)}")
    finally:
        watchdog.cancel()
        conn.close()


def _connect(target: Target, connect_timeout: float, deadline: float,
             ssl_context: ssl.SSLContext | None) -> http.client.HTTPConnection:
    """A connection to the first checked address that answers; TLS names the URL's host."""
    error: BaseException = OSError("no address")
    for address in target.addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("attempt budget spent while connecting")
        try:
            sock = socket.create_connection((address, target.port),
                                            timeout=min(connect_timeout, left))
        except OSError as exc:
            error = exc
            continue
        if target.scheme == "https":
            context = ssl_context or ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=target.host)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        conn = http.client.HTTPConnection(address, target.port)
        conn.sock = sock  # connected and checked: http.client will not resolve or reconnect
        return conn
    raise error


def _cut(sock: socket.socket) -> None:
    """The watchdog: end a stalled attempt by shutting its socket down."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _retry_after(response: http.client.HTTPResponse) -> float | None:
    value = response.getheader("Retry-After")
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PushDeliverer:
    """Claims due outbox entries from ``store`` and delivers them on a thread pool.

    ``start()`` runs the loop on a daemon thread (``ensure_started()`` also
    restarts it in a forked worker); ``run_once()`` claims and delivers one
    batch synchronously (tests, and embedding in another scheduler).
    """

    def __init__(self, store: PushStore, settings: PushSettings, *,
                 worker_id: str | None = None, clock: Callable[[], datetime] = _utc_now,
                 rng: Callable[[], float] = random.random,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.store, self.settings = store, settings
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._clock, self._rng, self._ssl = clock, rng, ssl_context
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------

    def ensure_started(self) -> None:
        """Start the loop unless it runs in this process (after fork() it does not)."""
        thread = self._thread
        if self._closed or (thread is not None and self._pid == os.getpid()
                            and thread.is_alive()):
            return  # the per-request fast path: no lock
        with self._lock:
            if self._closed:
                return
            if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
                return
            self._stop.clear()
            self._slots = threading.BoundedSemaphore(self.settings.concurrency)
            self._pool = ThreadPoolExecutor(self.settings.concurrency,
                                            thread_name_prefix="a2a-push")
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._loop, name="a2a-push-claimer",
                                            daemon=True)
            self._thread.start()

    start = ensure_started

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop claiming for good; deliveries in flight finish within their attempt budget."""
        self._closed = True
        self._stop.set()
        self._wake.set()
        thread, pool = self._thread, self._pool
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        self._thread = self._pool = None

    def wake(self) -> None:
        """New entries were written: claim now instead of at the next poll."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                claimed = self._claim_into_pool()
            except Exception:
                log.exception("push: claiming deliveries failed")
                claimed = 0
            if claimed == 0:
                self._wake.wait(self.settings.poll_interval)
                self._wake.clear()

    def _claim_into_pool(self) -> int:
        """Wait for a free slot, claim as many entries as slots are free, hand them over."""
        if not self._slots.acquire(timeout=self.settings.poll_interval):
            return 1  # all slots busy: not idle, so loop again without the poll delay
        free = 1
        while self._slots.acquire(blocking=False):
            free += 1
        try:
            deliveries = self._claim(free)
        except BaseException:
            deliveries = []
            raise
        finally:
            pool = self._pool if not self._stop.is_set() else None
            handed = len(deliveries) if pool is not None else 0
            for _ in range(free - handed):
                self._slots.release()
        for n, delivery in enumerate(deliveries[:handed]):
            assert pool is not None
            try:
                pool.submit(self._deliver_in_slot, delivery)
            except RuntimeError:  # the pool or the interpreter is shutting down
                self._give_back(deliveries[n:handed])
                return 0
        return len(deliveries)

    def _give_back(self, unsent: Sequence[Delivery]) -> None:
        """The process is stopping: stop claiming, and leave what was not sent to the next
        worker (unclaimed, due now); one log line, not a traceback per poll."""
        self._stop.set()
        for _ in unsent:
            self._slots.release()
        now = self._clock()
        for delivery in unsent:
            try:
                self.store.retry_delivery(delivery.id, now, "not sent: the worker was stopping")
            except Exception:
                pass  # still claimed: its claim expires and another worker sends it
        log.info("push: this process is stopping; %d pending deliveries stay queued for "
                 "the next worker", len(unsent))

    def _deliver_in_slot(self, delivery: Delivery) -> None:
        try:
            self.deliver(delivery)
        except Exception:
            log.exception("push: delivery %s failed unexpectedly", delivery.id)
        finally:
            self._slots.release()
            self._wake.set()

    # -- one batch / one delivery ------------------------------------------------------

    def run_once(self, limit: int | None = None) -> int:
        """Claim up to ``limit`` due entries and deliver them in parallel; return how many."""
        deliveries = self._claim(limit or self.settings.concurrency)
        if not deliveries:
            return 0
        with ThreadPoolExecutor(len(deliveries), thread_name_prefix="a2a-push-once") as pool:
            list(pool.map(self.deliver, deliveries))
        return len(deliveries)

    def _claim(self, limit: int) -> list[Delivery]:
        return list(self.store.claim_deliveries(self._clock(), limit, self.worker_id,
                                                self.settings.claim_seconds))

    def deliver(self, delivery: Delivery) -> AttemptResult:
        """Make one attempt at ``delivery`` and record the outcome in the store."""
        entry = delivery.entry
        config = self.store.get_push_config(entry.task_id, entry.config_id)
        if config is None:
            self.store.abandon_delivery(delivery.id, "push config deleted")
            push_settled()
            return AttemptResult(None, "push config deleted")
        push = config.push_notification_config
        try:
            target = self.settings.policy.check(push.url)
        except UnresolvableHostError as err:
            return self._failed(delivery, AttemptResult(None, err.reason))
        except UnsafeURLError as err:
            log.warning("push: task %s config %s: webhook URL refused at delivery: %s",
                        entry.task_id, entry.config_id, err.reason)
            self.store.abandon_delivery(delivery.id, f"webhook URL refused: {err.reason}")
            push_settled()
            return AttemptResult(None, err.reason)
        headers = self._headers(delivery, push.url, config)
        # A client span per POST; its traceparent replaces the one queued with the entry.
        with PushAttempt(entry.task_id, entry.config_id, push.url, delivery.attempts,
                         headers) as attempt:
            result = post(target, attempt.headers, entry.body,
                          connect_timeout=self.settings.connect_timeout,
                          attempt_timeout=self.settings.attempt_timeout,
                          max_response_bytes=self.settings.max_response_bytes,
                          ssl_context=self._ssl)
            attempt.answered(result.status, result.error)
        if result.ok:
            self.store.complete_delivery(delivery.id)
            push_settled()
        elif result.status == 410:
            self.store.abandon_delivery(delivery.id, "receiver answered 410 Gone")
            push_settled()
            self.store.delete_push_config(entry.task_id, entry.config_id)
        else:
            self._failed(delivery, result)
        return result

    def _headers(self, delivery: Delivery, url: str,
                 config: TaskPushNotificationConfig) -> list[tuple[str, str]]:
        """The entry's headers plus the config's credentials, read now (never stored twice)."""
        push = config.push_notification_config
        entry = delivery.entry
        headers = [(k, v) for k, v in entry.headers]
        headers.append(("User-Agent", self.settings.user_agent))
        auth = push.authentication
        if auth is not None and auth.schemes and auth.credentials:
            headers.append(("Authorization", f"{auth.schemes[0]} {auth.credentials}"))
        if push.token:
            headers.append((TOKEN_HEADER, push.token))
        signer = self.settings.signer
        if signer is not None:
            key = dict(entry.headers).get("Idempotency-Key", str(delivery.id))
            jwt = signer.sign(body=entry.body, url=url, task_id=entry.task_id,
                              jti=f"{key}.{delivery.attempts}", now=time.time())
            headers.append((SIGNATURE_HEADER, jwt))
        return headers

    def _failed(self, delivery: Delivery, result: AttemptResult) -> AttemptResult:
        """Retry later, or give up after ``max_attempts``."""
        error = result.error or f"receiver answered {result.status}"
        entry = delivery.entry
        if delivery.attempts >= self.settings.max_attempts:
            log.warning("push: task %s config %s event %s abandoned after %d attempts: %s",
                        entry.task_id, entry.config_id, entry.seq, delivery.attempts, error)
            self.store.abandon_delivery(delivery.id, error)
            push_settled()
            return result
        delay = backoff_delay(delivery.attempts, self.settings, self._rng)
        if result.retry_after is not None:
            delay = max(delay, min(result.retry_after, self.settings.backoff_cap))
        log.info("push: task %s config %s event %s attempt %d failed (%s); retry in %.1fs",
                 entry.task_id, entry.config_id, entry.seq, delivery.attempts, error, delay)
        self.store.retry_delivery(delivery.id, self._clock() + timedelta(seconds=delay), error)
        return result
