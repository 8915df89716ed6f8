"""The app checks every card variant it serves against the published schemas when it starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.gunicorn import ROOT, start_gunicorn

from a2a_core.models import AgentSkill, Message, OAuth2SecurityScheme, OAuthFlows
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi._card_schema import CardSchemaError
from a2a_wsgi.settings import CardSettings, ProtocolSettings


class Echo(Agent):
    name = "Echo"
    description = "Says it back"
    skills = [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])]

    def handle_message(self, message: Message, context: AgentContext) -> object:
        return reply(message.text)


#: An OAuth2 scheme with no flow: the model allows it, the 1.0 proto's oneof does not.
NO_FLOW = {"security_schemes": {"corp": OAuth2SecurityScheme(flows=OAuthFlows())}}


def test_a_valid_card_starts() -> None:
    app = A2AApp(Echo()).start()
    assert app.runtime.agent_card().name == "Echo"


@pytest.mark.parametrize("versions", [("0.3", "1.0"), ("1.0",)])
def test_a_card_off_the_schema_refuses_to_start_naming_the_member(
        versions: tuple[str, ...]) -> None:
    app = A2AApp(
        Echo(),
        card=CardSettings(overrides=NO_FLOW),
        protocol=ProtocolSettings(versions=tuple(versions)),
    )
    with pytest.raises(CardSchemaError) as info:
        app.start()
    message = str(info.value)
    assert "will not start" in message
    assert "the 1.0 card (A2A 1.0 schema): $.securitySchemes['corp'].oauth2SecurityScheme.flows" \
        in message
    assert "exactly one of" in message
    assert "0.3 readers" not in message  # the 0.3 schema allows an empty flows object


def test_serve_refuses_before_it_listens() -> None:
    app = A2AApp(Echo(), card=CardSettings(overrides=NO_FLOW))
    with pytest.raises(CardSchemaError, match="flows"):
        serve(app, "127.0.0.1:0")



_WITHOUT_JSONSCHEMA = r'''
import importlib.abc, sys

class NoJsonschema(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "jsonschema" or name.startswith("jsonschema."):
            raise ImportError(f"{name} is not installed here")
        return None

sys.meta_path.insert(0, NoJsonschema())
from a2a_core.models import AgentSkill
from a2a_wsgi import A2AApp, Agent, reply

class Echo(Agent):
    name, description = "Echo", "Says it back"
    skills = [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])]

    def handle_message(self, message, context):
        return reply(message.text)

app = A2AApp(Echo())  # creating an app does not need jsonschema
print("created")
app.start()
'''


def test_without_jsonschema_the_start_says_what_to_install() -> None:
    done = subprocess.run([sys.executable, "-c", _WITHOUT_JSONSCHEMA], capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == "created\n", done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("ImportError: a2a_core.schemas checks cards with the 'jsonschema' package, "
                    "a dependency of a2a-wsgi that is missing here: pip install "
                    "'jsonschema>=4.18'"), done.stderr


#: Served by gunicorn below: created at import (which starts nothing outside gunicorn).
broken_app = A2AApp(Echo(), card=CardSettings(overrides=NO_FLOW))


@pytest.mark.slow
def test_gunicorn_does_not_serve_a_card_off_the_schema(tmp_path: Path) -> None:
    """The worker assembles at boot, so the master gives up and its log names the member."""
    with start_gunicorn("test_card_schema_check:broken_app", log_path=tmp_path / "g.log",
                        pythonpath=[Path(__file__).parent, ROOT / "tests"]) as gunicorn:
        try:
            code = gunicorn.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"gunicorn kept running:\n{gunicorn.log()}")
        log = gunicorn.log()
    assert code != 0, log
    assert ("the 1.0 card (A2A 1.0 schema): $.securitySchemes['corp']"
            ".oauth2SecurityScheme.flows") in log
