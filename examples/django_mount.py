"""An A2A agent mounted under ``/a2a`` beside a Django project, by plain WSGI composition.

    .venv/bin/pip install -e '.[django]'             # once: the django extra
    gunicorn -k gthread examples.django_mount:application

In a real project the settings live in settings.py and this wiring goes in
wsgi.py: wrap Django's application with DispatcherMiddleware, exactly as below.
The library imports nothing from Django.
"""

from __future__ import annotations

import os

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from a2a_wsgi import A2AApp, put_metadata

from .echo import EchoAgent

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="example-only-not-secret",
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        MIDDLEWARE=[],
        INSTALLED_APPS=[],
    )
    django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402  (after settings)


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse("A Django site; the Echo Agent lives under /a2a/.")


urlpatterns = [path("", index)]

a2a_app = A2AApp(EchoAgent(), base_url=os.environ.get("A2A_BASE_URL"))


def tenant_metadata(app: A2AApp):  # type: ignore[no-untyped-def]
    """A WSGI middleware giving the agent per-request metadata (the Django-side equivalent
    of a Django middleware: requests to /a2a never reach Django's middleware stack)."""

    def middleware(environ, start_response):  # type: ignore[no-untyped-def]
        put_metadata(environ, {"tenant": environ.get("HTTP_X_TENANT", "public")})
        return app(environ, start_response)

    return middleware


#: The combined WSGI app: Django for everything but /a2a.
application = DispatcherMiddleware(get_wsgi_application(), {"/a2a": tenant_metadata(a2a_app)})
