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
    from .cards import Endpoint as Endpoint
    from .client import A2AClient as A2AClient
    from .errors import ClientError as ClientError
    from .errors import ConnectError as ConnectError
    from .errors import ConnectTimeout as ConnectTimeout
    from .errors import HTTPStatusError as HTTPStatusError
    from .errors import ReadTimeout as ReadTimeout
    from .errors import TimeoutException as TimeoutException
    from .errors import TransportError as TransportError
    from .errors import WaitTimeout as WaitTimeout
    from .push import JWKSFetcher as JWKSFetcher
    from .push import PushVerificationError as PushVerificationError
    from .push import ReplayCache as ReplayCache
    from .push import verify_push as verify_push
    from .streams import EventStream as EventStream
    from .tools import AgentDescriptor as AgentDescriptor
    from .tools import Tool as Tool
    from .tools import ToolContext as ToolContext
    from .tools import ToolResult as ToolResult
    from .tools import agent as agent
    from .tools import agent_tools as agent_tools
    from .tools import agents_from_config as agents_from_config
    from .transport import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT

__all__ = [
    "A2AClient",
    "EventStream",
    "Endpoint",
    "DEFAULT_TIMEOUT",
    # the client's error family (a2a_client.errors)
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
    "Endpoint": "a2a_client.cards",
    "A2AClient": "a2a_client.client",
    "ClientError": "a2a_client.errors",
    "ConnectError": "a2a_client.errors",
    "ConnectTimeout": "a2a_client.errors",
    "HTTPStatusError": "a2a_client.errors",
    "ReadTimeout": "a2a_client.errors",
    "TimeoutException": "a2a_client.errors",
    "TransportError": "a2a_client.errors",
    "WaitTimeout": "a2a_client.errors",
    "JWKSFetcher": "a2a_client.push",
    "PushVerificationError": "a2a_client.push",
    "ReplayCache": "a2a_client.push",
    "verify_push": "a2a_client.push",
    "EventStream": "a2a_client.streams",
    "AgentDescriptor": "a2a_client.tools",
    "Tool": "a2a_client.tools",
    "ToolContext": "a2a_client.tools",
    "ToolResult": "a2a_client.tools",
    "agent": "a2a_client.tools",
    "agent_tools": "a2a_client.tools",
    "agents_from_config": "a2a_client.tools",
    "DEFAULT_TIMEOUT": "a2a_client.transport",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
