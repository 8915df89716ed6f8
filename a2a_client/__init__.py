"""a2a_client: call remote A2A agents from plain blocking Python.

``A2AClient`` speaks A2A 0.3 and 1.0 over JSON-RPC, and 1.0 over HTTP+JSON, with
``requests``; ``agent()`` and ``agent_tools()`` turn a remote agent's skills into tools
for an LLM loop; ``a2a`` is the command line. An agent's error answers raise the core's
classes, imported from :mod:`a2a_core.errors` (``TaskNotFoundError`` …); this namespace
holds the client's own family (``ClientError`` …), all under
:class:`a2a_core.errors.A2AError`.

Every name here is imported on first use (:mod:`a2a_core._lazy`), so ``a2a --version``
and ``import a2a_client`` load nothing of ``requests``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from ._cards import Endpoint as Endpoint
    from ._client import A2AClient as A2AClient
    from ._errors import ClientError as ClientError
    from ._errors import ConnectError as ConnectError
    from ._errors import ConnectTimeout as ConnectTimeout
    from ._errors import HTTPStatusError as HTTPStatusError
    from ._errors import ReadTimeout as ReadTimeout
    from ._errors import TimeoutException as TimeoutException
    from ._errors import TransportError as TransportError
    from ._errors import WaitTimeout as WaitTimeout
    from ._push import JWKSFetcher as JWKSFetcher
    from ._push import PushVerificationError as PushVerificationError
    from ._push import ReplayCache as ReplayCache
    from ._push import verify_push as verify_push
    from ._streams import EventStream as EventStream
    from ._transport import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from .tools import AgentDescriptor as AgentDescriptor
    from .tools import Tool as Tool
    from .tools import ToolContext as ToolContext
    from .tools import ToolResult as ToolResult
    from .tools import agent as agent
    from .tools import agent_tools as agent_tools
    from .tools import agents_from_config as agents_from_config

__all__ = [
    "A2AClient",
    "EventStream",
    "Endpoint",
    "DEFAULT_TIMEOUT",
    # the client's error family (a2a_client._errors)
    "ClientError",
    "TransportError",
    "ConnectError",
    "TimeoutException",
    "ConnectTimeout",
    "ReadTimeout",
    "HTTPStatusError",
    "WaitTimeout",
    "agent",
    "agent_tools",
    "agents_from_config",
    "AgentDescriptor",
    "Tool",
    "ToolContext",
    "ToolResult",
    "verify_push",
    "PushVerificationError",
    "ReplayCache",
    "JWKSFetcher",
]

#: Where each name lives (read on first use).
_WHERE = {
    "Endpoint": "a2a_client._cards",
    "A2AClient": "a2a_client._client",
    "ClientError": "a2a_client._errors",
    "ConnectError": "a2a_client._errors",
    "ConnectTimeout": "a2a_client._errors",
    "HTTPStatusError": "a2a_client._errors",
    "ReadTimeout": "a2a_client._errors",
    "TimeoutException": "a2a_client._errors",
    "TransportError": "a2a_client._errors",
    "WaitTimeout": "a2a_client._errors",
    "JWKSFetcher": "a2a_client._push",
    "PushVerificationError": "a2a_client._push",
    "ReplayCache": "a2a_client._push",
    "verify_push": "a2a_client._push",
    "EventStream": "a2a_client._streams",
    "AgentDescriptor": "a2a_client.tools",
    "Tool": "a2a_client.tools",
    "ToolContext": "a2a_client.tools",
    "ToolResult": "a2a_client.tools",
    "agent": "a2a_client.tools",
    "agent_tools": "a2a_client.tools",
    "agents_from_config": "a2a_client.tools",
    "DEFAULT_TIMEOUT": "a2a_client._transport",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
