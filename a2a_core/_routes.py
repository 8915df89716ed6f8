"""Which path is what: the one route table of everything a server of the core answers.

The table is built once from a :class:`~a2a_core._server.DispatcherConfig` and
read for every request: a path below the mount point (WSGI ``PATH_INFO``) is
resolved to a :class:`Route`, the kind of answer it gets. The
:class:`~a2a_core._server.Dispatcher` answers every kind but one; a *mount*
(the inspector page of :mod:`a2a_wsgi`) is a prefix the adapter serves with an
application of its own, so the core decides that the path is the mount's and
the adapter only hands the request over.

Precedence, for a deployment whose paths overlap: a mount, then the JWKS, the
card, the JSON-RPC endpoint, then the HTTP+JSON prefix; anything else is not
found.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Route", "RouteKind", "RouteTable"]


class RouteKind(enum.Enum):
    """The kinds of answer a path gets."""

    #: The agent card (GET, HEAD).
    CARD = "card"
    #: The public keys cards and push notifications are signed with (a JWKS).
    JWKS = "jwks"
    #: The JSON-RPC endpoint (POST).
    JSONRPC = "jsonrpc"
    #: A path under the HTTP+JSON prefix.
    REST = "rest"
    #: A prefix the adapter serves with its own application (the inspector page).
    MOUNT = "mount"
    #: Nothing here: 404.
    NOT_FOUND = "not found"

    # (hashed by identity: the members are compared on every request; Enum's own
    # __hash__ is Python code)
    __hash__ = object.__hash__


#: Kinds answered to anyone: a client reads the card and the keys to learn how to log in.
#: (A mount is neither: its application checks its own callers.)
_PUBLIC = frozenset({RouteKind.CARD, RouteKind.JWKS})
#: Kinds answered with a document the dispatcher holds: a whole body, no call, no stream.
_DOCUMENTS = frozenset({RouteKind.CARD, RouteKind.JWKS})


@dataclass(frozen=True, slots=True)
class Route:
    """Where one path goes: its kind, and what the kind needs of the path."""

    kind: RouteKind
    #: REST: the path below the HTTP+JSON prefix ("/" for the prefix itself); MOUNT: the
    #: mount's prefix; otherwise "".
    sub_path: str = ""
    #: Served without credentials (the card, the JWKS).
    public: bool = False
    #: Answered with a document the dispatcher holds (the card, the JWKS): a whole body
    #: that names no operation, so an adapter may skip what it does for calls.
    document: bool = False


def _route(kind: RouteKind, sub_path: str = "") -> Route:
    return Route(kind, sub_path, kind in _PUBLIC, kind in _DOCUMENTS)


_NOT_FOUND = _route(RouteKind.NOT_FOUND)


class RouteTable:
    """The paths of one server (each without its slashes; None: not served)."""

    def __init__(self, *, card_path: str | None, rpc_path: str, rest_path: str | None,
                 jwks_path: str | None = None, mounts: Sequence[str] = ()) -> None:
        self.card_path = card_path
        self.rpc_path = rpc_path
        self.rest_path = rest_path
        self.jwks_path = jwks_path
        self.mounts = tuple(mounts)
        exact: dict[str, Route] = {rpc_path: _route(RouteKind.JSONRPC)}
        if card_path is not None:
            exact[card_path] = _route(RouteKind.CARD)
        if jwks_path is not None:
            exact[jwks_path] = _route(RouteKind.JWKS)
        for mount in self.mounts:  # a mount's paths are its own, whatever else is set
            exact = {path: route for path, route in exact.items()
                     if not _under(path, mount)}
            exact[mount] = _route(RouteKind.MOUNT, mount)
        #: Exact paths (without slashes) and their routes: most requests need one lookup.
        self._exact = exact
        self._mount_routes = tuple((mount, exact[mount]) for mount in self.mounts)

    def resolve(self, path: str) -> Route:
        """The route of ``path`` (a path below the mount point, slashes or not)."""
        bare = path.strip("/")
        route = self._exact.get(bare)
        if route is not None:
            return route
        for mount, mounted in self._mount_routes:
            if bare.startswith(mount + "/"):
                return mounted
        sub_path = self.rest_sub_path(bare)
        if sub_path is not None:
            return _route(RouteKind.REST, sub_path)
        return _NOT_FOUND

    def rest_sub_path(self, bare: str) -> str | None:
        """The path below the HTTP+JSON prefix (``bare``: without its slashes), or None."""
        rest_path = self.rest_path
        if rest_path is None or not _under(bare, rest_path):
            return None
        return bare[len(rest_path):] or "/"


def _under(path: str, prefix: str) -> bool:
    """``path`` is ``prefix`` or below it (both without their slashes)."""
    return path == prefix or path.startswith(prefix + "/")
