"""One A2A call made from inside a host framework's view: the environ in, the answer out.

Both adapters build the WSGI environ the agent would have seen mounted at
the view's prefix (the host's environ with ``SCRIPT_NAME``/``PATH_INFO``
moved to the mount, the body stream the host left unread, and the host's
caller recorded with :func:`~a2a_wsgi._overrides.put_identity`), then call the
app as any WSGI server would. So the card's URL, the extended card, the
authenticators and SSE behave exactly as under plain WSGI: there is no
second request path to keep in step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from a2a_core._calls import Refused
from a2a_core._http import HttpRequest
from a2a_core.auth import Principal

from .._overrides import ENVIRON_KEY, put_identity
from .._store_choice import MemoryStoreInManyProcessesError
from .._wsgi_io import card_query, request_headers, respond
from ..auth._base import AuthRequest, quote_param
from ..auth._errors import AuthenticationRequiredError, AuthError
from ..auth._wsgi import as_policy

if TYPE_CHECKING:
    from .._app import A2AApp

__all__ = ["HostedAnswer", "call_mounted", "check_require_login", "hosted_answer",
           "login_refusal", "mounted_environ", "refused_answer", "session_challenge", "wsgi_str"]

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
#: The host framework's own response (a Django ``HttpResponse``, a Flask return value).
HostAnswer = TypeVar("HostAnswer")


def wsgi_str(text: str) -> str:
    """A decoded path segment as a WSGI native string (UTF-8 bytes read as latin-1, PEP 3333)."""
    return text.encode("utf-8").decode("latin-1")


def mounted_environ(environ: Mapping[str, Any], *, sub_path: str, stream: Any,
                    identity: str | Principal | None) -> dict[str, Any]:
    """A copy of ``environ`` for an app mounted where the request's path ends in ``sub_path``.

    ``sub_path`` is the part below the mount, as a WSGI string; what comes
    before it in ``PATH_INFO`` joins ``SCRIPT_NAME`` (the card advertises it).
    ``stream`` replaces ``wsgi.input``: the host may have wrapped or read it.
    """
    path_info = str(environ.get("PATH_INFO") or "/")
    sub_path = "/" + sub_path.lstrip("/")
    # What precedes the sub-path is the mount ("" if the host rewrote the path unrecognisably).
    mount = path_info[:len(path_info) - len(sub_path)] if path_info.endswith(sub_path) else ""
    mounted = dict(environ)
    overrides = mounted.get(ENVIRON_KEY)
    if isinstance(overrides, dict):  # the copy's own: the host's environ stays as it was
        mounted[ENVIRON_KEY] = dict(overrides)
    mounted["SCRIPT_NAME"] = str(environ.get("SCRIPT_NAME") or "").rstrip("/") + mount.rstrip("/")
    mounted["PATH_INFO"] = sub_path
    mounted["wsgi.input"] = stream
    if identity is not None:
        put_identity(mounted, identity)
    return mounted


@dataclass(frozen=True, slots=True)
class HostedAnswer:
    """What the app answered: the status line, its headers, and the body to hand on."""

    status: str
    headers: list[tuple[str, str]]
    body: Iterable[bytes]

    @property
    def status_code(self) -> int:
        return int(self.status.split(" ", 1)[0])

    @property
    def reason(self) -> str:
        return self.status.partition(" ")[2]

    @property
    def streamed(self) -> bool:
        """Whether the body is produced as it goes (SSE): a list is whole already."""
        return not isinstance(self.body, (list, tuple))

    def whole_body(self) -> bytes:
        """The body of a non-streamed answer, joined."""
        return b"".join(self.body)

    def merged_headers(self) -> dict[str, str]:
        """The headers with repeats joined by commas (WWW-Authenticate challenges, Vary).

        For hosts whose response keeps one value per name (Django's).
        """
        merged: dict[str, str] = {}
        names: dict[str, str] = {}
        for name, value in self.headers:
            key = name.lower()
            if key in names:
                merged[names[key]] += ", " + value
            else:
                names[key] = name
                merged[name] = value
        return merged


def call_mounted(app: WsgiApp, environ: dict[str, Any]) -> HostedAnswer:
    """Call ``app`` as a WSGI server would and keep its answer for the host to send."""
    started: list[tuple[str, list[tuple[str, str]]]] = []

    def start_response(status: str, headers: list[tuple[str, str]],
                       exc_info: Any = None) -> Callable[[bytes], object]:
        if exc_info is not None and started:
            raise exc_info[1].with_traceback(exc_info[2])
        started[:] = [(status, list(headers))]
        return _no_write

    body = app(environ, start_response)
    if not started:  # A2AApp starts every answer before returning its body
        raise RuntimeError("the A2A app returned without calling start_response")
    status, headers = started[0]
    return HostedAnswer(status, headers, body)


def _no_write(data: bytes) -> object:
    raise RuntimeError("the A2A app does not use the WSGI write() callable")



def session_challenge(cookie_name: str, login_url: str | None = None) -> str:
    """The ``WWW-Authenticate`` of a site whose only login is its session cookie.

    No registered HTTP scheme names a form login; this is the ``Cookie``
    scheme of the (expired) draft-broyer-http-cookie-auth, which says where to
    log in and which cookie to send back, so a 401 still carries the challenge
    RFC 9110 requires.
    """
    params = [f"realm={quote_param('a2a')}", f"cookie-name={quote_param(cookie_name)}"]
    if login_url:
        params.append(f"form-action={quote_param(login_url)}")
    return "Cookie " + ", ".join(params)


def login_refusal(app: A2AApp, environ: dict[str, Any], challenge: str) -> Refused | None:
    """``require_login`` for a caller the host's login did not name: the 401, or None to go on.

    Goes on (None) for the public paths (the card, the JWKS: a client reads
    them to learn how to log in), for a caller the app's own authenticators
    (``auth=``) name (recorded in ``environ`` with ``put_identity``, so they
    are not asked twice), and for credentials they refuse (the app answers
    that itself, with the failing scheme's challenge). Otherwise the refusal
    carries the app's challenges, or ``challenge`` (the site's session login)
    when the app declares no scheme.
    """
    try:  # assembled as the app's first request would be (wsgi.multiprocess counts)
        app.start(multiprocess=True if environ.get("wsgi.multiprocess") else None)
    except MemoryStoreInManyProcessesError:
        return None  # the app answers its own 500, which says why
    if app.dispatcher.route(str(environ.get("PATH_INFO") or "/")).public:  # the route table's
        return None
    policy = as_policy(app.settings.auth)
    if policy is None:
        return AuthenticationRequiredError("login required", challenges=[challenge]).refused()
    try:
        found = policy.identify(AuthRequest.from_environ(environ))
    except AuthError:
        return None
    if found is None:
        return policy.required_error().refused()
    put_identity(environ, found)
    return None


def refused_answer(app: A2AApp, environ: dict[str, Any], refused: Refused) -> HostedAnswer:
    """``refused`` written as the app writes its own: in the shape of the path's binding.

    A JSON-RPC error (-31401) on the JSON-RPC path, a ``google.rpc.Status`` under
    the HTTP+JSON prefix, a small JSON object elsewhere.
    """
    try:  # assembled as the app's first request would be (wsgi.multiprocess counts)
        app.start(multiprocess=True if environ.get("wsgi.multiprocess") else None)
    except MemoryStoreInManyProcessesError:
        return call_mounted(app, environ)  # the app answers its own 500, which says why
    method = str(environ.get("REQUEST_METHOD") or "GET").upper()
    bare = HttpRequest(method=method, path=str(environ.get("PATH_INFO") or "/"),
                       headers=request_headers(environ), query=card_query(environ))
    response = app.dispatcher.refuse(bare, refused)
    return call_mounted(lambda _environ, start: respond(response, method, start), environ)


def check_require_login(value: object, callable_form: str) -> None:
    """``require_login`` is True, False or a callable; anything else is a mistake said now."""
    if not isinstance(value, bool) and not callable(value):
        raise TypeError(f"require_login is True, False or a callable {callable_form}, "
                        f"not {type(value).__name__}")


def hosted_answer(app: A2AApp, environ: dict[str, Any], *, anonymous: bool,
                  require_login: bool | Callable[[], HostAnswer],
                  challenge: Callable[[], str]) -> HostedAnswer | HostAnswer:
    """What the mount answers: the app's answer, its ``require_login`` 401, or the host's own.

    The host's own (``require_login()``) answers a caller nobody logged in when
    ``require_login`` is a callable. ``challenge`` makes the session challenge,
    asked only for a refusal.
    """
    if anonymous and require_login is not False:
        refused = login_refusal(app, environ, challenge())
        if refused is not None:
            if require_login is True:
                return refused_answer(app, environ, refused)
            if callable(require_login):
                return require_login()
    return call_mounted(app, environ)
