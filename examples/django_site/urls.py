"""The site's URLs: Django's login, the token endpoint, and the agent under /a2a/."""

from __future__ import annotations

from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from a2a_wsgi.frameworks.django import a2a_urls

from .agent import a2a_app
from .tokens import token_view


def index(request: HttpRequest) -> HttpResponse:
    who = request.user.get_username() if request.user.is_authenticated else "nobody"
    return HttpResponse(f"A Django site (logged in: {who}); the agent lives under /a2a/.",
                        content_type="text/plain")


urlpatterns = [
    path("", index),
    path("accounts/login/", LoginView.as_view()),
    path("accounts/token/", token_view),
    # Behind every middleware above; request.user becomes the caller ("user:<pk>").
    path("a2a/", include(a2a_urls(a2a_app))),
]
