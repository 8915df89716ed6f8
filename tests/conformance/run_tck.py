"""Run the official A2A conformance kit (a2aproject/a2a-tck) against examples/tck_agent.py.

Not a pytest module: CI cannot fetch the kit, so this is a script a developer
runs by hand (see README.md next to it). It starts a fresh agent under
gunicorn for each kit run (the kits are not side-effect free: ListTasks
results depend on how many tasks the server already holds), runs the kit, and
prints what passed, failed and was skipped.

Two kit lines:

* ``--kit-10-dev PATH``: the A2A 1.0 kit (branch ``1.0-dev``, version 1.0.0),
  run through its own ``run_tck.py`` over every transport the agent's card
  declares. Prints passed / failed / skipped per RFC 2119 level and per
  transport, and the kit's per-requirement report. With ``--grpc`` the agent
  serves gRPC too (ours: ``a2a serve --grpc`` on a fresh SQLite store; the
  SDK's: its ``GrpcHandler``), so the kit runs its gRPC tests as well.
* ``--kit-10 PATH`` / ``--kit-03 PATH``: the legacy line (commit 410ba92 for
  1.0, b03fefc for 0.3), run category by category as before; the agent runs
  with ``TCK_LEGACY=1`` (every task stays WORKING).

    python tests/conformance/run_tck.py --kit-10-dev /work/tck-1.0
    python tests/conformance/run_tck.py --kit-10-dev /work/tck-1.0 --grpc
    python tests/conformance/run_tck.py --kit-10 /work/tck-legacy
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CATEGORIES", "LEGACY_SDK_FIGURES", "CategoryResult", "KitRun", "main", "run_kit_10_dev",
           "run_version"]

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: The project venv's gunicorn, beside the interpreter running this script (never $PATH).
GUNICORN = Path(sys.executable).parent / "gunicorn"
#: The project venv's ``a2a`` command (``a2a serve --grpc``: gunicorn and the gRPC process).
A2A_CLI = Path(sys.executable).parent / "a2a"
AGENT_APP = "examples.tck_agent:app"
#: Where the 1.0 kit's webhook receiver listens and the agent posts (tck_plugin.py).
WEBHOOK_HOST = "127.0.0.1"
#: Read by the agent (its extended card's bearer token) and by tck_plugin.py (sends it).
TOKEN_VARIABLE = "TCK_EXTENDED_CARD_TOKEN"

# The card's protocolBinding -> the 1.0 kit's transport name.
BINDINGS = {"JSONRPC": "jsonrpc", "HTTP+JSON": "http_json", "GRPC": "grpc"}
KIT_TRANSPORTS = ("jsonrpc", "http_json", "grpc")
LEVELS = ("MUST", "SHOULD", "MAY")
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")

# Legacy line: (directory, 1.0 marker expression, 0.3 marker expression), what each kit's
# run_tck.py selects with ``--transports jsonrpc``.
CATEGORIES: dict[str, tuple[str, str | None, str | None]] = {
    "mandatory": ("tests/mandatory/", "mandatory or mandatory_protocol or mandatory_jsonrpc",
                  "mandatory_jsonrpc or mandatory_protocol"),
    "capabilities": ("tests/optional/capabilities/", None, None),
    "transport-equivalence": ("tests/optional/multi_transport/", "transport_equivalence",
                              "transport_equivalence"),
    "quality": ("tests/optional/quality/", None, None),
    "features": ("tests/optional/features/", None, None),
}

# The official a2a-sdk with an agent that leaves tasks WORKING (as measured when the kits
# were first run).
LEGACY_SDK_FIGURES = {"1.0": {"mandatory": (71, 116), "all": (131, 238)},
                      "0.3": {"mandatory": (30, 33), "all": (88, 156)}}

LEGACY_WEBHOOK_PORT = 8888  # the legacy kit's push tests bind it (hard-coded upstream)


# -- the agent -------------------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def gunicorn_argv(port: int, app: str = AGENT_APP, threads: int = 32) -> list[str]:
    """One gthread worker: the agent's memory store lives in that one process."""
    return [str(GUNICORN), "-k", "gthread", "--workers", "1", "--threads", str(threads),
            "-b", f"127.0.0.1:{port}", "--graceful-timeout", "1", app]


def serve_grpc_argv(port: int, grpc_port: int, app: str = AGENT_APP,
                    threads: int = 32) -> list[str]:
    """``a2a serve --grpc``: gunicorn as :func:`gunicorn_argv` has it, and the gRPC process
    beside it on the same store (which must then be one both open: :func:`grpc_env`)."""
    return [str(A2A_CLI), "serve", app, "-k", "gthread", "--workers", "1", "--threads",
            str(threads), "-b", f"127.0.0.1:{port}", "--graceful-timeout", "1",
            "--log-level", "warning", "--grpc", f"127.0.0.1:{grpc_port}"]


def grpc_env(store_dir: Path, grpc_port: int) -> dict[str, str]:
    """A fresh SQLite store for the run, and the gRPC URL the card lists (``localhost``, as
    the HTTP interfaces name it)."""
    return {"A2A_STORE": f"sqlite:///{store_dir / 'tasks.sqlite3'}",
            "A2A_GRPC_URL": f"localhost:{grpc_port}"}


def sdk_argv(port: int, grpc_port: int | None = None) -> list[str]:
    """The official a2a-sdk agent for the same contract (sdk_agent.py) under uvicorn, and
    its gRPC server on ``grpc_port`` when given."""
    return [sys.executable, str(HERE / "sdk_agent.py"), str(port),
            *([str(grpc_port)] if grpc_port else [])]


@contextmanager
def agent_server(argv: Sequence[str], port: int, env: Mapping[str, str] | None = None,
                 log: Path | None = None) -> Iterator[str]:
    """The agent in its own process group, answering on ``http://localhost:<port>``."""
    full_env = {**os.environ, "TCK_PORT": str(port), "PYTHONPATH": str(REPO)}
    for name in ("A2A_BASE_URL", "A2A_GRPC_URL", "A2A_STORE"):
        full_env.pop(name, None)
    full_env.pop(TOKEN_VARIABLE, None)
    full_env.update(env or {})
    log_path = log or _temp_log("tck-agent-")
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(list(argv), env=full_env, cwd=REPO, stdout=log_file,
                                stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://localhost:{port}"
        try:
            _wait_for_card(url, proc, log_path)
            yield url
        finally:
            _kill_group(proc)


def _temp_log(prefix: str) -> Path:
    """A log file that outlives the run, so a failure can be read afterwards."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".log")
    os.close(fd)
    return Path(name)


def _wait_for_card(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Block until the card answers; a server that died says why."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the agent exited with {proc.returncode}:\n"
                               f"{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url + "/.well-known/agent-card.json", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the agent did not answer on {url} within 30 s (log: {log})")


def _wait_for_port(port: int) -> None:
    """Block until something accepts connections on loopback ``port`` (the gRPC process
    starts beside gunicorn, not before it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} within 30 s")


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    """Terminate a process group, then kill it if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5.0)
        except subprocess.TimeoutExpired:
            continue


def declared_transports(url: str) -> list[str]:
    """The 1.0 kit's names for the bindings the card declares, in the card's order.

    The card is fetched as the kit fetches it (no A2A-Version header).
    """
    with urllib.request.urlopen(url + "/.well-known/agent-card.json", timeout=5) as resp:
        card = json.load(resp)
    found: list[str] = []
    for iface in card.get("supportedInterfaces") or []:
        name = BINDINGS.get(str(iface.get("protocolBinding", "")))
        if name is not None and name not in found:
            found.append(name)
    return found


# -- the 1.0 kit line (1.0-dev) --------------------------------------------------------


@dataclass
class KitRun:
    """One run of the 1.0 kit: every test's outcome and the kit's own report."""

    transports: list[str]
    outcomes: dict[str, dict[str, str]]
    report: dict[str, Any]
    requirements: list[dict[str, Any]]
    seconds: float
    log: Path
    returncode: int | None

    def table(self) -> dict[str, dict[str, Counter[str]]]:
        """Outcome counts by level, then by transport ("any": tests bound to none)."""
        counts: dict[str, dict[str, Counter[str]]] = {}
        for record in self.outcomes.values():
            by_transport = counts.setdefault(record["level"], {})
            by_transport.setdefault(record["transport"], Counter())[record["outcome"]] += 1
        return counts

    def totals(self) -> Counter[str]:
        return Counter(record["outcome"] for record in self.outcomes.values())

    def not_passed(self, outcomes: Sequence[str]) -> list[tuple[str, dict[str, str]]]:
        return sorted((nodeid, rec) for nodeid, rec in self.outcomes.items()
                      if rec["outcome"] in outcomes)


def kit_python(kit: Path, python: str | None) -> str:
    """The interpreter of the kit's own venv (``<kit>/.venv``) unless one is given."""
    if python:
        return python
    candidate = kit / ".venv" / "bin" / "python"
    if not candidate.exists():
        raise SystemExit(f"no {candidate}: create the kit's venv (see README.md) or pass "
                         "--python")
    return str(candidate)


def run_kit_10_dev(kit: Path, python: str, url: str, transports: Sequence[str],
                   timeout: float, verbose: bool, token: str = "") -> KitRun:
    """The kit's own run_tck.py over ``transports``, with tck_plugin.py loaded into it.

    ``token``: the bearer token the plugin sends on GetExtendedAgentCard (none: no
    credentials at all, as the kit alone sends).
    """
    with tempfile.TemporaryDirectory(prefix="tck-10-dev-") as tmp:
        outcomes_path = Path(tmp) / "outcomes.json"
        log = _temp_log("tck-10-dev-")
        cmd = [python, "run_tck.py", "--sut-host", url, "--transport", ",".join(transports),
               "--", "-p", "tck_plugin", f"--webhook-host={WEBHOOK_HOST}",
               f"--outcomes-file={outcomes_path}", "-p", "no:cacheprovider", "-rfEsxX"]
        env = {**os.environ, "PYTHONPATH": str(HERE), TOKEN_VARIABLE: token}
        started = time.monotonic()
        returncode = _run_bounded(cmd, kit, env, log, timeout, verbose)
        seconds = time.monotonic() - started
        if not outcomes_path.exists():
            raise RuntimeError(f"the kit wrote no outcomes (exit {returncode}); see {log}")
        outcomes = json.loads(outcomes_path.read_text())
    report_path = kit / "reports" / "compatibility.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return KitRun(list(transports), outcomes, report, kit_requirements(kit, python), seconds,
                  log, returncode)


def _run_bounded(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], log: Path,
                 timeout: float, verbose: bool) -> int | None:
    """Run ``cmd`` in its own process group; kill the group after ``timeout`` seconds."""
    with log.open("wb") as out:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), start_new_session=True,
                                stdout=None if verbose else out,
                                stderr=None if verbose else subprocess.STDOUT)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            print(f"the kit ran over {timeout:.0f} s: stopped", file=sys.stderr)
            _kill_group(proc)
            return None


_REGISTRY_DUMP = """
import json
from tck.requirements.registry import ALL_REQUIREMENTS
print(json.dumps([{"id": r.id, "level": r.level.value, "title": r.title,
                   "section": r.section, "tags": list(r.tags)} for r in ALL_REQUIREMENTS]))
"""


def kit_requirements(kit: Path, python: str) -> list[dict[str, Any]]:
    """Every requirement the kit defines (its registry), tested or not."""
    out = subprocess.run([python, "-c", _REGISTRY_DUMP], cwd=kit, capture_output=True,
                         text=True, timeout=60, check=False)
    if out.returncode != 0:
        return []
    requirements: list[dict[str, Any]] = json.loads(out.stdout)
    return requirements


def kit_10_dev_summary(run: KitRun) -> str:
    """Per level x transport counts, then totals, as plain text."""
    table = run.table()
    columns = [t for t in (*KIT_TRANSPORTS, "any")
               if any(t in by_t for by_t in table.values())]
    lines = ["A2A 1.0 kit (1.0-dev): tests by level and transport "
             "(passed/failed/skipped, +xfailed where a SHOULD failed)",
             f"{'level':<8}" + "".join(f"{c:>20}" for c in columns)]
    for level in (*LEVELS, "-"):
        if level not in table:
            continue
        cells = [_cell(table[level].get(c, Counter())) for c in columns]
        lines.append(f"{level:<8}" + "".join(f"{c:>20}" for c in cells))
    per_transport = [Counter[str]() for _ in columns]
    for by_t in table.values():
        for i, c in enumerate(columns):
            per_transport[i].update(by_t.get(c, Counter()))
    lines.append(f"{'all':<8}" + "".join(f"{_cell(c):>20}" for c in per_transport))
    totals = run.totals()
    lines.append("total: " + ", ".join(f"{totals[o]} {o}" for o in OUTCOMES if totals[o])
                 + f" of {sum(totals.values())} tests; transports run: "
                 + ", ".join(run.transports) + f"; {run.seconds:.0f} s")
    return "\n".join(lines)


def _cell(counts: Counter[str]) -> str:
    failed = counts["failed"] + counts["error"]
    cell = f"{counts['passed']}/{failed}/{counts['skipped']}"
    if counts["xfailed"] or counts["xpassed"]:
        cell += f" +{counts['xfailed']}xf"
    return cell


def requirement_report(run: KitRun) -> str:
    """The kit's per-requirement verdicts, every requirement of its registry listed, each
    with the outcomes of its tests per transport (the transports that ran)."""
    recorded: dict[str, Any] = run.report.get("per_requirement", {})
    known = run.requirements or [{"id": r, "level": v.get("level", "?"), "title": ""}
                                 for r, v in recorded.items()]
    lines = ["per requirement (the kit's verdict; its tests per transport: "
             "p passed, f failed, s skipped, x xfailed)"]
    counts: Counter[tuple[str, str]] = Counter()
    for req in known:
        rec = recorded.get(req["id"])
        status = rec["status"] if rec else "NOT TESTED"
        counts[(req["level"], status)] += 1
        tests = _tests_by_transport(run, (rec or {}).get("test_ids", []))
        lines.append(f"  {req['id']:<24} {req['level']:<6} {status:<10} {tests:<22}"
                     f" {req.get('title', '')[:56]}")
    lines.append("requirements: " + ", ".join(
        f"{level} {status} {n}" for (level, status), n in sorted(counts.items())))
    summary = run.report.get("summary", {})
    if summary:
        lines.append("the kit's compatibility: " + ", ".join(
            f"{k.replace('_compatibility', '')} {v}" for k, v in summary.items()
            if k.endswith("_compatibility")))
    return "\n".join(lines)


_SHORT = {"passed": "p", "failed": "f", "error": "f", "skipped": "s", "xfailed": "x",
          "xpassed": "X"}


def _tests_by_transport(run: KitRun, test_ids: Sequence[str]) -> str:
    """``jsonrpc 3p1s any 1p``: the outcomes of a requirement's tests, on the transports run."""
    by_transport: dict[str, Counter[str]] = {}
    for test_id in test_ids:
        record = run.outcomes.get(test_id)
        if record is None or record["transport"] not in (*run.transports, "any"):
            continue
        by_transport.setdefault(record["transport"], Counter())[record["outcome"]] += 1
    return " ".join(
        f"{name} " + "".join(f"{n}{_SHORT[o]}" for o, n in sorted(counts.items()))
        for name, counts in sorted(by_transport.items()))


def kit_10_dev_details(run: KitRun, show_skips: bool) -> str:
    """Every test that failed (and, when asked, every skip and xfail) with its reason."""
    wanted = ["failed", "error", "xpassed"] + (["skipped", "xfailed"] if show_skips else [])
    lines = [f"  {rec['outcome']:<8} {rec['level']:<6} {rec['transport']:<9} {nodeid}\n"
             f"           {rec['reason']}" for nodeid, rec in run.not_passed(wanted)]
    return "\n".join(lines) or "  (none)"


# -- the legacy kit line (410ba92 / b03fefc) -------------------------------------------


@dataclass
class CategoryResult:
    """One category's outcomes, and the tests that did not pass with the kit's reason."""

    name: str
    outcomes: Counter[str] = field(default_factory=Counter)
    not_passed: list[tuple[str, str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    @property
    def passed(self) -> int:
        return self.outcomes["passed"]


def run_category(kit: Path, python: str, version: str, name: str, sut_url: str,
                 verbose: bool) -> CategoryResult:
    """Run one category with pytest in the kit's root and read its JSON report."""
    path, markers_10, markers_03 = CATEGORIES[name]
    markers = markers_10 if version == "1.0" else markers_03
    env = dict(os.environ)
    if version == "1.0":
        # Kit 410ba92 sends no A2A-Version header; it merges this JSON into every request.
        env["A2A_AUTH_HEADERS"] = json.dumps({"A2A-Version": "1.0"})
    else:
        env.pop("A2A_AUTH_HEADERS", None)
    with tempfile.TemporaryDirectory(prefix="tck-report-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [python, "-m", "pytest", path, f"--sut-url={sut_url}", "--test-scope=all",
               "--tb=short", "--transports", "jsonrpc", "-p", "no:cacheprovider",
               "--json-report", f"--json-report-file={report}", "-q" if not verbose else "-v"]
        if markers:
            cmd += ["-m", markers]
        started = time.monotonic()
        subprocess.run(cmd, cwd=kit, env=env, check=False, timeout=900,
                       stdout=None if verbose else subprocess.DEVNULL,
                       stderr=None if verbose else subprocess.DEVNULL)
        result = CategoryResult(name, seconds=time.monotonic() - started)
        if not report.exists():
            raise RuntimeError(f"pytest wrote no report for {version} {name}: {' '.join(cmd)}")
        _read_report(json.loads(report.read_text()), result)
    return result


def _read_report(data: dict[str, object], result: CategoryResult) -> None:
    """Count outcomes; for each test not passed keep its id and the kit's last words."""
    tests = data.get("tests")
    for test in tests if isinstance(tests, list) else []:
        outcome = str(test["outcome"])
        result.outcomes[outcome] += 1
        if outcome != "passed":
            result.not_passed.append((outcome, str(test["nodeid"]), _reason(test)))


def _reason(test: dict[str, object]) -> str:
    """The skip message or the last line of the failure, whichever phase produced it."""
    for phase in ("setup", "call", "teardown"):
        info = test.get(phase)
        if not isinstance(info, dict) or info.get("outcome") == "passed":
            continue
        crash = info.get("crash")
        if isinstance(crash, dict) and crash.get("message"):
            return str(crash["message"]).splitlines()[0][:200]
        longrepr = info.get("longrepr")
        if isinstance(longrepr, str) and longrepr:
            return longrepr.strip().splitlines()[-1][:200]
        if isinstance(longrepr, list) and longrepr:
            return str(longrepr[-1])[:200]
    return ""


def run_version(kit: Path, python: str, version: str, categories: Sequence[str],
                verbose: bool = False) -> list[CategoryResult]:
    """All ``categories`` of one legacy kit against one fresh agent (TCK_LEGACY=1)."""
    port = free_port()
    with agent_server(gunicorn_argv(port), port, env={"TCK_LEGACY": "1"}) as url:
        return [run_category(kit, python, version, name, url, verbose) for name in categories]


def summary(version: str, results: Sequence[CategoryResult]) -> str:
    """The per-category P/T table, with mandatory and all beside the SDK's figures."""
    lines = [f"A2A {version} (legacy kit line)",
             f"{'category':<22} {'P/T':>8} {'failed':>7} {'error':>6} {'skipped':>8} {'secs':>6}"]
    for res in results:
        o = res.outcomes
        lines.append(f"{res.name:<22} {res.passed:>3}/{res.total:<4} {o['failed']:>7} "
                     f"{o['error']:>6} {o['skipped']:>8} {res.seconds:>6.1f}")
    sdk = LEGACY_SDK_FIGURES[version]
    names = {r.name for r in results}
    mandatory = [r for r in results if r.name == "mandatory"]
    if mandatory:
        m = mandatory[0]
        lines.append(f"mandatory: {m.passed}/{m.total}   (official SDK: "
                     f"{sdk['mandatory'][0]}/{sdk['mandatory'][1]})")
    if names == set(CATEGORIES):
        passed, total = sum(r.passed for r in results), sum(r.total for r in results)
        lines.append(f"all:       {passed}/{total}   "
                     f"(official SDK: {sdk['all'][0]}/{sdk['all'][1]})")
    return "\n".join(lines)


def details(results: Sequence[CategoryResult], show_skips: bool = False) -> str:
    """Every test that did not pass (skips only when asked), with the kit's reason."""
    lines = []
    for res in results:
        for outcome, nodeid, reason in res.not_passed:
            if outcome == "skipped" and not show_skips:
                continue
            lines.append(f"  {outcome:<7} [{res.name}] {nodeid}\n          {reason}")
    return "\n".join(lines) or "  (none)"


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# -- command line ----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--kit-10-dev", type=Path,
                        help="checkout of a2a-tck 1.0-dev (the A2A 1.0 kit, version 1.0.0)")
    parser.add_argument("--kit-10", type=Path, help="legacy: a2a-tck at 410ba92 (A2A 1.0)")
    parser.add_argument("--kit-03", type=Path, help="legacy: a2a-tck at b03fefc (A2A 0.3)")
    parser.add_argument("--python", default=None,
                        help="interpreter of the kit's venv (default: <kit>/.venv/bin/python)")
    parser.add_argument("--agent", choices=("a2a-wsgi", "sdk"), default="a2a-wsgi",
                        help="1.0-dev: examples/tck_agent.py under gunicorn (default), or the "
                             "official a2a-sdk agent sdk_agent.py under uvicorn")
    parser.add_argument("--grpc", action="store_true",
                        help="1.0-dev: serve gRPC too (ours: a2a serve --grpc on a fresh "
                             "SQLite store; the SDK's: its GrpcHandler) and run its tests")
    parser.add_argument("--transports", default=None,
                        help="1.0-dev: comma-separated subset of the declared transports")
    parser.add_argument("--no-extended-card", action="store_true",
                        help="1.0-dev: the agent declares no extended card (CORE-CAP-003 "
                             "runs, CARD-EXT-001/002 skip)")
    parser.add_argument("--timeout", type=float, default=420.0,
                        help="1.0-dev: stop the kit after this many seconds (default 420)")
    parser.add_argument("--categories", default=",".join(CATEGORIES),
                        help="legacy: comma-separated subset of: " + ", ".join(CATEGORIES))
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    parser.add_argument("--show-skips", action="store_true", help="list skipped tests too")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the kit's output")
    return parser


def _main_10_dev(args: argparse.Namespace, report: dict[str, Any]) -> None:
    kit = args.kit_10_dev.resolve()
    python = kit_python(kit, args.python)
    port = free_port()
    grpc_port = free_port() if args.grpc else None
    # A fresh token per run: the agent serves its extended card to the kit's calls carrying it.
    token = "" if args.agent == "sdk" or args.no_extended_card else secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="tck-store-") as store_dir:
        env = {TOKEN_VARIABLE: token}
        if args.agent == "sdk":
            argv = sdk_argv(port, grpc_port)
        elif grpc_port:
            argv = serve_grpc_argv(port, grpc_port)
            env.update(grpc_env(Path(store_dir), grpc_port))
        else:
            argv = gunicorn_argv(port)
        declared, run = _run_against(args, kit, python, argv, port, grpc_port, env, token)
    _print_10_dev(args, kit, declared, run, token)
    report["1.0-dev"] = {"agent": args.agent, "transports": run.transports,
                         "extended_card": bool(token), "grpc": bool(grpc_port),
                         "seconds": round(run.seconds, 1), "returncode": run.returncode,
                         "outcomes": run.outcomes, "kit_report": run.report}


def _run_against(args: argparse.Namespace, kit: Path, python: str, argv: Sequence[str],
                 port: int, grpc_port: int | None, env: Mapping[str, str],
                 token: str) -> tuple[list[str], KitRun]:
    """Start the agent, read the transports its card declares, run the kit over them."""
    with agent_server(argv, port, env=env) as url:
        if grpc_port:
            _wait_for_port(grpc_port)
        declared = declared_transports(url)
        wanted = declared
        if args.transports:
            wanted = [t.strip() for t in args.transports.split(",") if t.strip()]
            undeclared = sorted(set(wanted) - set(declared))
            if undeclared:
                print(f"not declared by the card (their tests skip): {undeclared}",
                      file=sys.stderr)
        run = run_kit_10_dev(kit, python, url, wanted, args.timeout, args.verbose, token)
    return declared, run


def _print_10_dev(args: argparse.Namespace, kit: Path, declared: Sequence[str], run: KitRun,
                  token: str) -> None:
    print(kit_10_dev_summary(run))
    print(f"card declares: {', '.join(declared) or '(nothing the kit knows)'}; tests of "
          "other transports skip; extended card: "
          + ("declared, the kit's calls for it authenticated" if token else "not declared"))
    print(f"\nnot passed{'' if args.show_skips else ' (skips and xfails not listed)'}:\n"
          f"{kit_10_dev_details(run, args.show_skips)}\n")
    print(requirement_report(run))
    print(f"\nkit log: {run.log}; kit reports: {kit / 'reports'}")


def _main_legacy(args: argparse.Namespace, report: dict[str, Any]) -> None:
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = set(categories) - set(CATEGORIES)
    if unknown:
        raise SystemExit(f"unknown categories {sorted(unknown)}")
    if not _port_free(LEGACY_WEBHOOK_PORT):
        print(f"warning: port {LEGACY_WEBHOOK_PORT} is busy; the kit's push tests need it",
              file=sys.stderr)
    for version, kit in (("1.0", args.kit_10), ("0.3", args.kit_03)):
        if kit is None:
            continue
        kit = kit.resolve()
        started = time.monotonic()
        results = run_version(kit, kit_python(kit, args.python), version, categories,
                              args.verbose)
        print(summary(version, results))
        print(f"({time.monotonic() - started:.0f} s)\nnot passed"
              f"{'' if args.show_skips else ' (skips not listed)'}:\n"
              f"{details(results, args.show_skips)}\n")
        report[version] = {r.name: {"outcomes": dict(r.outcomes), "not_passed": r.not_passed,
                                    "seconds": round(r.seconds, 1)} for r in results}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not (args.kit_10_dev or args.kit_10 or args.kit_03):
        parser.error("give --kit-10-dev, or --kit-10 and/or --kit-03")
    if not GUNICORN.exists():
        parser.error(f"no {GUNICORN}: run this script with the project venv's python")
    report: dict[str, Any] = {}
    if args.kit_10_dev:
        _main_10_dev(args, report)
    if args.kit_10 or args.kit_03:
        _main_legacy(args, report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
