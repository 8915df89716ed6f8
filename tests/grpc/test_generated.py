"""The committed descriptor set is what the pinned protoc makes of the vendored proto."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from a2a_core._grpc import grpc_methods
from a2a_core._grpc.proto import service
from a2a_core.optable import OPERATIONS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "regenerate_grpc.py"
#: The generator works on the checkout's sources, which a run from a copy lacks.
_CHECKOUT = pytest.mark.skipif(not (ROOT / "a2a_core").is_dir(),
                               reason="the tests run from a copy, outside the checkout")


@_CHECKOUT
def test_regenerating_into_a_temp_dir_gives_the_committed_bytes() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "matches the proto" in done.stdout


@_CHECKOUT
def test_the_check_fails_when_the_committed_file_differs(tmp_path: Path) -> None:
    """The check compares bytes: a changed copy of the script's tree is caught."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / "scripts" / "regenerate_grpc.py").write_bytes(SCRIPT.read_bytes())
    schemas = tree / "a2a_core" / "schemas"
    (schemas / "_generated").mkdir(parents=True)
    source = ROOT / "a2a_core" / "schemas"
    (schemas / "a2a-v1.0.proto").write_bytes((source / "a2a-v1.0.proto").read_bytes())
    committed = (source / "_generated" / "a2a-v1.0.binpb").read_bytes()
    (schemas / "_generated" / "a2a-v1.0.binpb").write_bytes(committed[:-1] + b"\x00")
    done = subprocess.run([sys.executable, str(tree / "scripts" / "regenerate_grpc.py"),
                           "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "differs" in done.stderr


def test_every_rpc_of_the_proto_is_an_operation_of_the_table() -> None:
    """The service's methods are the 1.0 operation names, with the table's streaming kind."""
    names = [method.name for method in service().methods]
    assert names == [m.operation.name for m in grpc_methods()]
    assert set(names) == {op.name for op in OPERATIONS}
    for method in grpc_methods():
        assert method.streams == method.operation.streams
