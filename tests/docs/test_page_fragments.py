"""The Python fragments and shell lines of docs/inspector.md, docs/push.md and
docs/telemetry.md, each run in its complete form (:mod:`doc_programs`) or as written
(:mod:`doc_shell`), over HTTP.

Placeholders the pages leave to the reader are filled in by the tests: ``MyAgent`` is the
echo agent, ``already_processed``/``enqueue`` are the receiver's own, and the receiver's
example URLs (``https://agent.example/``, ``https://me.example/a2a-webhook``) become the
loopback agent and webhook the test serves. ``--port 8765`` becomes a free port.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import requests
from doc_pages import ROOT, block
from doc_programs import CLIENT, program, run_program
from doc_shell import Shell, check_pip_line, commands
from support.gunicorn import free_port

pytestmark = pytest.mark.slow

ECHO = "from examples.echo import app\n"
SEND_HI = """
with serve(app, "127.0.0.1:0") as handle, A2AClient(handle.url) as client:
    assert reply_text(client.send_message("hi")) == "hi"
"""


# -- docs/inspector.md ------------------------------------------------------------------


def test_inspector_fragment_serves_the_page(tmp_path: Path) -> None:
    lines = run_program(program("""
        from a2a_wsgi import A2AApp
        from examples.echo import EchoAgent
        """, block("inspector.md", "On your own app: `A2AApp(inspector=True)`").text, CLIENT, """
        with serve(app, "127.0.0.1:0") as handle:
            page = requests.get(handle.url + "/inspector/", timeout=10)
            print(page.status_code, page.headers["Content-Type"].split(";")[0])
        """), tmp_path)
    assert lines == ["200 text/html"]


def test_inspector_echo_line_serves_the_page(shell: Shell) -> None:
    (line,) = commands("inspector.md", "A2A_INSPECTOR=1")
    page = "http://127.0.0.1:8000/inspector/"
    assert page in line  # the comment names the page the line serves
    shell.start(line, page)
    answer = requests.get(shell.url(page), timeout=10)
    assert answer.status_code == 200 and "text/html" in answer.headers["Content-Type"]


def test_a2a_inspect_lines_serve_the_page_and_proxy_the_agent(shell: Shell) -> None:
    """The loopback line as written; ``python -m a2a_client._inspect URL`` is the same
    command (its URL the same agent, with the same flags)."""
    lines = commands("inspector.md", "a2a inspect")
    assert [line.split()[:2] for line in lines] == [["a2a", "inspect"]] * 3 + [
        ["python", "-m"]]
    shell.start(".venv/bin/python examples/echo.py 127.0.0.1:9000",
                "http://127.0.0.1:9000/.well-known/agent-card.json")
    agent = shell.url("http://127.0.0.1:9000").removeprefix("http://")
    looped = lines[1]
    module = lines[3].partition("#")[0].replace("URL", looped.split(maxsplit=2)[2])
    for line in (looped, module):
        port = free_port()
        shell.start(line.replace("--port 8765", f"--port {port}"),
                    f"http://127.0.0.1:{port}/inspector/")
        card = requests.get(f"http://127.0.0.1:{port}/proxy/http/{agent}/.well-known/"
                            "agent-card.json", timeout=10)
        assert card.status_code == 200 and card.json()["name"] == "Echo Agent"


# -- docs/push.md -----------------------------------------------------------------------


def test_push_sender_fragment_declares_push_and_serves_its_keys(tmp_path: Path) -> None:
    lines = run_program(program("from examples.echo import EchoAgent as MyAgent",
                                block("push.md", "Senders: switching push on").text, CLIENT, """
        push = app.settings.push
        print(push.max_attempts, push.backoff_base, push.backoff_cap,
              sorted(push.policy.allow_hosts))
        with serve(app, "127.0.0.1:0") as handle:
            card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=10).json()
            keys = requests.get(handle.url + "/.well-known/jwks.json", timeout=10).json()["keys"]
            print(card["capabilities"]["pushNotifications"], len(keys))
        """), tmp_path)
    assert lines == ["8 1.0 300.0 ['hooks.internal.example']", "True 1"]


def test_url_policy_lines_open_what_their_comments_say(tmp_path: Path) -> None:
    policies = block("push.md", "SSRF protection (on by default)").text.splitlines()
    assert len(policies) == 4
    checks = [  # (what the line opens, what it still refuses) as UrlPolicy calls
        ('check("http://127.0.0.1:9000/hook")', 'check("http://10.0.0.1/hook")'),
        ('check("http://10.20.3.4/hook")', 'check("http://10.21.0.1/hook")'),
        ('check_address("hooks.internal", "10.0.0.5")',
         'check_address("hooks.internal", "169.254.169.254")'),
        (None, 'check("http://93.184.215.14/hook")'),
    ]
    body = ["from a2a_wsgi.push import UrlPolicy", "from a2a_wsgi.push._ssrf import UnsafeURLError",
            "default = UrlPolicy.create()"]
    for line, (opens, refuses) in zip(policies, checks, strict=True):
        body.append(f"policy = {line.partition('#')[0].strip()}")
        if opens:
            body += [f"policy.{opens}", "try:", f"    default.{opens}",
                     "    print('default allows it')", "except UnsafeURLError:", "    pass"]
        body += ["try:", f"    policy.{refuses}", "    print('open:', repr(policy))",
                 "except UnsafeURLError as refused:", "    print('refused:', refused)"]
    lines = run_program("\n".join(body), tmp_path)
    assert len(lines) == 4 and all(line.startswith("refused: ") for line in lines), lines
    assert lines[3] == "refused: only https webhooks are allowed"


def test_push_receiver_fragment_takes_signed_pushes_and_refuses_forged_ones(
        tmp_path: Path) -> None:
    receiver_port, agent_port = free_port(), free_port()
    agent = f"http://127.0.0.1:{agent_port}/"
    webhook = f"http://127.0.0.1:{receiver_port}/a2a-webhook"
    receiver = block("push.md", "Receivers: checking what arrives").text
    assert "https://agent.example/" in receiver and "https://me.example/a2a-webhook" in receiver
    receiver = receiver.replace("https://agent.example/", agent).replace(
        "https://me.example/a2a-webhook", webhook)
    lines = run_program(program("""
        import threading
        events, processed, done = [], set(), threading.Event()

        def already_processed(key):
            seen = key in processed
            processed.add(key)
            return seen

        def enqueue(event):
            events.append(next(iter(event)))
            status = event.get("statusUpdate", {}).get("status", {})
            if status.get("state") == "TASK_STATE_COMPLETED":
                done.set()
        """, receiver, CLIENT, f"""
        from a2a_core.models import PushNotificationConfig
        from examples.push_agent import app as agent_app

        with serve(app, "127.0.0.1:{receiver_port}"), serve(agent_app, "127.0.0.1:{agent_port}"):
            forged = requests.post("{webhook}", json={{"statusUpdate": {{}}}}, timeout=10,
                                   headers={{"X-A2A-Notification-Token": "the-token-I-registered"}})
            print("forged", forged.status_code)
            with A2AClient("{agent}") as client:
                config = PushNotificationConfig(url="{webhook}", token="the-token-I-registered")
                client.send_message("hello", blocking=False, push_notification_config=config)
                print("completed", done.wait(30))
            print(*events)
        """), tmp_path)
    assert lines[:2] == ["forged 401", "completed True"]
    assert lines[2].split()[-1] == "statusUpdate" and "artifactUpdate" in lines[2].split()


# -- docs/telemetry.md ------------------------------------------------------------------


def _wiring(containing: str) -> str:
    return block("telemetry.md", "Wiring the logs", containing=containing).text


def test_basic_config_shows_the_access_line(tmp_path: Path) -> None:
    lines = run_program(program(_wiring("logging.basicConfig"), ECHO, CLIENT, SEND_HI),
                        tmp_path, stderr=True)
    assert any(re.search(r" a2a_wsgi\.access INFO SendMessage JSONRPC 1\.0 -> 200 in ", line)
               for line in lines), lines


def test_dict_config_writes_the_fields_in_its_format(tmp_path: Path) -> None:
    lines = run_program(program(_wiring("dictConfig"), ECHO, CLIENT, SEND_HI), tmp_path,
                        stderr=True)
    assert any(re.fullmatch(r"\S+ \S+ SendMessage 200 [\d.]+ms task=tsk-\w+ rid=\w+ trace=\S+",
                            line) for line in lines), lines
    assert any(re.fullmatch(r"task tsk-\w+ \(new\) -> \w+.*", line) for line in lines), lines


def test_django_logging_setting_shows_the_access_line(tmp_path: Path) -> None:
    lines = run_program(program(_wiring("LOGGING = {"), """
        import django
        from django.conf import settings
        settings.configure(DEBUG=False, SECRET_KEY="docs-test-only", ALLOWED_HOSTS=["*"],
                           ROOT_URLCONF="__main__", MIDDLEWARE=[], INSTALLED_APPS=[],
                           LOGGING=LOGGING)
        django.setup()
        from django.core.wsgi import get_wsgi_application
        from django.urls import include, path
        from a2a_wsgi.frameworks.django import a2a_urls
        """, ECHO, "urlpatterns = [path('a2a/', include(a2a_urls(app)))]", CLIENT, """
        with serve(get_wsgi_application(), "127.0.0.1:0") as handle, \\
                A2AClient(handle.url + "/a2a/") as client:
            assert reply_text(client.send_message("hi")) == "hi"
        """), tmp_path, stderr=True)
    assert any(line.startswith("SendMessage JSONRPC 1.0 -> 200 in ") for line in lines), lines


def test_gunicorn_logconfig_dict_is_the_example_file(tmp_path: Path) -> None:
    """The page shows examples/gunicorn_logging.py's dict (which tests/docs serves)."""
    shown: dict[str, object] = {}
    exec(_wiring("logconfig_dict = {"), shown)
    example: dict[str, object] = {}
    exec((ROOT / "examples" / "gunicorn_logging.py").read_text(), example)
    assert shown["logconfig_dict"] == example["logconfig_dict"]


def test_json_lines_formatter_writes_one_json_object_per_request(tmp_path: Path) -> None:
    lines = run_program(program(_wiring("class JsonLines"), """
        handler = logging.StreamHandler()
        handler.setFormatter(JsonLines())
        logging.getLogger("a2a_wsgi.access").addHandler(handler)
        logging.getLogger("a2a_wsgi.access").setLevel(logging.INFO)
        """, ECHO, CLIENT, SEND_HI), tmp_path, stderr=True)
    records = [json.loads(line) for line in lines if line.startswith("{")]
    sent = [r for r in records if r["operation"] == "SendMessage"]
    assert len(sent) == 1, lines
    assert sent[0]["http_status"] == 200 and sent[0]["task_id"].startswith("tsk-")
    assert sent[0]["logger"] == "a2a_wsgi.access" and sent[0]["binding"] == "JSONRPC"


_OTLP = "opentelemetry.exporter.otlp.proto.http"


@pytest.mark.skipif(importlib.util.find_spec("opentelemetry.exporter") is None
                    or importlib.util.find_spec(_OTLP) is None,
                    reason="the OTLP exporter the page installs is not in the test extra")
def test_opentelemetry_setup_exports_spans_and_metrics(tmp_path: Path) -> None:
    """The install line names what is installed; the set-up sends a request's spans and
    metrics to an OTLP endpoint (a loopback collector that records what it is sent)."""
    (pip,) = commands("telemetry.md", "[otel]")
    check_pip_line(pip)
    setup = block("telemetry.md", "OpenTelemetry").text
    lines = run_program(program("""
        import os, threading
        from a2a_wsgi import serve as _serve
        received = []

        def collector(environ, start_response):
            received.append(environ["PATH_INFO"])
            environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            start_response("200 OK", [("Content-Type", "application/x-protobuf")])
            return [b""]

        _collector = _serve(collector, "127.0.0.1:0")
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = _collector.url
        """, setup, ECHO, CLIENT, SEND_HI, """
        tracing.force_flush()
        metrics.get_meter_provider().force_flush()
        print(sorted(set(received)))
        _collector.stop()
        """), tmp_path)
    assert lines == ["['/v1/metrics', '/v1/traces']"]
