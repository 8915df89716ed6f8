"""An :class:`~a2a_wsgi._app.A2AApp` served from Flask routes, behind the site's login.

    from a2a_wsgi.frameworks.flask import mount

    mount(flask_app, "/a2a", a2a_app, identity=lambda: f"user:{current_user.get_id()}"
          if current_user.is_authenticated else None)

The routes run as any other view of the site: its ``before_request`` hooks,
its session and its login extension (Flask-Login's ``current_user``) come
first, and ``identity()`` (called inside the request context) names the
caller. That identity wins over the app's own authenticators
(``docs/security.md``); without one they run as usual. Streams (SSE) go out
as a streamed ``Response`` that closes the app's stream when Flask closes it.
Needs the ``flask`` extra.

``require_login`` turns away callers nobody logged in (neither the site nor
the app's ``auth=``), but for the card and the JWKS: ``True`` answers 401 in
the caller's binding with the app's challenges (a session-only site's:
``Cookie`` naming ``SESSION_COOKIE_NAME``), a callable answers with the
site's own response, called in the request context (Flask-Login's
``login_manager.unauthorized``: its login redirect, or its 401). Without it,
a mount without ``auth=`` is open to anonymous callers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import flask
from flask.typing import ResponseReturnValue

from ._hosted import (
    HostedAnswer,
    check_require_login,
    hosted_answer,
    mounted_environ,
    session_challenge,
    wsgi_str,
)

if TYPE_CHECKING:
    from a2a_core.auth import Principal

    from .._app import A2AApp

__all__ = ["FlaskIdentity", "LoginRequired", "mount"]

#: Who the site says the caller is, asked inside the request context; None for nobody.
FlaskIdentity = Callable[[], "str | Principal | None"]

#: ``require_login``: False (anonymous callers reach the app), True (401), or the
#: site's own answer to an anonymous caller, called in the request context.
LoginRequired = bool | Callable[[], ResponseReturnValue]

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def mount(site: flask.Flask | flask.Blueprint, prefix: str, app: A2AApp, *,
          identity: FlaskIdentity | None = None, require_login: LoginRequired = False,
          endpoint: str = "a2a") -> None:
    """Serve ``app`` at ``prefix`` (``"/a2a"``; the card at ``/a2a/.well-known/...``).

    On a blueprint the prefix is below the blueprint's own ``url_prefix``.

    ``identity=None`` records no caller: the app's own authenticators decide alone.
    ``require_login``: see the module.
    """
    check_require_login(require_login, "returning a response")
    prefix = "/" + prefix.strip("/")

    def view(a2a_path: str = "") -> ResponseReturnValue:
        request = flask.request
        who = identity() if identity is not None else None
        # The rest of the path as captured (decoded), back in the WSGI spelling; what precedes
        # it (a blueprint's prefix too) becomes the mount.
        environ = mounted_environ(request.environ, sub_path=wsgi_str(a2a_path),
                                  stream=request.stream, identity=who)
        answer = hosted_answer(app, environ, anonymous=who is None, require_login=require_login,
                               challenge=lambda: session_challenge(
                                   str(flask.current_app.config["SESSION_COOKIE_NAME"])))
        if not isinstance(answer, HostedAnswer):
            return answer  # the site's own answer to a caller nobody logged in
        return flask.Response(answer.body, status=answer.status, headers=answer.headers,
                              direct_passthrough=answer.streamed)

    site.add_url_rule(prefix + "/", endpoint, view, methods=_METHODS,
                      provide_automatic_options=False)
    site.add_url_rule(prefix + "/<path:a2a_path>", endpoint, view, methods=_METHODS,
                      provide_automatic_options=False)
