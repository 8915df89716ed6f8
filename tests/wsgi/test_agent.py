from __future__ import annotations

import pytest

from a2a_core.models import (
    AgentCapabilities,
    AgentProvider,
    AgentSkill,
    DataPart,
    FilePart,
    Message,
    Role,
    TaskState,
    TextPart,
)
from a2a_wsgi._agent import (
    Agent,
    AgentContext,
    AuthRequired,
    Failure,
    InputRequired,
    MessageReply,
    Rejected,
    Reply,
    Stream,
    Working,
    as_outcome,
    auth_required,
    error,
    input_required,
    message,
    reject,
    reply,
    stream,
    to_parts,
    working,
)


def test_to_parts_turns_strings_into_text_parts_and_keeps_parts() -> None:
    data = DataPart(data={"a": 1})
    file = FilePart(url="https://example.com/f.txt")
    assert to_parts("hi", data, [file, "x"]) == (
        TextPart(text="hi"),
        data,
        file,
        TextPart(text="x"),
    )


@pytest.mark.parametrize("bad", [1, None, {"text": "x"}, b"bytes"])
def test_to_parts_refuses_other_types(bad: object) -> None:
    with pytest.raises(TypeError):
        to_parts(bad)


@pytest.mark.parametrize("helper", [reply, input_required, auth_required, reject, message])
def test_content_outcomes_need_at_least_one_part(helper: object) -> None:
    with pytest.raises(ValueError):
        helper()  # type: ignore[operator]
    with pytest.raises(ValueError):
        helper([])  # type: ignore[operator]


def test_helpers_build_their_outcomes() -> None:
    assert reply("a", "b") == Reply((TextPart(text="a"), TextPart(text="b")))
    assert reply("a", artifact_name="answer").artifact_name == "answer"
    assert input_required("which?") == InputRequired((TextPart(text="which?"),))
    assert auth_required("login") == AuthRequired((TextPart(text="login"),))
    assert reject("no") == Rejected((TextPart(text="no"),))
    assert message("hi") == MessageReply((TextPart(text="hi"),))
    assert working() == Working(None)
    assert working("busy") == Working("busy")
    parts = ["x"]
    assert stream(parts).source is parts
    assert isinstance(stream(iter(())), Stream)


def test_error_uses_the_text_of_what_it_is_given() -> None:
    assert error("boom") == Failure("boom")
    assert error(ValueError("bad value")) == Failure("bad value")


def test_as_outcome_accepts_outcomes_strings_and_none() -> None:
    outcome = reply("x")
    assert as_outcome(outcome) is outcome
    assert as_outcome("plain") == Reply((TextPart(text="plain"),))
    assert as_outcome(None) is None
    with pytest.raises(TypeError, match="handle_message returned int"):
        as_outcome(42)


class Calc(Agent):
    name = "Calc Agent"
    description = "Adds numbers"
    version = "1.0.0"
    skills = [AgentSkill(id="calc", name="Calc", description="Adds", tags=["math"])]
    card_fields = {
        "provider": AgentProvider(organization="Example", url="https://example.com"),
        "default_output_modes": ["text/plain", "application/json"],
    }


def test_card_comes_from_class_attributes() -> None:
    card = Calc().agent_card()
    assert (card.name, card.description, card.version) == ("Calc Agent", "Adds numbers", "1.0.0")
    assert [s.id for s in card.skills] == ["calc"]
    assert card.provider == AgentProvider(organization="Example", url="https://example.com")
    assert card.default_output_modes == ("text/plain", "application/json")


def test_card_defaults_follow_the_seed() -> None:
    class Bare(Agent):
        name = "Bare"

    card = Bare().agent_card()
    assert (card.description, card.version, card.skills) == ("", "0.1.0", ())


def test_card_needs_a_name() -> None:
    with pytest.raises(TypeError, match="needs a name"):
        Agent().agent_card()


def test_capabilities_argument_replaces_the_declared_ones() -> None:
    class Declares(Agent):
        name = "D"
        card_fields = {"capabilities": AgentCapabilities(state_transition_history=True)}

    assert Declares().agent_card().capabilities.state_transition_history is True
    caps = AgentCapabilities(streaming=True)
    assert Declares().agent_card(capabilities=caps).capabilities == caps


def test_unknown_card_field_is_an_error() -> None:
    class Typo(Agent):
        name = "T"
        card_fields = {"descripton": "oops"}

    with pytest.raises(TypeError):
        Typo().agent_card()


def test_base_agent_must_implement_handle_message() -> None:
    ctx = AgentContext(task_id="t", context_id="c")
    msg = Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")])
    with pytest.raises(NotImplementedError):
        Calc().handle_message(msg, ctx)
    assert Calc().handle_cancel(ctx) is None


def test_from_function_builds_an_agent() -> None:
    cancelled: list[str] = []
    agent = Agent.from_function(
        lambda msg, ctx: reply(msg.text.upper()),
        name="Upper",
        skills=[AgentSkill(id="up", name="Up")],
        card_fields={"documentation_url": "https://example.com/docs"},
        on_cancel=lambda ctx: cancelled.append(ctx.task_id),
    )
    msg = Message(message_id="m", role=Role.USER, parts=[TextPart(text="abc")])
    ctx = AgentContext(task_id="t1", context_id="c1", history=(msg,))
    assert agent.handle_message(msg, ctx) == reply("ABC")
    agent.handle_cancel(ctx)
    assert cancelled == ["t1"]
    card = agent.agent_card()
    assert (card.name, card.documentation_url) == ("Upper", "https://example.com/docs")
    assert [s.id for s in card.skills] == ["up"]


def test_context_without_a_runtime_refuses_to_emit() -> None:
    msg = Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")])
    ctx = AgentContext(task_id="t", context_id="c", history=(msg,))
    assert ctx.message is msg
    assert not ctx.is_cancelled()
    ctx.cancelled.set()
    assert ctx.is_cancelled()
    with pytest.raises(RuntimeError, match="not attached"):
        ctx.emit_artifact("x")
    with pytest.raises(RuntimeError, match="not attached"):
        ctx.emit_status(TaskState.WORKING, "x")
    assert AgentContext(task_id="t", context_id="c").message is None
