"""A Django site whose agents sit behind its login: ``require_login`` of ``a2a_urls``.

Served by gunicorn in tests/auth/test_require_login.py (Django's settings are
process-wide). ``$DJANGO_SITE_DB`` names the SQLite file; the first worker to
start migrates it and creates ``alice`` (``user:1``) and ``bob`` (``user:2``),
password ``$DEMO_PASSWORD``. Sessions are the only login of the site itself;
programs get a token from ``POST /accounts/token/`` (``django.core.signing``,
``:``-separated), which only the agent's own ``auth=`` checks.

Mounts of one agent that greets its caller and names the identity's type:

* ``/open/``: no ``auth=``, no ``require_login``: anonymous callers get through;
* ``/members/``: ``require_login=True``: 401 with the session challenge;
* ``/portal/``: ``require_login=`` Django's ``redirect_to_login``;
* ``/a2a/``: ``auth=`` bearer (the signed token) and ``require_login=True``.
"""

from __future__ import annotations

import fcntl
import os

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
    LOGIN_URL="/accounts/login/",
)
django.setup()

from django.contrib.auth import authenticate, get_user_model, login  # noqa: E402
from django.contrib.auth.views import redirect_to_login  # noqa: E402
from django.core import signing  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse, JsonResponse  # noqa: E402
from django.urls import include, path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402
from greeter_agent import Greeter  # noqa: E402

from a2a_wsgi import A2AApp  # noqa: E402
from a2a_wsgi.auth import BearerAuthenticator  # noqa: E402
from a2a_wsgi.frameworks.django import a2a_urls  # noqa: E402

SALT = "login_django_site.tokens"


def _bootstrap() -> None:
    """Migrate and create the users once, whichever worker comes first."""
    with open(f"{os.environ['DJANGO_SITE_DB']}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        call_command("migrate", verbosity=0, interactive=False)
        users = get_user_model().objects
        for name in ("alice", "bob"):
            if not users.filter(username=name).exists():
                users.create_user(name, password=os.environ["DEMO_PASSWORD"])


_bootstrap()


def token_identity(token: str) -> str | None:
    """The agent's bearer check: a token ``POST /accounts/token/`` signed names ``user:<pk>``."""
    try:
        pk = signing.loads(token, salt=SALT, max_age=3600)
    except signing.BadSignature:
        return None
    return f"user:{pk}"


@csrf_exempt
def login_view(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponse("the login form", content_type="text/plain")
    user = authenticate(request, username=request.POST.get("username"),
                        password=request.POST.get("password"))
    if user is None:
        return HttpResponse("no", status=403)
    login(request, user)
    return HttpResponse("in")


@csrf_exempt
def token_view(request: HttpRequest) -> HttpResponse:
    user = authenticate(request, username=request.POST.get("username"),
                        password=request.POST.get("password"))
    if user is None:
        return JsonResponse({"error": "wrong username or password"}, status=403)
    return JsonResponse({"token": signing.dumps(user.pk, salt=SALT)})


plain = A2AApp(Greeter())
tokens = A2AApp(Greeter(), auth=BearerAuthenticator(token_identity))

urlpatterns = [
    path("accounts/login/", login_view),
    path("accounts/token/", token_view),
    path("open/", include(a2a_urls(plain, name="open"))),
    path("members/", include(a2a_urls(plain, require_login=True, name="members"))),
    path("portal/", include(a2a_urls(
        plain, require_login=lambda request: redirect_to_login(request.get_full_path()),
        name="portal"))),
    path("a2a/", include(a2a_urls(tokens, require_login=True, name="a2a"))),
]

application = get_wsgi_application()
