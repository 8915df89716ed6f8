"""The stores' own encoding: every stored model round-trips, legacy wire rows still load."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from core.test_wire import stream_events, task_push_configs, tasks
from hypothesis import given, settings

from a2a_core import wire
from a2a_core.models import DataPart, Message, Role, Task, TaskState, TaskStatus
from a2a_wsgi.stores import _codec as codec
from a2a_wsgi.stores._encoding import (
    ENCODING_VERSION,
    StorageFormatError,
    from_document,
    to_document,
)


def _stored(value: Any) -> Any:
    return json.loads(json.dumps(to_document(value)))


@settings(max_examples=60, deadline=None)
@given(task=tasks("both"), event=stream_events("both"), config=task_push_configs("1.0"))
def test_every_stored_model_round_trips(task: Task, event: Any, config: Any) -> None:
    assert from_document(_stored(task)) == task
    assert from_document(_stored(event)) == event
    assert from_document(_stored(config)) == config
    assert codec.load_task(codec.dump_task(task)) == task
    assert codec.load_event(codec.dump_event(event)) == event
    assert codec.load_push_config(codec.dump_push_config(config)) == config


def test_client_json_is_kept_as_it_came_even_when_it_looks_like_a_tag() -> None:
    message = Message(message_id="m", role=Role.USER, parts=[
        DataPart(data={"@": "Task", "@e": "x", "list": [1, 2]}),
        DataPart(data=[{"@t": "not a time"}, 3]),
    ], metadata={"@j": {"@b": "AA=="}})
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING),
                history=[message])
    assert codec.load_task(codec.dump_task(task)) == task


def test_timestamps_keep_their_microseconds() -> None:
    stamp = datetime(2026, 12, 1, 9, 30, 0, 123456, tzinfo=timezone.utc)
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED,
                                                         timestamp=stamp))
    assert codec.load_task(codec.dump_task(task)).status.timestamp == stamp


def test_documents_name_their_version_and_a_newer_one_is_refused() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    stored = json.loads(codec.dump_task(task))
    assert stored["v"] == ENCODING_VERSION and stored["m"]["@"] == "Task"
    with pytest.raises(StorageFormatError, match="upgrade"):
        from_document({"v": ENCODING_VERSION + 1, "m": stored["m"]})
    with pytest.raises(StorageFormatError, match="unknown"):
        from_document({"v": ENCODING_VERSION, "m": {"@": "NoSuchModel"}})


def test_rows_written_in_the_legacy_wire_shape_still_load() -> None:
    """Before this encoding, tasks were stored in the 0.3 wire shape (timestamps exact)."""
    stamp = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING,
                                                         timestamp=stamp))
    legacy = wire.encode(task, "0.3")
    legacy["status"]["timestamp"] = stamp.isoformat()
    assert codec.load_task(json.dumps(legacy)) == task
    event = wire.encode_stream_event(task, "0.3")
    assert codec.load_event(json.dumps(event)).id == "t"  # type: ignore[union-attr]
