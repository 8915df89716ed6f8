"""A Django project with real users and sessions, the A2A app under ``/a2a`` behind them.

Served by gunicorn in tests/auth/test_app_framework_identity.py (Django's settings are
process-wide, so it runs in its own process). ``$DJANGO_SITE_DB`` names the SQLite file;
importing the module migrates it and creates the user ``dora`` (password ``pw-dora``).
``POST /login`` logs in with Django's own ``authenticate``/``login``; the A2A app is
wrapped by ``django_identity``, the pattern docs/security.md gives: load the session's
user as Django's AuthenticationMiddleware does, and ``put_identity`` it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="test-only-not-secret",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes",
                    "django.contrib.sessions"],
    MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware",
                "django.contrib.auth.middleware.AuthenticationMiddleware"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                           "NAME": os.environ["DJANGO_SITE_DB"]}},
    DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    USE_TZ=True,
)
django.setup()

from django.contrib.auth import authenticate, get_user, get_user_model, login  # noqa: E402
from django.core.handlers.wsgi import WSGIRequest  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from werkzeug.middleware.dispatcher import DispatcherMiddleware  # noqa: E402

from a2a_core.models import AgentCard, AgentSkill, Message  # noqa: E402
from a2a_wsgi import A2AApp, Agent, AgentContext, put_identity, reply  # noqa: E402
from a2a_wsgi.auth import BearerAuthenticator  # noqa: E402
from a2a_wsgi.settings import CardSettings  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)
if not get_user_model().objects.filter(username="dora").exists():
    get_user_model().objects.create_user("dora", password="pw-dora")

StartResponse = Callable[..., Any]


def login_view(request: HttpRequest) -> HttpResponse:
    user = authenticate(request, username=request.POST.get("username"),
                        password=request.POST.get("password"))
    if user is None:
        return HttpResponse("no", status=403)
    login(request, user)
    return HttpResponse("in")


urlpatterns = [path("login", login_view)]


class WhoAgent(Agent):
    name = "Who Agent"
    description = "Says who called it"
    skills = [AgentSkill(id="who", name="Who", description="Names the caller", tags=["auth"])]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        return reply(f"caller={ctx.identity}")


def django_identity(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """The session's user as the caller's identity (docs/security.md, Framework authentication)."""
    sessions = import_module(settings.SESSION_ENGINE).SessionStore

    def middleware(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        request = WSGIRequest(environ)  # reads the cookies, not the body
        request.session = sessions(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
        user = get_user(request)  # type: ignore[arg-type]
        if user.is_authenticated:
            put_identity(environ, f"user:{user.pk}")
        return app(environ, start_response)

    return middleware


a2a_app = A2AApp(
    WhoAgent(),
    auth=BearerAuthenticator({"tok-agent": "agent-7"}.get),
    card=CardSettings(extended_card=lambda ctx: AgentCard(name="Members only")),
)
application = DispatcherMiddleware(get_wsgi_application(), {"/a2a": django_identity(a2a_app)})
