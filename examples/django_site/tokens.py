"""The site's token login for programs: ``Authorization: Bearer <token>`` names a user.

A token is the user's id signed with the site's ``SECRET_KEY`` (Django's
``signing``), valid for a week; ``POST /accounts/token/`` with ``username``
and ``password`` issues one. :class:`TokenMiddleware` sets ``request.user``
from it for every view, the agent's included; :func:`token_identity` is the
same check for the agent's card-declared bearer scheme, so a token the
middleware refused is refused by the agent with a 401 challenge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import authenticate, get_user_model
from django.core import signing
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

SALT = "examples.django_site.tokens"
MAX_AGE = 7 * 24 * 3600


def issue(user: Any) -> str:
    return signing.dumps(user.pk, salt=SALT)


def user_of(token: str) -> Any:
    """The active user a token names, or None (bad signature, expired, user gone)."""
    try:
        pk = signing.loads(token, salt=SALT, max_age=MAX_AGE)
    except signing.BadSignature:
        return None
    return get_user_model().objects.filter(pk=pk, is_active=True).first()


def token_identity(token: str) -> str | None:
    """The agent's identity for a token: ``user:<pk>``, as the session login gives it."""
    user = user_of(token)
    return f"user:{user.pk}" if user is not None else None


class TokenMiddleware:
    """``request.user`` from a valid bearer token (the session's user otherwise)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            user = user_of(token.strip())
            if user is not None:
                request.user = user
        return self.get_response(request)


@csrf_exempt  # programs post credentials, not a browser's session
@require_POST
def token_view(request: HttpRequest) -> HttpResponse:
    user = authenticate(request, username=request.POST.get("username"),
                        password=request.POST.get("password"))
    if user is None:
        return JsonResponse({"error": "wrong username or password"}, status=403)
    return JsonResponse({"token": issue(user)})
