"""A Runtime from one set of keywords, for tests that vary many options at once.

The Runtime takes its options as :class:`RuntimeSettings` and
:class:`StreamSettings` and its collaborators as keywords; ``runtime(agent,
lease_seconds=1, heartbeat_interval=0.1, store=...)`` sorts them so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from a2a_wsgi._agent import Agent
from a2a_wsgi._runtime import Runtime
from a2a_wsgi.push import PushSettings
from a2a_wsgi.settings import RuntimeSettings, StreamSettings

__all__ = ["runtime"]

_RUNTIME = {f.name for f in dataclasses.fields(RuntimeSettings)}
_STREAMS = {f.name for f in dataclasses.fields(StreamSettings)}


def runtime(agent: Agent, **options: Any) -> Runtime:
    """``Runtime(agent, RuntimeSettings(...), streams=StreamSettings(...), **the rest)``;
    ``push_enabled=True`` stands for push delivery with the default settings."""
    settings = RuntimeSettings(**{k: options.pop(k) for k in list(options) if k in _RUNTIME})
    streams = StreamSettings(**{k: options.pop(k) for k in list(options) if k in _STREAMS})
    if options.pop("push_enabled", False) and options.get("push") is None:
        options["push"] = PushSettings()
    if "push_settings" in options:
        options["push"] = options.pop("push_settings")
    return Runtime(agent, settings, streams=streams, **options)
