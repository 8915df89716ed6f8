"""Every store implements each part of the store contract, and the parts add up to TaskStore."""

from __future__ import annotations

import inspect

import pytest

from a2a_wsgi.stores import EventLog, LeaseStore, PushStore, TaskRecords, TaskStore

PARTS = (TaskRecords, EventLog, PushStore, LeaseStore)


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.__name__)
def test_each_store_implements_each_part(store: TaskStore, part: type) -> None:
    assert isinstance(store, part)


def _methods(protocol: type) -> set[str]:
    return {name for name, value in vars(protocol).items()
            if inspect.isfunction(value) and not name.startswith("_")}


def test_the_parts_are_disjoint_and_make_up_the_whole() -> None:
    parts = [_methods(part) for part in PARTS]
    assert sum(len(methods) for methods in parts) == len(set().union(*parts))
    assert not _methods(TaskStore)  # TaskStore adds nothing of its own
    whole = {name for name in dir(TaskStore) if not name.startswith("_")}
    assert whole == set().union(*parts)
