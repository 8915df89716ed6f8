"""The shell commands of the first-hour pages, run as written.

Pages: docs/security.md (signed cards behind tokens), docs/serving.md (the server lines,
the Django and Flask sites behind their login, the Flask and Django mounts),
docs/telemetry.md (logging under gunicorn), docs/push.md (the local push recipe). The
``A2A_DB`` line of docs/deployment.md runs in tests/stores/test_sqlite_folder.py, README's
``a2a`` lines in tests/test_readme.py and its set-up and ``a2a serve`` lines in
test_readme_commands.py; the other pages' lines in test_page_fragments.py.

Each command runs in bash exactly as the page writes it, with only the substitutions
that :mod:`doc_shell` lists. A command that serves (gunicorn, an example agent) runs in
its own session until the test ends, then is stopped (SIGTERM to its group, SIGKILL
after a grace period).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from doc_shell import ROOT, Shell, check_pip_line, commands

pytestmark = pytest.mark.slow


def test_security_page_serves_signed_cards_behind_tokens(shell: Shell) -> None:
    pip, keygen, server, curl = commands("security.md", "examples.secure:app")
    check_pip_line(pip)
    made = shell.run(keygen)
    assert made.returncode == 0, made.stderr
    assert (shell.cwd / "card-key.pem").read_text().startswith("-----BEGIN PRIVATE KEY-----")
    shell.start(server, "http://127.0.0.1:8000/.well-known/agent-card.json")
    answer = shell.run(curl)
    assert answer.returncode == 0, answer.stderr
    task = json.loads(answer.stdout)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "You are alice."
    card = requests.get(shell.url("http://127.0.0.1:8000/.well-known/agent-card.json"),
                        timeout=10).json()
    assert card["supportedInterfaces"][0]["url"].startswith("https://agents.example/")
    assert card["signatures"], "the card is not signed"
    # Four workers, one key file: every worker's signature has the same key id.
    kids = {json.dumps(requests.get(shell.url(
        "http://127.0.0.1:8000/.well-known/jwks.json"), timeout=10).json()) for _ in range(8)}
    assert len(kids) == 1


def test_secure_example_without_the_signing_extra_says_how_to_install_it(
        tmp_path: Path) -> None:
    """``python examples/secure.py`` after README's plain install: one line, the command."""
    blocker = tmp_path / "no-extra" / "cryptography"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = {"PATH": os.defpath, "HOME": str(tmp_path), "PYTHONPATH": str(blocker.parent)}
    done = subprocess.run([sys.executable, "examples/secure.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert done.stderr == ("examples/secure.py signs its cards: install the signing extra: "
                           ".venv/bin/pip install -e '.[signing]'\n")


@pytest.mark.parametrize("example", ["examples.flask_mount:app",
                                     "examples.django_mount:application"])
def test_mount_pages_install_serve_and_answer_the_card(shell: Shell, example: str) -> None:
    pip, server, curl = commands("serving.md", example)
    check_pip_line(pip)
    shell.start(server, "http://127.0.0.1:8000/")
    answer = shell.run(curl)
    assert answer.returncode == 0, answer.stderr
    card = json.loads(answer.stdout)
    assert card["name"] == "Echo Agent"
    assert card["supportedInterfaces"][0]["url"] == shell.url("http://127.0.0.1:8000/a2a/")
    site = requests.get(shell.url("http://127.0.0.1:8000/"), timeout=10)
    assert site.status_code == 200 and "site" in site.text


@pytest.mark.parametrize(("site", "caller"), [("examples.django_site.wsgi:application", "user:1"),
                                            ("examples.flask_site:site", "user:alice")])
def test_site_pages_log_in_a_program_and_the_agent_names_it(shell: Shell, site: str,
                                                            caller: str) -> None:
    """"Inside a Django or Flask site, behind its login": install, serve, take a token from
    the site's login, send with it; the agent answers the site's user, as the page shows."""
    pip, server, *calls = commands("serving.md", site)
    check_pip_line(pip)
    shell.start(server, "http://127.0.0.1:8000/")
    answer = shell.script(calls)
    assert answer.returncode == 0, answer.stderr
    text = json.loads(answer.stdout)["task"]["artifacts"][0]["parts"][0]["text"]
    shown = re.findall(r'"text":"(hello, [^"]*)"', (ROOT / "docs" / "serving.md").read_text())
    assert text == f"hello, {caller}: hi" and text in shown


@pytest.mark.parametrize("index", range(3))
def test_running_it_each_server_line_serves_the_echo_agent(shell: Shell, index: int) -> None:
    """serving.md "Running it": plain gunicorn, ``a2a serve``, ``python -m a2a_wsgi._cli``."""
    line = commands("serving.md", "examples.echo:app --bind")[index]
    port = "9000" if "127.0.0.1:9000" in line else "8000"
    card_url = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    shell.start(line, card_url)
    card = requests.get(shell.url(card_url), timeout=10).json()
    assert card["name"] == "Echo Agent"
    assert card["supportedInterfaces"][0]["url"] == shell.url(f"http://127.0.0.1:{port}/")
    sent = requests.post(shell.url(f"http://127.0.0.1:{port}/rest/message:send"), timeout=10,
                         json={"message": {"messageId": "m-1", "role": "ROLE_USER",
                                           "parts": [{"text": "hi"}]}})
    assert sent.json()["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]


def test_telemetry_gunicorn_config_shows_the_access_lines(shell: Shell) -> None:
    (server,) = commands("telemetry.md", "examples/gunicorn_logging.py")
    log = shell.start(server, "http://127.0.0.1:8000/.well-known/agent-card.json")
    sent = requests.post(shell.url("http://127.0.0.1:8000/"), headers={"A2A-Version": "1.0"},
                         timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                           "params": {"message": {"messageId": "m1",
                                                      "role": "ROLE_USER",
                                                      "parts": [{"text": "hi"}]}}})
    assert sent.status_code == 200
    deadline = time.monotonic() + 10
    while "a2a_wsgi.access: SendMessage JSONRPC 1.0 -> 200" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(piece) for piece in line.split("…")))


def test_push_recipe_delivers_verified_pushes_end_to_end(shell: Shell) -> None:
    pip, agent, receiver = commands("push.md", "examples/push_receiver.py")
    check_pip_line(pip)
    shell.start(agent, "http://127.0.0.1:8000/.well-known/jwks.json")
    done = shell.run(receiver)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (ROOT / "docs" / "push.md").read_text()
    shown = re.search(r"exits 0 after the push that says the task finished:\n\n```\n(.*?)```",
                      text, re.S)
    assert shown, "push.md no longer shows the receiver's output"
    expected = [shell.url(line) for line in shown[1].splitlines()]
    lines = done.stdout.splitlines()
    assert len(lines) == len(expected), done.stdout
    for got, want in zip(lines, expected, strict=True):
        assert _pattern(want).fullmatch(got), f"want {want}\ngot  {got}"
    assert len({line.split()[3] for line in lines[2:]}) == 1  # one task throughout


def test_push_receiver_refuses_a_forged_push(shell: Shell) -> None:
    """Whoever learns the webhook URL cannot push: no token, no signature, 401."""
    _, agent, _ = commands("push.md", "examples/push_receiver.py")
    shell.start(agent, "http://127.0.0.1:8000/.well-known/jwks.json")
    log = shell.start(".venv/bin/python examples/push_receiver.py http://127.0.0.1:8000/ "
                      "--listen 127.0.0.1:9000", "http://127.0.0.1:9000/")
    forged = requests.post(shell.url("http://127.0.0.1:9000/webhook"), timeout=10,
                           json={"statusUpdate": {"taskId": "tsk-1", "status": {
                               "state": "TASK_STATE_COMPLETED"}}},
                           headers={"X-A2A-Notification-Token": "guessed"})
    assert forged.status_code == 401 and forged.content == b""
    deadline = time.monotonic() + 10
    while "refused a push:" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    assert "verified push" not in log.read_text()


def test_the_tools_the_pages_use_are_found_without_the_callers_path() -> None:
    """openssl and curl come from the system folders, as on a fresh machine."""
    for tool in ("openssl", "curl"):
        if shutil.which(tool, path=os.defpath) is None:
            pytest.skip(f"{tool} is not installed in {os.defpath}")
