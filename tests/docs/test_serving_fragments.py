"""docs/serving.md's Python fragments, each run in its complete form over HTTP.

A fragment names things the page leaves to the reader (``a2a_app``, ``flask_app``, the
site's ``verify``). Each test writes a program (:mod:`doc_programs`): what the fragment
needs, the fragment exactly as the page shows it, then calls over HTTP to the served result
with the real client or ``requests``; what it prints must be what the test expects.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_pages import block
from doc_programs import CLIENT, program, run_program

pytestmark = pytest.mark.slow

#: An agent that answers with the tenant metadata and the caller a middleware gave it.
TENANT_AGENT = """
from a2a_wsgi import A2AApp, Agent, reply

def _answer(message, context):
    who = getattr(context.identity, "identity", context.identity)  # (a Principal or a name)
    return reply(f"{(context.metadata or {}).get('tenant')} {who}: {message.text}")

a2a_app = A2AApp(Agent.from_function(_answer, name="Tenant Agent"))
"""

#: A Django project in this process: its URLs are the program's own ``urlpatterns``.
DJANGO = """
import django
from django.conf import settings

settings.configure(
    DEBUG=False, SECRET_KEY="docs-test-only", ALLOWED_HOSTS=["*"], ROOT_URLCONF="__main__",
    MIDDLEWARE=MIDDLEWARE, INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "site.sqlite3"}},
)
django.setup()
from django.core.wsgi import get_wsgi_application
"""

#: Calls the site's agent at /a2a/ as alice (the test's site login), then as nobody; prints
#: whether the card sent the client to /a2a/, and the answer.
AS_ALICE_THEN_NOBODY = """
with serve({site}, "127.0.0.1:0") as handle:
    for headers in ({{"X-User": "alice"}}, {{}}):
        with A2AClient(handle.url + "/a2a/", headers=headers) as client:
            print(client.endpoint.url == handle.url + "/a2a/",
                  reply_text(client.send_message("hi")))
"""


def fragment(heading: str, containing: str = "") -> str:
    return block("serving.md", heading, containing=containing).text


def test_first_app_advertises_its_base_url(tmp_path: Path) -> None:
    lines = run_program(program(fragment("Serving an agent"), CLIENT, """
        with serve(app, "127.0.0.1:0") as handle:
            card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=10).json()
            print(*[i["url"] for i in card["supportedInterfaces"]])
        """), tmp_path)
    base = "https://agents.example.com/echo/"
    assert lines == [f"{base} {base} {base}rest"]


def test_options_example_builds_and_serves_its_settings(tmp_path: Path) -> None:
    """MyAgent and the site's ``tokens`` are the reader's; the rest is the page's."""
    lines = run_program(program("""
        from examples.echo import EchoAgent as MyAgent
        tokens = {"t0ken": "alice"}
        """, fragment("Options"), CLIENT, """
        print(app.settings.limits.max_parts, app.settings.streams.heartbeat_interval,
              app.settings.card.trusted_hosts)
        with serve(app, "127.0.0.1:0") as handle:
            card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=10).json()
            print(card["supportedInterfaces"][0]["url"], card["capabilities"]["pushNotifications"])
            for token in ("t0ken", "wrong"):
                with A2AClient(handle.url + "/", endpoint=handle.url + "/", version="1.0",
                               binding="JSONRPC", auth=token) as client:
                    try:
                        print(token, reply_text(client.send_message("hi")))
                    except Exception as refused:
                        print(token, type(refused).__name__)
        """), tmp_path)
    assert lines[:2] == ["32 10 ('agents.example.com',)", "https://agents.example.com/ True"]
    assert lines[2] == "t0ken hi"
    assert lines[3].startswith("wrong ") and lines[3] != "wrong hi"
    assert (tmp_path / "tasks.db").exists()  # store="sqlite:///tasks.db", in the folder it ran in


def test_serve_for_scripts_prints_its_url(tmp_path: Path) -> None:
    lines = run_program(program("from examples.echo import app", fragment("Running it", "serve(")),
                tmp_path)
    assert len(lines) == 1 and re.fullmatch(r"http://127\.0\.0\.1:\d+", lines[0]), lines


def test_django_a2a_urls_fragment_serves_the_sites_user(tmp_path: Path) -> None:
    """``a2a_urls`` behind the site's middleware: the ``request.user`` it sets is the agent's
    caller (the site's login stands in for Django's session login)."""
    lines = run_program(program("""
        MIDDLEWARE = ["__main__.HeaderLogin"]
        """, DJANGO, """
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from examples.caller_agent import CallerAgent
        from a2a_wsgi import A2AApp

        call_command("migrate", verbosity=0)
        User.objects.create_user("alice")

        class HeaderLogin:  # (the site's own login, for the test: X-User names the user)
            def __init__(self, get_response):
                self.get_response = get_response

            def __call__(self, request):
                name = request.headers.get("X-User")
                if name:
                    request.user = User.objects.get(username=name)
                return self.get_response(request)

        a2a_app = A2AApp(CallerAgent())
        """, fragment("Inside a Django or Flask site, behind its login", "a2a_urls"), CLIENT,
        AS_ALICE_THEN_NOBODY.format(site="get_wsgi_application()")), tmp_path)
    assert lines == ["True hello, user:1: hi", "True hello, anonymous: hi"]


def test_flask_mount_fragment_serves_flask_logins_user(tmp_path: Path) -> None:
    lines = run_program(program("""
        import flask
        from flask_login import LoginManager, UserMixin
        from examples.caller_agent import CallerAgent
        from a2a_wsgi import A2AApp

        site = flask.Flask(__name__)
        site.secret_key = "docs-test-only"
        logins = LoginManager(site)

        class User(UserMixin):
            def __init__(self, name):
                self.id = name

        @logins.request_loader
        def header_login(request):  # (the site's own login, for the test)
            name = request.headers.get("X-User")
            return User(name) if name else None

        a2a_app = A2AApp(CallerAgent())
        """, fragment("Inside a Django or Flask site, behind its login", "mount("), CLIENT,
        AS_ALICE_THEN_NOBODY.format(site="site")), tmp_path)
    assert lines == ["True hello, user:alice: hi", "True hello, anonymous: hi"]


def test_dispatcher_fragment_mounts_beside_flask_and_django(tmp_path: Path) -> None:
    lines = run_program(program("""
        import flask
        from examples.echo import app as a2a_app

        flask_app = flask.Flask(__name__)
        flask_app.get("/")(lambda: "the site")
        MIDDLEWARE = []
        urlpatterns = []
        """, DJANGO, fragment("Mounting beside Flask or Django"), CLIENT, """
        for site in (flask_app, application):
            with serve(site, "127.0.0.1:0") as handle:
                card = requests.get(handle.url + "/a2a/.well-known/agent-card.json",
                                    timeout=10).json()
                with A2AClient(handle.url + "/a2a/") as client:
                    print(card["supportedInterfaces"][0]["url"] == handle.url + "/a2a/",
                          reply_text(client.send_message("hi")),
                          requests.get(handle.url + "/", timeout=10).status_code)
        """), tmp_path)
    # The Flask site answers its own root; the empty Django project answers 404 there.
    assert lines == ["True hi 200", "True hi 404"]


def test_plain_wsgi_middleware_fragment_sets_url_metadata_and_identity(tmp_path: Path) -> None:
    lines = run_program(program(TENANT_AGENT, """
        def verify(header):  # (the site's credential check: "Bearer <name>" for the test)
            return header.removeprefix("Bearer ") if header else None

        def django_application(environ, start_response):  # (the site)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"the site"]
        """, fragment("Plain WSGI middleware (any server, and Django projects)"), CLIENT, """
        with serve(application, "127.0.0.1:0") as handle:
            agent = handle.url + "/a2a/"
            card = requests.get(agent + ".well-known/agent-card.json", timeout=10,
                                headers={"X-Tenant": "acme"}).json()
            print(card["supportedInterfaces"][0]["url"])
            with A2AClient(agent, endpoint=agent, version="1.0", binding="JSONRPC",
                           headers={"X-Tenant": "acme", "Authorization": "Bearer alice"}) as c:
                print(reply_text(c.send_message("hi")))
            with A2AClient(agent, endpoint=agent, version="1.0", binding="JSONRPC") as c:
                print(reply_text(c.send_message("hi")))
            print(requests.get(handle.url + "/", timeout=10).text)
        """), tmp_path)
    assert lines == ["https://acme.example.com/a2a/", "acme alice: hi", "public None: hi",
                     "the site"]


def test_django_middleware_fragment_reaches_the_agent_through_a2a_urls(tmp_path: Path) -> None:
    lines = run_program(program(TENANT_AGENT, fragment("Django middleware"), """
        MIDDLEWARE = ["__main__.A2ATenantMiddleware"]
        """, DJANGO, """
        from django.urls import include, path
        from a2a_wsgi.frameworks.django import a2a_urls

        urlpatterns = [path("a2a/", include(a2a_urls(a2a_app, identity=None)))]
        """, CLIENT, """
        with serve(get_wsgi_application(), "127.0.0.1:0") as handle:
            for headers in ({"X-Tenant": "acme"}, {}):
                with A2AClient(handle.url + "/a2a/", headers=headers) as client:
                    print(reply_text(client.send_message("hi")))
        """), tmp_path)
    assert lines == ["acme None: hi", "public None: hi"]


def test_schema_error_shown_is_what_a_card_without_a_flow_raises() -> None:
    """The "Options" page shows the start-up error of an OAuth2 scheme with no flow."""
    from a2a_core.models import OAuth2SecurityScheme, OAuthFlows
    from a2a_wsgi import A2AApp, Agent
    from a2a_wsgi._card_schema import CardSchemaError
    from a2a_wsgi.settings import CardSettings

    shown = block("serving.md", "Options", language="",
                  containing="will not start").text
    app = A2AApp(Agent.from_function(lambda message, context: "hi", name="Corp"),
                 card=CardSettings(overrides={"security_schemes": {
                     "corp": OAuth2SecurityScheme(flows=OAuthFlows())}}))
    with pytest.raises(CardSchemaError) as raised:
        app.start()
    assert set(shown.splitlines()) <= set(str(raised.value).splitlines())
