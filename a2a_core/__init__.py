"""a2a_core: the sans-IO protocol core shared by a2a_wsgi and a2a_client.

Nothing in this package opens a socket, a file or a database, starts a
thread, sleeps, reads the clock or makes a random id except through callables
passed in. ``tests/core/test_boundaries.py`` enforces it. The one read it does is of its
own package data (the vendored A2A schemas, :mod:`a2a_core.schemas`).

Each public name has one import path, its module's; this namespace holds only the version.
The modules most callers need:

- :mod:`a2a_core.models`: the protocol's dataclasses (``Message``, ``Task``, ``AgentCard`` …)
- :mod:`a2a_core.errors`: ``A2AError`` and the JSON-RPC error classes (``TaskNotFoundError`` …)
- :mod:`a2a_core.wire`: the 0.3 and 1.0 codecs (``encode``, ``decode_*``)
- :mod:`a2a_core.optable`: one entry per operation (names, routes, types, limits, needs)
- :mod:`a2a_core.auth`: ``Principal``, ``AuthorizeOperation``, ``AuthorizationContext``
- :mod:`a2a_core.extensions`, :mod:`a2a_core._sse`, :mod:`a2a_core._tasks`,
  :mod:`a2a_core._versioning`, :mod:`a2a_core.signing`, :mod:`a2a_core.schemas`
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
