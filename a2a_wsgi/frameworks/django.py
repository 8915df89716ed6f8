"""An :class:`~a2a_wsgi._app.A2AApp` served from Django's URLconf, behind Django's middleware.

    from a2a_wsgi.frameworks.django import a2a_urls

    urlpatterns = [path("a2a/", include(a2a_urls(a2a_app)))]

Every request under the prefix reaches the app through Django: sessions,
``AuthenticationMiddleware`` and the project's own middleware run first, and
``identity(request)`` (default :func:`user_identity`: ``"user:<pk>"`` of
``request.user``) names the caller. That identity wins over the app's own
authenticators (``docs/security.md``); without one they run as usual, so an
``auth=`` on the app still declares the card's schemes and refuses anonymous
callers with 401 and ``WWW-Authenticate``. CSRF does not apply: callers are
programs presenting credentials, and the view is ``csrf_exempt``.

``require_login`` turns away callers nobody logged in (neither the site nor
the app's ``auth=``), but for the card and the JWKS: ``True`` answers 401 in
the caller's binding with the app's challenges (a session-only site's:
``Cookie`` naming ``SESSION_COOKIE_NAME`` and ``LOGIN_URL``), a callable
``require_login(request)`` answers with its own response (e.g.
``redirect_to_login``). Without it, a mount without ``auth=`` is open to
anonymous callers.

Streams (SSE) go out as ``StreamingHttpResponse``; Django closes the stream
when the response is closed (a client gone, a worker stopping). Needs the
``django`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import resolve_url
from django.urls import NoReverseMatch, URLPattern, re_path
from django.views.decorators.csrf import csrf_exempt

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

__all__ = ["IdentityHook", "LoginRequired", "a2a_urls", "a2a_view", "user_identity"]

#: Who the host says the caller is: ``identity(request)``, None for nobody.
IdentityHook = Callable[[HttpRequest], "str | Principal | None"]

#: ``require_login``: False (anonymous callers reach the app), True (401), or the
#: site's own answer to an anonymous caller, ``require_login(request)``.
LoginRequired = bool | Callable[[HttpRequest], HttpResponse]

#: The URL keyword the pattern captures: the path below the mount.
SUB_PATH = "a2a_path"


def user_identity(request: HttpRequest) -> str | None:
    """``"user:<pk>"`` of an authenticated ``request.user`` (set by Django's middleware)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    return f"user:{user.pk}"


def a2a_view(app: A2AApp, *, identity: IdentityHook | None = user_identity,
             require_login: LoginRequired = False) -> Callable[..., HttpResponse]:
    """A Django view answering every path below its pattern with ``app``.

    Its pattern must capture the rest of the path as ``a2a_path``
    (:func:`a2a_urls` does); ``identity=None`` records no caller (the app's
    own authenticators decide alone). ``require_login``: see the module.
    """
    check_require_login(require_login, "(request) -> HttpResponse")

    def view(request: HttpRequest, **kwargs: str) -> HttpResponse:
        who = identity(request) if identity is not None else None
        environ = mounted_environ(request.META, sub_path=wsgi_str(kwargs.get(SUB_PATH, "")),
                                  stream=_body_stream(request), identity=who)
        own = require_login if isinstance(require_login, bool) else partial(require_login, request)
        answer = hosted_answer(app, environ, anonymous=who is None, require_login=own,
                               challenge=lambda: session_challenge(settings.SESSION_COOKIE_NAME,
                                                                   _login_url()))
        if not isinstance(answer, HostedAnswer):
            return answer  # the site's own answer to a caller nobody logged in
        response: HttpResponse
        if answer.streamed:
            response = StreamingHttpResponse(answer.body, status=answer.status_code,
                                             reason=answer.reason)
        else:
            response = HttpResponse(answer.whole_body(), status=answer.status_code,
                                    reason=answer.reason)
        for name, value in answer.merged_headers().items():
            response[name] = value
        return response

    # Callers are programs presenting credentials, not a browser's forms.
    return cast("Callable[..., HttpResponse]", csrf_exempt(view))


def a2a_urls(app: A2AApp, *, identity: IdentityHook | None = user_identity,
             require_login: LoginRequired = False, name: str = "a2a") -> list[URLPattern]:
    """URL patterns for ``include()``: the whole subtree below the prefix is the agent's."""
    view = a2a_view(app, identity=identity, require_login=require_login)
    return [re_path(rf"^(?P<{SUB_PATH}>.*)\Z", view, name=name)]


def _login_url() -> str | None:
    """The site's ``LOGIN_URL`` as a path (a URL name reversed), None when it names nothing."""
    try:
        return str(resolve_url(settings.LOGIN_URL))
    except NoReverseMatch:
        return None


def _body_stream(request: HttpRequest) -> Any:
    """The body as the app should read it.

    With a Content-Length, the request itself: Django's stream, or the bytes
    a middleware already read through ``request.body``. Without one (chunked),
    Django reads nothing, so the server's own stream is left to the app.
    """
    if request.META.get("CONTENT_LENGTH"):
        return request
    return request.META.get("wsgi.input")
