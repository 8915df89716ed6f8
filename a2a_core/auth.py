"""Authorization decisions: may this caller touch this task?

Authentication (who is calling) happens outside the protocol, in HTTP headers;
this module only defines the caller's shape (:class:`Principal`) and a
header-only hook (:class:`Authenticator`). Authorization is a user callback
asked once per task and operation; this module turns its many possible
answers into one of two outcomes: return (allow) or raise.
"""

# Theory of operation
# -------------------
#
# The callback is the application's; we only interpret it. It is called as
# ``callback(operation, task, context)`` or, when it accepts exactly two
# positional arguments, ``callback(operation, task)``. Arity is found by
# *binding* dummy arguments to ``inspect.signature``, which handles functions,
# lambdas, bound methods, ``functools.partial``, ``*args`` and instances with
# ``__call__`` alike. A TaskAuthorizer does this once, when it is built, and a
# server keeps one per callback (see TaskAuthorizer for why). The one-off
# helpers build a TaskAuthorizer per call: ``authorize`` inspects the callback
# each time, ``filter_authorized`` once per list. Nothing is cached per
# callable: a cache keyed on it would be wrong (``id`` is reused) or useless (a
# bound method is a new object at every attribute access).
#
# Allowed: ``True``, the string ``"ok"``, or a 2-tuple ``("ok", anything)``. An
# RPCError *returned* is raised as is and one *raised* propagates: the
# application chose that answer. Everything else denies: ``False``, ``None`` (a
# callback that forgot to return must not open the door), ``1``, ``"yes"``, ...
# A deny raises a fresh ``TaskNotFoundError()`` with the default message,
# identical to the error for a task that does not exist, so a caller cannot
# probe for existence (1.0 §13.1).
#
# Any other exception from the callback also denies (fail closed): the caller
# gets TaskNotFoundError with the original exception chained as ``__cause__``,
# so the server can log it without showing it to the client.
#
# In a list, every task the caller may not see is dropped silently, including
# a task whose callback answered with an explicit RPCError: one task must not
# break, or reveal itself in, the listing of the others.

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import RPCError, TaskNotFoundError
from .models import Task

__all__ = [
    "AuthorizeOperation",
    "AuthorizationContext",
    "AuthorizeCallback",
    "TaskAuthorizer",
    "authorize",
    "filter_authorized",
    "Principal",
    "Authenticator",
]


class AuthorizeOperation(str, enum.Enum):
    """What the caller wants to do with a task (push operations are separate so that
    read access does not imply the right to redirect webhooks). Each operation's entry
    says which it asks (:attr:`a2a_core.optable.OperationSpec.authorize`): one of these,
    or a string of its own for a kind none of them names. Each member is its value too
    (``AuthorizeOperation.GET == "get"``), so a callback compares every kind alike."""

    GET = "get"
    CANCEL = "cancel"
    LIST = "list"
    RESUBSCRIBE = "resubscribe"
    PUSH_SET = "push_set"
    PUSH_GET = "push_get"
    PUSH_LIST = "push_list"
    PUSH_DELETE = "push_delete"


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthorizationContext:
    """What the callback may look at besides the task."""

    #: The merged request metadata (see :func:`a2a_core._tasks.merge_metadata`).
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: The request's params as received (wire spelling).
    params: Mapping[str, Any] = field(default_factory=dict)
    #: The authenticated caller (a :class:`Principal` when served by A2AApp), None if anonymous.
    identity: Any = None


#: ``(operation, task, context) -> answer`` or ``(operation, task) -> answer``.
AuthorizeCallback = Callable[..., object]


def _takes_context(callback: AuthorizeCallback) -> bool:
    """True when the callback takes (operation, task, context), False for (operation, task)."""
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):  # some builtins have no signature: assume the full form
        return True
    for args, takes in (((None, None, None), True), ((None, None), False)):
        try:
            signature.bind(*args)
        except TypeError:
            continue
        return takes
    raise TypeError(f"authorize callback {callback!r} must accept 2 or 3 positional arguments")


def _is_allowed(answer: object) -> bool:
    """The allow forms: True, "ok", ("ok", anything). Anything else denies."""
    if answer is True:
        return True
    if isinstance(answer, str):
        return answer == "ok"
    return isinstance(answer, tuple) and len(answer) == 2 and answer[0] == "ok"


def _call(
    callback: AuthorizeCallback,
    takes_context: bool,
    operation: AuthorizeOperation | str,
    task: Task,
    context: AuthorizationContext,
) -> object:
    """Call the callback in the form it accepts."""
    if takes_context:
        return callback(operation, task, context)
    return callback(operation, task)


def _decide(
    callback: AuthorizeCallback,
    takes_context: bool,
    operation: AuthorizeOperation | str,
    task: Task,
    context: AuthorizationContext,
) -> None:
    """Call the callback and turn its answer into return (allow) or raise (deny)."""
    try:
        answer = _call(callback, takes_context, operation, task, context)
    except RPCError:
        raise
    except Exception as exc:  # fail closed; __cause__ keeps the bug for the server's log
        raise TaskNotFoundError() from exc
    if isinstance(answer, RPCError):
        raise answer
    if not _is_allowed(answer):
        raise TaskNotFoundError()


class TaskAuthorizer:
    """``authorize_task`` with its calling form worked out once.

    ``inspect.signature`` costs ~150 µs on a callable object: paid per request,
    it made a denial measurably slower than a missing task (an existence
    oracle, A2A §13.1). A callback of the wrong arity is kept, and fails
    closed each time it is used (TypeError), as a bug in it would.
    """

    __slots__ = ("callback", "_takes_context", "_arity_error")

    def __init__(self, callback: AuthorizeCallback | None) -> None:
        self.callback = callback
        self._takes_context = True
        self._arity_error: TypeError | None = None
        if callback is not None:
            try:
                self._takes_context = _takes_context(callback)
            except TypeError as exc:
                self._arity_error = exc

    def _form(self) -> bool:
        if self._arity_error is not None:
            raise TypeError(str(self._arity_error))
        return self._takes_context

    def authorize(
        self, operation: AuthorizeOperation | str, task: Task, context: AuthorizationContext
    ) -> None:
        """Return when allowed; raise TaskNotFoundError (or the callback's RPCError) when not.

        No callback allows everything; any non-RPC exception from the callback denies.
        """
        if self.callback is not None:
            _decide(self.callback, self._form(), operation, task, context)

    def filter(
        self,
        tasks: Iterable[Task],
        context: AuthorizationContext,
        *,
        on_error: Callable[[Task, Exception], None] | None = None,
    ) -> list[Task]:
        """The tasks the caller may LIST, in order; the others are dropped silently.

        ``on_error`` sees a non-RPC exception raised by the callback (the task is
        dropped either way), so the server can log callback bugs.
        """
        if self.callback is None:
            return list(tasks)
        takes_context = self._form()
        visible = []
        for task in tasks:
            try:
                answer = _call(
                    self.callback, takes_context, AuthorizeOperation.LIST, task, context
                )
            except RPCError:
                continue
            except Exception as exc:  # fail closed, but let the server log the bug
                if on_error is not None:
                    on_error(task, exc)
                continue
            if _is_allowed(answer):
                visible.append(task)
        return visible


def authorize(
    callback: AuthorizeCallback | None,
    operation: AuthorizeOperation | str,
    task: Task,
    context: AuthorizationContext,
) -> None:
    """One-off :meth:`TaskAuthorizer.authorize` (servers keep a TaskAuthorizer instead)."""
    TaskAuthorizer(callback).authorize(operation, task, context)


def filter_authorized(
    callback: AuthorizeCallback | None,
    tasks: Iterable[Task],
    context: AuthorizationContext,
    *,
    on_error: Callable[[Task, Exception], None] | None = None,
) -> list[Task]:
    """One-off :meth:`TaskAuthorizer.filter`."""
    return TaskAuthorizer(callback).filter(tasks, context, on_error=on_error)


# -- authentication hooks --------------------------------------------------------------


class Principal(str):
    """An authenticated caller: the identity string itself, with its tenant and claims.

    Every path names the caller with one type: an authenticator's answer, a
    host site's ``put_identity("user:1")`` and an agent's ``context.identity``
    are all a Principal. It *is* its identity string (``str(p)``, ``f"{p}"``,
    ``p == "user:1"``, a dict key, JSON), so code written for the string a
    Flask or Django login gives works unchanged, and it carries what a token
    said besides: ``tenant`` and ``claims`` (a JWT's claims, never the token).
    Two principals are equal when their identities are (a new token of the
    same subject is the same caller). Immutable.
    """

    tenant: str | None
    claims: Mapping[str, Any]

    def __new__(cls, identity: str, *, tenant: str | None = None,
                claims: Mapping[str, Any] | None = None) -> Principal:
        if not isinstance(identity, str):
            raise TypeError(f"a Principal's identity is a str, not {type(identity).__name__}")
        if tenant is not None and not isinstance(tenant, str):
            raise TypeError(f"a Principal's tenant is a str or None, not {type(tenant).__name__}")
        principal = super().__new__(cls, identity)
        object.__setattr__(principal, "tenant", tenant)
        object.__setattr__(principal, "claims", {} if claims is None else claims)
        return principal

    @property
    def identity(self) -> str:
        """The identity as a plain ``str`` (the store owner, the name to show)."""
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return (f"Principal(identity={self.identity!r}, tenant={self.tenant!r}, "
                f"claims={dict(self.claims)!r})")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Principal is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Principal is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) with its tenant and claims: a run handed to another process."""
        return (_principal, (self.identity, self.tenant, dict(self.claims)))

    @classmethod
    def of(cls, identity: object) -> Principal | None:
        """``identity`` as a Principal: a Principal as is, a str wrapped, None anonymous.

        :raises TypeError: for anything else (a user object: name it with a string).
        """
        if identity is None or isinstance(identity, Principal):
            return identity
        if isinstance(identity, str):
            return cls(identity)
        raise TypeError(f"a caller's identity is a str or a Principal, not "
                        f"{type(identity).__name__}: name the caller with a string "
                        f"(e.g. f\"user:{{user.pk}}\")")


def _principal(identity: str, tenant: str | None, claims: Mapping[str, Any]) -> Principal:
    """Principal.__reduce__'s rebuild (keyword arguments are not picklable positionally)."""
    return Principal(identity, tenant=tenant, claims=claims)


class Authenticator(Protocol):
    """Find the caller in the request headers; None when there are no credentials.

    The sans-IO shape of an authenticator; raising is how it rejects bad
    credentials. ``A2AApp(auth=...)`` does not take this shape: it runs
    :class:`a2a_wsgi.auth.Authenticator` objects (which also read the query,
    cookies and peer), whose :class:`~a2a_wsgi.auth.AuthError` carries the
    answer (401 with a challenge, or 403). Verification (tokens, keys) is the
    caller's: no crypto here.
    """

    def __call__(self, headers: Mapping[str, str]) -> Principal | None: ...
