"""The site's agent: the caller is whoever Django's middleware logged in.

The app's own auth declares the bearer scheme on the card (so an anonymous
caller gets 401 with ``WWW-Authenticate``) and checks the token with the
site's own function; a session or token user recorded by the adapter wins
over it, so the site's login is the only one.
"""

from __future__ import annotations

import os

from a2a_core._service import CallContext
from a2a_core.models import AgentCard, AgentSkill
from a2a_wsgi import A2AApp
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.settings import CardSettings

from ..caller_agent import CallerAgent
from .tokens import token_identity


def members_card(ctx: CallContext) -> AgentCard:
    """The extended card: logged-in users only."""
    return AgentCard(name="Caller Agent (members)", description=f"For {ctx.identity}",
                     skills=[AgentSkill(id="whoami", name="Who am I",
                                        description="Names the caller", tags=["auth"])])


a2a_app = A2AApp(
    CallerAgent(),
    base_url=os.environ.get("A2A_BASE_URL"),
    auth=BearerAuthenticator(token_identity, description="a token from POST /accounts/token/"),
    push=True,
    card=CardSettings(extended_card=members_card),
)
