"""Authentication inside :class:`~a2a_wsgi._app.A2AApp`: who calls, before anything else happens.

With ``A2AApp(auth=...)`` every request except the public ones (the agent
card and the JWKS) goes through :class:`RequestGuard` before its body is read
or any task is looked up:

* an identity set by the deployment's own middleware
  (:func:`~a2a_wsgi._overrides.put_identity`: a Flask-Login or Django session)
  is taken as is and the authenticators are not asked: the framework already
  decided who the caller is, and asking again would demand a second login;
* otherwise the :class:`~.base.AuthPolicy` reads the headers, query and
  cookies; its :class:`~a2a_core.auth.Principal` becomes the call's identity
  (``authorize_task``, the store's owner scoping, the agent's context);
* a refusal is HTTP 401 with one ``WWW-Authenticate`` challenge per declared
  scheme (403 when a scheme knows the caller but refuses it): an
  :class:`~a2a_core._calls.Refused` the dispatcher writes in the body the
  caller's binding reads (a JSON-RPC error response, -31401 or -31403, see
  :mod:`.errors`, id null since the body is not read yet; or an HTTP+JSON
  ``google.rpc.Status``).

A policy that admits anonymous callers (``required=False``) still refuses
them the extended card: not here, but in the core's caller gate, after the
dispatcher's one parse (so that refusal echoes the request's id), with the
policy's challenge (:meth:`RequestGuard.challenge`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a_core._calls import Refused
from a2a_core._service import CallContext
from a2a_core.auth import Principal
from a2a_core.models import AgentCard
from a2a_core.signing import CardSigner

from ._base import Authenticator, AuthPolicy, AuthRequest
from ._errors import AuthError

__all__ = [
    "AuthOption",
    "RequestGuard",
    "as_policy",
    "declared",
    "declared_extended_card",
    "principal_owner",
    "served_jwks",
]

#: What ``A2AApp(auth=...)`` takes: a policy, one authenticator, or several (tried in order).
AuthOption = AuthPolicy | Authenticator | Sequence[Authenticator] | None
ExtendedCard = Callable[[CallContext], AgentCard]


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


def declared_extended_card(build: ExtendedCard | None,
                           policy: AuthPolicy | None) -> ExtendedCard | None:
    """The extended card callback, its card declaring the policy's schemes.

    Anonymous callers never get here: the core's caller gate refuses them first.
    """
    if build is None or policy is None:
        return build

    def extended_card(ctx: CallContext) -> AgentCard:
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
    """Turns each request's credentials into the caller's identity, or the refusal to send.

    It only authenticates: which paths skip it (the card, the JWKS) is the app's
    routing, what an operation needs of the identity is the core's caller gate
    (operations marked ``authenticated`` in :mod:`a2a_core.optable`, fed :meth:`challenge`),
    and each binding writes a refusal in its own shape
    (:meth:`~a2a_core._server.Dispatcher.refuse`).
    """

    def __init__(self, policy: AuthPolicy) -> None:
        self.policy = policy

    def __repr__(self) -> str:
        return f"RequestGuard({self.policy!r})"

    def admit(self, environ: Mapping[str, Any], identity: Any) -> tuple[Any, Refused | None]:
        """The caller's identity (None: anonymous, when allowed), or the refusal to send.

        ``identity`` is what a middleware recorded with ``put_identity``; it wins.
        Read before the body: only headers, query, cookies and the peer.
        """
        if identity is not None:
            return identity, None
        try:
            return self.policy.authenticate(AuthRequest.from_environ(environ)), None
        except AuthError as refused:
            return None, refused.refused()

    def challenge(self) -> Refused:
        """The 401 of an anonymous caller where an operation needs an authenticated one."""
        return self.policy.required_error().refused()
