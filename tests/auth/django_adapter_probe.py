"""Django's test client against ``a2a_urls`` behind real middleware; prints what it saw (JSON).

Run by tests/auth/test_framework_adapters.py in its own interpreter (Django's
settings are process-wide). A middleware reads ``request.body`` before the
view, as some projects' do; CSRF is enforced for the site's other views; the
site is served under the script prefix ``/site``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import django
from django.conf import settings

settings.configure(
    DEBUG=False, SECRET_KEY="test-only", ALLOWED_HOSTS=["testserver"], ROOT_URLCONF=__name__,
    MIDDLEWARE=["django.middleware.csrf.CsrfViewMiddleware", f"{__name__}.read_body"],
    INSTALLED_APPS=[], USE_TZ=True, FORCE_SCRIPT_NAME="/site",
)
django.setup()

from app_auth_support import WhoAgent  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import include, path  # noqa: E402

from a2a_wsgi import A2AApp  # noqa: E402
from a2a_wsgi.auth import AuthPolicy, BasicAuthenticator, BearerAuthenticator  # noqa: E402
from a2a_wsgi.frameworks.django import a2a_urls  # noqa: E402
from a2a_wsgi.settings import CardSettings  # noqa: E402

seen: dict[str, Any] = {}


def read_body(get_response: Callable[[HttpRequest], HttpResponse]
              ) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and "agents" in request.path:
            seen["body_read_by_middleware"] = bool(request.body)
        return get_response(request)

    return middleware


def form(request: HttpRequest) -> HttpResponse:
    return HttpResponse("posted")


app = A2AApp(
    WhoAgent(),
    auth=AuthPolicy(
    [BearerAuthenticator(lambda token: None), BasicAuthenticator(lambda user, pw: None)]),
    card=CardSettings(trusted_hosts=("testserver",)),
)
urlpatterns = [
    path("form/", form),
    path("agents/", include(a2a_urls(app, identity=lambda r: (
        f"user:{r.headers['X-Site-User']}" if "X-Site-User" in r.headers else None)))),
    path("bare/", include(a2a_urls(app, identity=None, name="bare"))),
]


def send(text: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}}})


client = Client(enforce_csrf_checks=True)
card = client.get("/agents/.well-known/agent-card.json").json()
seen["card_urls"] = [face["url"] for face in card["supportedInterfaces"]]
seen["csrf_enforced_elsewhere"] = client.post("/form/", {"a": "b"}).status_code
sent = client.post("/agents/", send("hi"), content_type="application/json",
                   headers={"A2A-Version": "1.0", "X-Site-User": "dora"})
seen["send_status"] = sent.status_code
seen["send_text"] = sent.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"]
anonymous = client.post("/agents/", send("hi"), content_type="application/json",
                        headers={"A2A-Version": "1.0"})
seen["anonymous_status"] = anonymous.status_code
seen["challenges"] = anonymous.headers["WWW-Authenticate"]
stream = client.post("/agents/rest/message:stream", json.loads(send("s"))["params"],
                     content_type="application/json",
                     headers={"X-Site-User": "dora", "Accept": "text/event-stream"})
seen["stream_class"] = type(stream).__name__
events = [json.loads(line[5:]) for line in b"".join(stream.streaming_content).decode()
          .splitlines() if line.startswith("data:")]
stream.close()
seen["stream_last_state"] = events[-1]["statusUpdate"]["status"]["state"]
seen["no_identity_hook_status"] = client.post(
    "/bare/", send("hi"), content_type="application/json",
    headers={"A2A-Version": "1.0", "X-Site-User": "dora"}).status_code
app.close()
print(json.dumps(seen))
