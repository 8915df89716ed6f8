"""a2a_core: the sans-IO protocol core shared by a2a_wsgi and a2a_client.

Nothing in this package opens a socket, a file or a database, starts a
thread, sleeps, reads the clock or makes a random id except through callables
passed in. ``tests/core/test_boundaries.py`` enforces it. The one read it does is of its
own package data (the vendored A2A schemas, :mod:`a2a_core.schemas`).

The wire codecs are in :mod:`a2a_core.wire`; this namespace re-exports the
models, the errors and the small set of functions most callers need.
"""

from __future__ import annotations

from .auth import AuthorizationContext as AuthorizationContext
from .auth import AuthorizeOperation as AuthorizeOperation
from .auth import Principal as Principal
from .errors import *  # noqa: F403
from .errors import __all__ as _errors_all
from .extensions import ActivatedExtensions as ActivatedExtensions
from .extensions import Activation as Activation
from .extensions import Extension as Extension
from .extensions import TimestampExtension as TimestampExtension
from .jsonrpc import RPCRequest as RPCRequest
from .jsonrpc import RPCResponse as RPCResponse
from .jsonvalue import JSONValue as JSONValue
from .methods import METHODS as METHODS
from .methods import Operation as Operation
from .models import *  # noqa: F403
from .models import __all__ as _models_all
from .sse import ServerSentEvent as ServerSentEvent
from .sse import SSEDecoder as SSEDecoder
from .tasks import INTERRUPTED_STATES as INTERRUPTED_STATES
from .tasks import TERMINAL_STATES as TERMINAL_STATES
from .tasks import TransitionEvent as TransitionEvent
from .versioning import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Activation",
    "ActivatedExtensions",
    "AuthorizationContext",
    "AuthorizeOperation",
    "Extension",
    "INTERRUPTED_STATES",
    "JSONValue",
    "METHODS",
    "Operation",
    "Principal",
    "RPCRequest",
    "RPCResponse",
    "SSEDecoder",
    "SUPPORTED_VERSIONS",
    "ServerSentEvent",
    "TERMINAL_STATES",
    "TimestampExtension",
    "TransitionEvent",
    *_errors_all,
    *_models_all,
]
