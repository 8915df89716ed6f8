"""Validate what the server sent against the official schemas (via tests/core/schema_oracle.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from schema_oracle import validate  # noqa: E402

sys.path.pop(0)

#: kind -> (0.3 definition of the whole response, 1.0 definition of its result)
_DEFINITIONS = {
    "send": ("SendMessageSuccessResponse", "SendMessageResponse"),
    "get": ("GetTaskSuccessResponse", "Task"),
    "cancel": ("CancelTaskSuccessResponse", "Task"),
    "list": (None, "ListTasksResponse"),
    "stream_event": ("SendStreamingMessageSuccessResponse", "StreamResponse"),
}


def check_response(kind: str, value: Any, version: str) -> None:
    """Raise if ``value`` (a JSON-RPC response, or a card for kind "AgentCard") is off-schema."""
    if kind == "AgentCard":
        validate("AgentCard", value, version)
        return
    if kind == "DualAgentCard":
        validate("AgentCard", value, "0.3")
        validate("AgentCard", strip_0_3_members(value), "1.0")
        return
    assert value.get("jsonrpc") == "2.0" and "id" in value, value
    if kind == "error":
        _check_error(value, version)
        return
    assert "error" not in value, value
    whole, result = _DEFINITIONS[kind]
    if version == "0.3":
        assert whole is not None
        validate(whole, value, "0.3")
    else:
        validate(result, value["result"], "1.0")


#: Members a dual card carries for 0.3 readers only.
_LEGACY = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces",
           "supportsAuthenticatedExtendedCard", "security")


def strip_0_3_members(card: dict[str, Any]) -> dict[str, Any]:
    """What a 1.0-only reader keeps of the served (dual) card."""
    out = {k: v for k, v in card.items() if k not in _LEGACY}
    out["capabilities"] = {k: v for k, v in card["capabilities"].items()
                           if k != "stateTransitionHistory"}
    out["skills"] = [{k: v for k, v in s.items() if k != "security"} for s in card["skills"]]
    return out


def _check_error(value: dict[str, Any], version: str) -> None:
    """0.3 has a JSONRPCErrorResponse schema; 1.0 data must be a list of typed objects."""
    assert set(value) == {"jsonrpc", "id", "error"}, value
    error = value["error"]
    assert isinstance(error["code"], int) and isinstance(error["message"], str), error
    if version == "0.3":
        validate("JSONRPCErrorResponse", value, "0.3")
    elif "data" in error:
        assert isinstance(error["data"], list), error
        assert all(isinstance(d, dict) and "@type" in d for d in error["data"]), error
