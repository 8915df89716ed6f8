"""A pytest plugin loaded into the A2A 1.0 kit's own run (``-p tck_plugin``).

``run_tck.py`` puts this directory on the kit's ``PYTHONPATH``; nothing here
is collected by this repository's test suite. It does two things the kit
offers no option for:

* its webhook receiver (``tck.webhook.server.WebhookReceiver``) binds
  ``0.0.0.0``; here it binds loopback, so a run opens no port to the network
  (the agent posts to it on ``--webhook-host``, which ``run_tck.py`` sets to
  the same loopback address);
* its clients send no credentials, while CARD-EXT-001 asks for an
  authenticated GetExtendedAgentCard ("the client MUST authenticate" it with a
  scheme the card declares): with ``TCK_EXTENDED_CARD_TOKEN`` set, the
  JSON-RPC and HTTP+JSON clients send ``Authorization: Bearer <token>`` on that
  call, and the gRPC client the same as ``authorization`` metadata, on no other;
* it writes every test's outcome, RFC 2119 level and transport to the JSON
  file named by ``--outcomes-file``, which ``run_tck.py`` turns into its
  per-level and per-transport tables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

LOOPBACK = "127.0.0.1"
LEVELS = ("must", "should", "may")
TRANSPORTS = ("jsonrpc", "http_json", "grpc")

_NAME_SUFFIXES = (("_jsonrpc", "jsonrpc"), ("_http_json", "http_json"), ("_rest", "http_json"),
                  ("_grpc", "grpc"))

_outcomes_key = pytest.StashKey[dict[str, dict[str, Any]]]()


def _bind_webhook_receiver_to_loopback() -> None:
    """Make every WebhookReceiver listen on loopback whatever host it was built with."""
    from tck.webhook.server import WebhookReceiver  # type: ignore[import-not-found]

    start = WebhookReceiver.start
    if getattr(start, "_loopback", False):
        return

    def start_on_loopback(self: Any) -> None:
        self.host = LOOPBACK
        start(self)

    start_on_loopback._loopback = True  # type: ignore[attr-defined]
    WebhookReceiver.start = start_on_loopback


def _authenticate_extended_card_calls(token: str) -> None:
    """Make the kit's GetExtendedAgentCard calls carry ``token`` as a bearer credential."""
    from tck.transport.grpc_client import GrpcClient  # type: ignore[import-not-found]
    from tck.transport.http_json_client import HttpJsonClient  # type: ignore[import-not-found]
    from tck.transport.jsonrpc_client import JsonRpcClient  # type: ignore[import-not-found]

    for client_class in (JsonRpcClient, HttpJsonClient):
        get_card = client_class.get_extended_agent_card
        if getattr(get_card, "_authenticated", False):
            continue
        client_class.get_extended_agent_card = _with_bearer(get_card, token)
    get_card = GrpcClient.get_extended_agent_card
    if not getattr(get_card, "_authenticated", False):
        GrpcClient.get_extended_agent_card = _with_bearer_metadata(get_card, token)


def _with_bearer(get_card: Any, token: str) -> Any:
    """``get_card`` with the client's Authorization header set for that one call.

    The kit's tests run one at a time, so no other call shares the header.
    """

    def get_authenticated_card(self: Any) -> Any:
        headers = self._client.headers
        headers["Authorization"] = f"Bearer {token}"
        try:
            return get_card(self)
        finally:
            del headers["Authorization"]

    get_authenticated_card._authenticated = True  # type: ignore[attr-defined]
    return get_authenticated_card


def _with_bearer_metadata(get_card: Any, token: str) -> Any:
    """``get_card`` with ``authorization`` added to the gRPC client's call metadata.

    The kit's gRPC client sends its class-level ``_METADATA`` (``a2a-version``) on every
    call; an instance attribute shadows it for this one call.
    """

    def get_authenticated_card(self: Any) -> Any:
        self._METADATA = (*type(self)._METADATA, ("authorization", f"Bearer {token}"))
        try:
            return get_card(self)
        finally:
            del self._METADATA

    get_authenticated_card._authenticated = True  # type: ignore[attr-defined]
    return get_authenticated_card


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("a2a-wsgi").addoption(
        "--outcomes-file", dest="outcomes_file", default=None,
        help="write each test's outcome, level and transport here (JSON)")


def pytest_configure(config: pytest.Config) -> None:
    _bind_webhook_receiver_to_loopback()
    token = os.environ.get("TCK_EXTENDED_CARD_TOKEN", "")
    if token:
        _authenticate_extended_card_calls(token)
    config.stash[_outcomes_key] = {}


def _level(item: pytest.Item) -> str:
    for level in LEVELS:
        if item.get_closest_marker(level) is not None:
            return level.upper()
    return "-"


def _transport(item: pytest.Item) -> str:
    """The parametrized transport, else a transport marker, else "any" (card tests)."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "transport" in callspec.params:
        return str(callspec.params["transport"])
    for name in TRANSPORTS:
        if item.get_closest_marker(name) is not None:
            return name
    for suffix, name in _NAME_SUFFIXES:  # tests named ..._jsonrpc, ..._rest, ...
        if item.name.endswith(suffix):
            return name
    return "any"


def _reason(report: pytest.TestReport) -> str:
    """The skip or xfail reason, or the failure's first ``E`` line (the assertion message)."""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)
    lines = report.longreprtext.strip().splitlines()
    explained = [line for line in lines if line.startswith("E ")]
    return (explained or lines or [""])[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep the first phase that did not simply pass (or the call phase's pass)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    records = item.config.stash[_outcomes_key]
    if item.nodeid in records and records[item.nodeid]["outcome"] != "passed":
        return
    if report.when != "call" and report.passed:
        return
    if hasattr(report, "wasxfail"):
        result = "xfailed" if report.skipped else "xpassed"
    elif report.when != "call" and report.failed:
        result = "error"
    else:
        result = report.outcome
    records[item.nodeid] = {"outcome": result, "level": _level(item),
                            "transport": _transport(item), "reason": _reason(report)[:300]}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("outcomes_file")
    if path:
        records = session.config.stash.get(_outcomes_key, {})
        Path(path).write_text(json.dumps(records, indent=1, sort_keys=True))
