"""A Flask site whose agents sit behind its login: ``require_login`` of ``mount``.

Served by gunicorn in tests/auth/test_require_login.py. Flask-Login with the
users ``alice`` and ``bob`` (password ``$DEMO_PASSWORD``) is the site's only
login; programs get a token from ``POST /token`` (itsdangerous'
``URLSafeTimedSerializer``, as Flask signs its own session), which only the
agent's own ``auth=`` checks. The mounts are those of login_django_site.py:
``/open``, ``/members`` (``require_login=True``), ``/portal``
(``require_login=login_manager.unauthorized``: Flask-Login's login redirect)
and ``/a2a`` (``auth=`` bearer and ``require_login=True``).
"""

from __future__ import annotations

import os
from typing import Any

import flask
from flask_login import LoginManager, UserMixin, current_user, login_user
from greeter_agent import Greeter
from itsdangerous import BadSignature, URLSafeTimedSerializer

from a2a_wsgi import A2AApp
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.frameworks.flask import mount


class User(UserMixin):
    def __init__(self, user_id: str) -> None:
        self.id = user_id


USERS = {name: User(name) for name in ("alice", "bob")}

site = flask.Flask(__name__)
site.secret_key = "test-only-not-secret"
signer = URLSafeTimedSerializer(site.secret_key, salt="login_flask_site.tokens")
login_manager = LoginManager(site)
login_manager.login_view = "login"


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    return USERS.get(user_id)


def _checked_user() -> User | None:
    user = USERS.get(flask.request.form.get("username", ""))
    if user is None or flask.request.form.get("password") != os.environ["DEMO_PASSWORD"]:
        return None
    return user


@site.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if flask.request.method == "GET":
        return "the login form"
    user = _checked_user()
    if user is None:
        return "no", 403
    login_user(user)
    return "in"


@site.post("/token")
def token() -> Any:
    user = _checked_user()
    if user is None:
        return {"error": "wrong username or password"}, 403
    return {"token": signer.dumps(user.id)}


def token_identity(token: str) -> str | None:
    try:
        name = signer.loads(token, max_age=3600)
    except BadSignature:
        return None
    return f"user:{name}" if name in USERS else None


def site_identity() -> str | None:
    return f"user:{current_user.get_id()}" if current_user.is_authenticated else None


plain = A2AApp(Greeter())
tokens = A2AApp(Greeter(), auth=BearerAuthenticator(token_identity))

mount(site, "/open", plain, identity=site_identity, endpoint="open")
mount(site, "/members", plain, identity=site_identity, require_login=True, endpoint="members")
mount(site, "/portal", plain, identity=site_identity,
      require_login=login_manager.unauthorized, endpoint="portal")
mount(site, "/a2a", tokens, identity=site_identity, require_login=True, endpoint="a2a")
