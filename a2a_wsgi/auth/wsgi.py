"""Authentication inside :class:`~a2a_wsgi.app.A2AApp`: who calls, before anything else happens.

With ``A2AApp(auth=...)`` every request except the public ones (the agent
card and the JWKS) goes through :class:`RequestGuard` before its body is read
or any task is looked up:

* an identity set by the deployment's own middleware
  (:func:`~a2a_wsgi.overrides.put_identity`: a Flask-Login or Django session)
  is taken as is and the authenticators are not asked: the framework already
  decided who the caller is, and asking again would demand a second login;
* otherwise the :class:`~.base.AuthPolicy` reads the headers, query and
  cookies; its :class:`~a2a_core.auth.Principal` becomes the call's identity
  (``authorize_task``, the store's owner scoping, the agent's context);
* a refusal is HTTP 401 with one ``WWW-Authenticate`` challenge per declared
  scheme (403 when a scheme knows the caller but refuses it), in the body the
  caller's binding reads: a JSON-RPC error response (-31401 or -31403, see
  :mod:`.errors`, in the dialect of its ``A2A-Version``, id null since the
  body is not read yet) or an HTTP+JSON ``google.rpc.Status``.

A policy that admits anonymous callers (``required=False``) still refuses
them the extended card: for that one method the JSON-RPC body is parsed here,
for anonymous callers only, to learn which method they call (that refusal
echoes the request's id).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from a2a_core import rest, wire
from a2a_core.auth import Principal
from a2a_core.errors import RPCError, VersionNotSupportedError
from a2a_core.http import HttpRequest, HttpResponse
from a2a_core.jsonrpc import encode_error_response, parse_request
from a2a_core.models import AgentCard
from a2a_core.optable import OPERATIONS, Operation
from a2a_core.service import CallContext
from a2a_core.signing import JWKS_PATH, CardSigner
from a2a_core.streaming import dumps
from a2a_core.versioning import V1_0, negotiate_version

from .base import Authenticator, AuthPolicy, AuthRequest
from .errors import AuthError, UnauthenticatedError

if TYPE_CHECKING:
    from a2a_core.server import Dispatcher

__all__ = [
    "AuthOption",
    "RequestGuard",
    "as_policy",
    "declared",
    "principal_owner",
    "protected_extended_card",
    "served_jwks",
]

#: What ``A2AApp(auth=...)`` takes: a policy, one authenticator, or several (tried in order).
AuthOption = AuthPolicy | Authenticator | Sequence[Authenticator] | None
ExtendedCard = Callable[[CallContext], AgentCard]
_JSON = "application/json"
_NO_STORE = ("Cache-Control", "no-store")


def as_policy(auth: AuthOption) -> AuthPolicy | None:
    """The policy ``auth`` stands for (None: the app authenticates nobody itself)."""
    if auth is None or isinstance(auth, AuthPolicy):
        return auth
    if isinstance(auth, Authenticator):
        return AuthPolicy([auth])
    if isinstance(auth, Sequence) and not isinstance(auth, str) and \
            all(isinstance(a, Authenticator) for a in auth):
        return AuthPolicy(list(auth))
    raise TypeError("auth must be an AuthPolicy, an Authenticator or a list of Authenticators")


def principal_owner(identity: Any) -> str | None:
    """The store owner of a caller: a Principal's ``identity``, else ``str(identity)``.

    A Principal's claims (``exp``, ``iat``…) change with every token, so the
    whole object cannot be the owner. Identities of different schemes share
    one namespace: make them distinct (a prefix in the verify callback) when
    two schemes could name different people alike.
    """
    if identity is None:
        return None
    if isinstance(identity, Principal):
        return identity.identity
    return str(identity)


def declared(card: AgentCard, policy: AuthPolicy | None) -> AgentCard:
    """``card`` with the policy's ``securitySchemes`` and security requirements."""
    return card if policy is None else policy.declare(card)


def protected_extended_card(build: ExtendedCard | None,
                            policy: AuthPolicy | None) -> ExtendedCard | None:
    """The extended card callback, refusing anonymous callers and declaring the schemes.

    :class:`RequestGuard` refuses an anonymous call before it gets here; this
    keeps the card closed whatever path a call took.
    """
    if build is None or policy is None:
        return build

    def extended_card(ctx: CallContext) -> AgentCard:
        if ctx.identity is None:
            raise UnauthenticatedError("The extended agent card requires authentication")
        card = policy.declare(build(ctx))
        caps = dataclasses.replace(card.capabilities, extended_agent_card=True)
        return dataclasses.replace(card, capabilities=caps)

    return extended_card


def served_jwks(*documents: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """One JWKS of every key given (push signing, card signing); None when there is none."""
    keys = [key for doc in documents if doc for key in doc.get("keys", [])]
    return {"keys": keys} if keys else None


def check_distinct_kids(card_signer: CardSigner | None, other_kids: Sequence[str]) -> None:
    """Card and push keys share one JWKS, so a ``kid`` must name one key only."""
    if card_signer is None:
        return
    shared = set(card_signer.kids) & set(other_kids)
    if shared:
        raise ValueError(f"card and push signing keys share the kid(s) {sorted(shared)}; "
                         "they are published in one JWKS, so give each key its own kid")


class RequestGuard:
    """Authenticates each request of one app; answers the refusals in the binding's shape."""

    def __init__(self, policy: AuthPolicy, *, card_path: str | None, rpc_path: str,
                 rest_path: str | None, versions: Sequence[str], max_json_depth: int,
                 extended_card: bool) -> None:
        self.policy = policy
        self.card_path = card_path
        self.rpc_path = rpc_path
        self.rest_path = rest_path
        self.versions = tuple(versions)
        self.max_json_depth = max_json_depth
        #: Whether the app serves an extended card (which anonymous callers never get).
        self.extended_card = extended_card

    def __repr__(self) -> str:
        return f"RequestGuard({self.policy!r})"

    @classmethod
    def for_dispatcher(cls, policy: AuthPolicy, dispatcher: Dispatcher, *,
                       extended_card: bool) -> RequestGuard:
        return cls(policy, card_path=dispatcher.card_path, rpc_path=dispatcher.rpc_path,
                   rest_path=dispatcher.rest_path, versions=dispatcher.versions,
                   max_json_depth=dispatcher.max_json_depth, extended_card=extended_card)

    # -- before the body ------------------------------------------------------------------

    def is_public(self, path: str) -> bool:
        """The card and the JWKS: what a client reads before it can authenticate."""
        stripped = path.strip("/")
        return stripped == self.card_path or stripped == JWKS_PATH.strip("/")

    def admit(self, environ: Mapping[str, Any], path: str,
              identity: Any) -> tuple[Any, HttpResponse | None]:
        """The caller's identity (None: anonymous, when allowed), or the refusal to send.

        ``identity`` is what a middleware recorded with ``put_identity``; it wins.
        """
        if identity is not None or self.is_public(path):
            return identity, None
        try:
            return self.policy.authenticate(AuthRequest.from_environ(environ)), None
        except AuthError as refused:
            return None, self.refusal(refused, path, environ)

    # -- after the body, for anonymous callers ----------------------------------------------

    def screen(self, request: HttpRequest, identity: Any,
               environ: Mapping[str, Any]) -> HttpResponse | None:
        """401 for an anonymous call of the extended card; None for anything else."""
        if identity is not None or self.policy.required or not self.extended_card:
            return None
        calls_card, request_id = self._calls_extended_card(request)
        if not calls_card:
            return None
        return self.refusal(self.policy.required_error(), request.path, environ, request_id)

    def _calls_extended_card(self, request: HttpRequest) -> tuple[bool, Any]:
        """Whether ``request`` is GetExtendedAgentCard (either binding), and its JSON-RPC id."""
        path = request.path.strip("/")
        if path == self.rpc_path:
            if request.method != "POST" or request.body_too_large:
                return False, None
            try:  # the dispatcher's own parser, so no spelling reads differently here
                rpc = parse_request(request.body, max_depth=self.max_json_depth,
                                    allow_notifications=True)
            except RPCError:
                return False, None
            return OPERATIONS.named(rpc.method) is Operation.GET_EXTENDED_AGENT_CARD, rpc.id
        sub_path = self._rest_sub_path(path)
        if sub_path is None:
            return False, None
        routed = rest.route(request.method, sub_path, request.query, b"")
        return isinstance(routed, rest.RestCall) and \
            routed.operation is Operation.GET_EXTENDED_AGENT_CARD, None

    # -- refusals -----------------------------------------------------------------------

    def refusal(self, error: AuthError, path: str, environ: Mapping[str, Any],
                request_id: Any = None) -> HttpResponse:
        """``error`` as the answer of the binding ``path`` belongs to."""
        stripped = path.strip("/")
        headers = [_NO_STORE, *error.headers()]
        if stripped == self.rpc_path:
            version = self._rpc_version(environ)
            body = encode_error_response(request_id,
                                         wire.encode_error(error.rpc_error(), version))
            return HttpResponse(error.http_status,
                                [("Content-Type", _JSON), ("A2A-Version", version), *headers],
                                body)
        if self._rest_sub_path(stripped) is not None:
            rpc_error = error.rpc_error()
            status = rest.encode_status(rpc_error, status=error.http_status)
            status["error"]["status"] = rpc_error.grpc_status
            return HttpResponse(error.http_status, [("Content-Type", rest.A2A_JSON),
                                                    ("A2A-Version", V1_0), *headers],
                                dumps(status).encode())
        return error.response()

    def _rest_sub_path(self, stripped: str) -> str | None:
        """The path below the HTTP+JSON interface (as the dispatcher routes it), or None."""
        base = self.rest_path
        if base is None or not (stripped == base or stripped.startswith(base + "/")):
            return None
        return stripped[len(base):] or "/"

    def _rpc_version(self, environ: Mapping[str, Any]) -> str:
        """The dialect of the caller's A2A-Version (header, else query); 1.0 when refused."""
        header = environ.get("HTTP_A2A_VERSION")
        query = dict(parse_qsl(str(environ.get("QUERY_STRING") or ""))).get("A2A-Version")
        try:
            return negotiate_version(header if isinstance(header, str) else None, self.versions,
                                     query=query)
        except VersionNotSupportedError:
            return V1_0
