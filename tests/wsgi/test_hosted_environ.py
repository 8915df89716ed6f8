"""The environ a framework adapter hands the app: the mount in SCRIPT_NAME, the caller set."""

from __future__ import annotations

import io
from typing import Any

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, get_identity, put_identity, reply
from a2a_wsgi.frameworks._hosted import call_mounted, mounted_environ, wsgi_str


class Hello(Agent):
    name = "Hello"
    description = "Says hello"

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        return reply("hello")


def _environ(path: str, script: str = "") -> dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "PATH_INFO": path, "SCRIPT_NAME": script,
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO()}


def test_the_mount_moves_into_script_name() -> None:
    stream = io.BytesIO(b"body")
    root = mounted_environ(_environ("/a2a/"), sub_path="", stream=stream, identity=None)
    assert (root["SCRIPT_NAME"], root["PATH_INFO"]) == ("/a2a", "/")
    assert root["wsgi.input"] is stream
    deep = mounted_environ(_environ("/agents/a2a/rest/tasks/t-1", "/site"),
                           sub_path="rest/tasks/t-1", stream=stream, identity=None)
    assert (deep["SCRIPT_NAME"], deep["PATH_INFO"]) == ("/site/agents/a2a", "/rest/tasks/t-1")


def test_a_non_ascii_path_is_split_in_wsgi_strings() -> None:
    raw = "/a2a/rest/tasks/t-é".encode().decode("latin-1")  # as a WSGI server hands it over
    mounted = mounted_environ(_environ(raw), sub_path=wsgi_str("rest/tasks/t-é"),
                              stream=None, identity=None)
    assert mounted["SCRIPT_NAME"] == "/a2a"
    assert mounted["PATH_INFO"].encode("latin-1").decode() == "/rest/tasks/t-é"


def test_the_hosts_caller_is_recorded_on_the_copy_only() -> None:
    host = _environ("/a2a/")
    put_identity(host, "from-a-wsgi-middleware")
    kept = mounted_environ(host, sub_path="", stream=None, identity=None)
    assert get_identity(kept) == "from-a-wsgi-middleware"
    named = mounted_environ(host, sub_path="", stream=None, identity="user:7")
    assert get_identity(named) == "user:7"
    assert get_identity(host) == "from-a-wsgi-middleware"


def test_the_card_advertises_the_mount() -> None:
    app = A2AApp(Hello())
    try:
        environ = mounted_environ(_environ("/site/a2a/.well-known/agent-card.json"),
                                  sub_path=".well-known/agent-card.json", stream=None,
                                  identity=None)
        answer = call_mounted(app, environ)
        assert answer.status_code == 200 and not answer.streamed
        assert b'"url":"http://127.0.0.1/site/a2a/"' in answer.whole_body()
    finally:
        app.close()


def test_repeated_headers_are_joined_for_one_value_hosts() -> None:
    from a2a_wsgi.frameworks._hosted import HostedAnswer

    answer = HostedAnswer("401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="a2a"'),
                                               ("www-authenticate", 'Basic realm="a2a"'),
                                               ("Content-Type", "application/json")], [b""])
    assert answer.merged_headers() == {
        "WWW-Authenticate": 'Bearer realm="a2a", Basic realm="a2a"',
        "Content-Type": "application/json"}
    assert (answer.status_code, answer.reason) == (401, "Unauthorized")
