"""The release: ``python -m build`` makes an sdist and a wheel that hold everything the
packages read at run time (the vendored schemas, the inspector's assets, ``py.typed``), both
pass ``twine check``, and the wheel installed alone into a fresh venv serves the echo
example, prints its version and checks the example's card.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gunicorn import free_port, stop_group

import a2a_core

ROOT = Path(__file__).resolve().parents[1]
VERSION = a2a_core.__version__
PACKAGES = ("a2a_core", "a2a_wsgi", "a2a_client", "a2a_inspector")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(),
                       reason="the tests run from a copy, outside the checkout"),
]


def run(*argv: str | Path, cwd: Path = ROOT, timeout: float = 300) -> str:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{argv}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    return out


def _one(dist: Path, pattern: str) -> Path:
    (found,) = dist.glob(pattern)
    return found


#: What the packages read at run time, besides their modules.
def data_files() -> set[str]:
    schemas = {f"a2a_core/schemas/{p.name}" for p in (ROOT / "a2a_core/schemas").iterdir()
               if p.suffix in (".json", ".proto", ".md")}
    static = ROOT / "a2a_inspector"
    assets = {f"a2a_inspector/{p.name}" for p in static.iterdir()
              if p.suffix in (".html", ".css", ".js")}
    typed = {f"{package}/py.typed" for package in PACKAGES}
    assert len(schemas) == 5 and len(assets) >= 10
    return schemas | assets | typed


def package_files() -> set[str]:
    """Every file of the four packages in the checkout (byte-code aside)."""
    found = {str(p.relative_to(ROOT)) for package in PACKAGES
             for p in (ROOT / package).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert len(found) > 150
    return found


def test_the_wheel_holds_the_data_and_the_command(dist: Path) -> None:
    wheel = _one(dist, f"a2a_wsgi-{VERSION}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"a2a_wsgi-{VERSION}.dist-info"
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert data_files() <= names, sorted(data_files() - names)
    assert package_files() <= names, sorted(package_files() - names)
    assert "a2a = a2a_client.cli:main" in entry_points
    assert f"\nVersion: {VERSION}\n" in metadata
    assert not [n for n in names if n.startswith(("tests/", "examples/"))]


def test_the_sdist_holds_the_data_docs_examples_and_tests(dist: Path) -> None:
    sdist = _one(dist, f"a2a_wsgi-{VERSION}.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    wanted = data_files() | {"README.md", "CHANGELOG.md", "pyproject.toml", "MANIFEST.in",
                             "docs/architecture.md", "examples/echo.py",
                             "tests/core/schema_oracle.py"}
    assert wanted <= names, sorted(wanted - names)


def test_twine_check_passes(dist: Path) -> None:
    out = run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()))
    assert out.count("PASSED") == 2


@pytest.fixture(scope="module")
def wheel_venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the wheel installed (its dependencies from the index), nothing else."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    run(sys.executable, "-m", "venv", venv)
    wheel = _one(dist, "*.whl")
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, timeout=600)
    yield venv
    shutil.rmtree(venv, ignore_errors=True)


def test_the_wheel_alone_serves_the_echo_example(wheel_venv: Path, tmp_path: Path) -> None:
    python, a2a = wheel_venv / "bin" / "python", wheel_venv / "bin" / "a2a"
    where = run(python, "-c",
                "import a2a_core, a2a_wsgi, a2a_client, a2a_inspector; print(a2a_core.__file__)",
                cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(wheel_venv), where  # the wheel, not the checkout
    assert run(a2a, "--version", cwd=tmp_path) == f"a2a {VERSION}\n"
    shutil.copy(ROOT / "examples" / "echo.py", tmp_path / "echo.py")
    port = free_port()
    log = (tmp_path / "echo.log").open("wb")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(python), "echo.py", f"127.0.0.1:{port}"], cwd=tmp_path,
                            env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_listening(proc, port, tmp_path / "echo.log")
        checked = subprocess.run([str(a2a), "card", f"http://127.0.0.1:{port}/", "--check"],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=60,
                                 check=False, stdin=subprocess.DEVNULL)
        assert checked.returncode == 0, (checked.stdout, checked.stderr)
        assert checked.stdout.count("valid against the A2A") == 2
    finally:
        stop_group(proc)
        log.close()


def test_the_wheel_alone_runs_a2a_serve_with_several_workers(wheel_venv: Path,
                                                             tmp_path: Path) -> None:
    """``a2a serve`` with its default worker (gevent) from the wheel and its dependencies
    alone: nothing the test extra brings along (gunicorn's gevent worker imports
    ``packaging``, which the test venv has through pytest) may be needed."""
    a2a = wheel_venv / "bin" / "a2a"
    shutil.copy(ROOT / "examples" / "echo.py", tmp_path / "echo.py")
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(a2a), "serve", "echo:app", "--bind", f"127.0.0.1:{port}",
                             "--workers", "2"], cwd=tmp_path, env=env, start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_listening(proc, port, tmp_path / "serve.log")
        sent = subprocess.run([str(a2a), "send", f"http://127.0.0.1:{port}/", "hello", "--wait"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              check=False, stdin=subprocess.DEVNULL)
        assert sent.returncode == 0, (sent.stdout, sent.stderr,
                                      (tmp_path / "serve.log").read_text())
        assert "hello" in sent.stdout, sent.stdout
    finally:
        stop_group(proc)
        log.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Until the port takes connections; fail with the server's log if it exits first."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
