"""A Flask site with Flask-Login whose users are the agent's callers.

    .venv/bin/pip install -e '.[flask]' flask-login
    gunicorn -k gthread -w 2 --threads 8 examples.flask_site:site

The demo users ``alice`` and ``bob`` have the password ``$DEMO_PASSWORD``
(default ``demo-pass``). Log in with a form post to ``/login`` (``username``,
``password``; the session cookie is then the agent's caller), or get a token
for programs with ``POST /token`` (the same fields) and send
``Authorization: Bearer <token>``. The agent is at ``/a2a/``, its card at
``/a2a/.well-known/agent-card.json``. Set ``FLASK_SECRET_KEY`` in production:
it signs the sessions and the tokens, and every worker must share it.
"""

from __future__ import annotations

import os

import flask
from flask_login import LoginManager, UserMixin, current_user, login_user
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.security import check_password_hash, generate_password_hash

from a2a_core._service import CallContext
from a2a_core.models import AgentCard
from a2a_wsgi import A2AApp
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.frameworks.flask import mount
from a2a_wsgi.settings import CardSettings

from .caller_agent import CallerAgent

TOKEN_MAX_AGE = 7 * 24 * 3600


class User(UserMixin):
    def __init__(self, user_id: str, password: str) -> None:
        self.id = user_id
        self.password_hash = generate_password_hash(password)


_password = os.environ.get("DEMO_PASSWORD", "demo-pass")
USERS = {name: User(name, _password) for name in ("alice", "bob")}

site = flask.Flask(__name__)
site.secret_key = os.environ.get("FLASK_SECRET_KEY", "example-only-not-secret")
tokens = URLSafeTimedSerializer(site.secret_key, salt="examples.flask_site.tokens")
login_manager = LoginManager(site)
login_manager.login_view = "login"  # where login_manager.unauthorized() sends a browser


def user_of_token(token: str) -> User | None:
    """The user a token names, or None (bad signature, expired, user gone)."""
    try:
        name = tokens.loads(token, max_age=TOKEN_MAX_AGE)
    except BadSignature:
        return None
    return USERS.get(name) if isinstance(name, str) else None


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    return USERS.get(user_id)


@login_manager.request_loader
def load_user_from_token(request: flask.Request) -> User | None:
    """Flask-Login's login for programs: ``Authorization: Bearer <token>``."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return user_of_token(token.strip()) if scheme.lower() == "bearer" else None


def _checked_user() -> User | None:
    user = USERS.get(flask.request.form.get("username", ""))
    if user is None or not check_password_hash(user.password_hash,
                                               flask.request.form.get("password", "")):
        return None
    return user


@site.route("/login", methods=["GET", "POST"])
def login() -> flask.typing.ResponseReturnValue:
    if flask.request.method == "GET":
        return ('<form method="post"><input name="username"><input name="password" '
                'type="password"><button>Log in</button></form>')
    user = _checked_user()
    if user is None:
        return "wrong username or password", 403
    login_user(user)
    return flask.redirect("/")


@site.post("/token")
def token() -> flask.typing.ResponseReturnValue:
    user = _checked_user()
    if user is None:
        return {"error": "wrong username or password"}, 403
    return {"token": tokens.dumps(user.id)}


@site.get("/")
def index() -> str:
    who = current_user.id if current_user.is_authenticated else "nobody"
    return f"A Flask site (logged in: {who}); the agent lives under /a2a/."


def site_identity() -> str | None:
    """The agent's caller: Flask-Login's user (session or token), as ``user:<name>``."""
    return f"user:{current_user.get_id()}" if current_user.is_authenticated else None


def token_identity(token: str) -> str | None:
    """The agent's own bearer check, the site's: a token Flask-Login refused is refused here."""
    user = user_of_token(token)
    return f"user:{user.id}" if user is not None else None


def members_card(ctx: CallContext) -> AgentCard:
    return AgentCard(name="Caller Agent (members)", description=f"For {ctx.identity}")


a2a_app = A2AApp(
    CallerAgent(),
    base_url=os.environ.get("A2A_BASE_URL"),
    auth=BearerAuthenticator(token_identity,
                                          description="a token from POST /token"),
    push=True,
    card=CardSettings(extended_card=members_card),
)
mount(site, "/a2a", a2a_app, identity=site_identity)
