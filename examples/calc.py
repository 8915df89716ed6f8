"""The seed's "Calc Agent": adds the numbers in the text ("add 2 and 3" -> "The sum is 5.").

    python examples/calc.py [HOST:PORT]
"""

from __future__ import annotations

import logging
import os
import re
import sys
from decimal import Decimal

from a2a_core.models import AgentSkill, Message
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, reply, serve

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def add_numbers(text: str) -> Decimal | None:
    """The sum of every number written in ``text``; None when there is none."""
    numbers = [Decimal(found) for found in _NUMBER.findall(text)]
    return sum(numbers, Decimal(0)) if numbers else None


def format_number(value: Decimal) -> str:
    """5 rather than 5.0; 2.5 stays 2.5."""
    if value == value.to_integral():
        return str(value.quantize(Decimal(1)))
    return str(value.normalize())


class CalcAgent(Agent):
    name = "Calc Agent"
    description = "Adds numbers"
    version = "1.0.0"
    skills = [
        AgentSkill(
            id="calc",
            name="Calc",
            description="Adds the numbers it is given",
            tags=["math"],
            examples=["add 2 and 3"],
        )
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        total = add_numbers(msg.text)
        if total is None:
            return input_required("Which numbers should I add?")
        return reply(f"The sum is {format_number(total)}.")


app = A2AApp(CalcAgent(), base_url=os.environ.get("A2A_BASE_URL"))


if __name__ == "__main__":
    # The access and task lines (docs/telemetry.md) need a handler; werkzeug's own
    # request line would repeat ours. Under gunicorn see examples/gunicorn_logging.py.
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    handle = serve(app, sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8000")
    print(f"Calc Agent on {handle.url}/")
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
