"""An :class:`~a2a_wsgi.app.A2AApp` served from Django's URLconf, behind Django's middleware.

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

Streams (SSE) go out as ``StreamingHttpResponse``; Django closes the stream
when the response is closed (a client gone, a worker stopping). Needs the
``django`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import URLPattern, re_path
from django.views.decorators.csrf import csrf_exempt

from ._hosted import call_mounted, mounted_environ, wsgi_str

if TYPE_CHECKING:
    from ..app import A2AApp

__all__ = ["IdentityHook", "a2a_urls", "a2a_view", "user_identity"]

#: Who the host says the caller is: ``identity(request)``, None for nobody.
IdentityHook = Callable[[HttpRequest], object | None]

#: The URL keyword the pattern captures: the path below the mount.
SUB_PATH = "a2a_path"


def user_identity(request: HttpRequest) -> str | None:
    """``"user:<pk>"`` of an authenticated ``request.user`` (set by Django's middleware)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    return f"user:{user.pk}"


def a2a_view(app: A2AApp, *, identity: IdentityHook | None = user_identity
             ) -> Callable[..., HttpResponse]:
    """A Django view answering every path below its pattern with ``app``.

    Its pattern must capture the rest of the path as ``a2a_path``
    (:func:`a2a_urls` does); ``identity=None`` records no caller (the app's
    own authenticators decide alone).
    """

    def view(request: HttpRequest, **kwargs: str) -> HttpResponse:
        who = identity(request) if identity is not None else None
        environ = mounted_environ(request.META, sub_path=wsgi_str(kwargs.get(SUB_PATH, "")),
                                  stream=_body_stream(request), identity=who)
        answer = call_mounted(app, environ)
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
             name: str = "a2a") -> list[URLPattern]:
    """URL patterns for ``include()``: the whole subtree below the prefix is the agent's."""
    return [re_path(rf"^(?P<{SUB_PATH}>.*)\Z", a2a_view(app, identity=identity), name=name)]


def _body_stream(request: HttpRequest) -> Any:
    """The body as the app should read it.

    With a Content-Length, the request itself: Django's stream, or the bytes
    a middleware already read through ``request.body``. Without one (chunked),
    Django reads nothing, so the server's own stream is left to the app.
    """
    if request.META.get("CONTENT_LENGTH"):
        return request
    return request.META.get("wsgi.input")
