"""Run the official A2A conformance kit (a2aproject/a2a-tck) against examples/tck_agent.py.

Not a pytest module: CI cannot fetch the kit, so this is a script a developer
runs by hand (see README.md next to it). For each protocol version it starts a
fresh agent on a free port (the kit is not side-effect free: ListTasks results
depend on how many tasks the server already holds), runs each of the kit's
categories through pytest exactly as the kit's own ``run_tck.py`` selects
them, and prints P/T per category, T counting every selected test and P only
the passed ones (a skip costs as much as a failure), as in
conformance-kit.md.

    python tests/conformance/run_tck.py --kit-10 /tmp/tck-410ba92 \\
        --kit-03 /tmp/tck-b03fefc --python /tmp/tck-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CATEGORIES", "SDK_FIGURES", "CategoryResult", "main", "run_version"]

REPO = Path(__file__).resolve().parents[2]

# (directory, 1.0 marker expression, 0.3 marker expression): what each kit's run_tck.py selects
# with ``--transports jsonrpc``.
CATEGORIES: dict[str, tuple[str, str | None, str | None]] = {
    "mandatory": ("tests/mandatory/", "mandatory or mandatory_protocol or mandatory_jsonrpc",
                  "mandatory_jsonrpc or mandatory_protocol"),
    "capabilities": ("tests/optional/capabilities/", None, None),
    "transport-equivalence": ("tests/optional/multi_transport/", "transport_equivalence",
                              "transport_equivalence"),
    "quality": ("tests/optional/quality/", None, None),
    "features": ("tests/optional/features/", None, None),
}

# The official a2a-sdk with an agent that leaves tasks WORKING (conformance-kit.md).
SDK_FIGURES = {"1.0": {"mandatory": (71, 116), "all": (131, 238)},
               "0.3": {"mandatory": (30, 33), "all": (88, 156)}}

WEBHOOK_PORT = 8888  # the kit's push tests bind it (hard-coded upstream)


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


def free_port() -> int:
    """A port nobody listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def agent_server(port: int) -> Iterator[str]:
    """examples/tck_agent.py on ``port`` in its own process group, killed on exit."""
    env = dict(os.environ, TCK_PORT=str(port), PYTHONPATH=str(REPO))
    env.pop("A2A_BASE_URL", None)
    proc = subprocess.Popen([sys.executable, str(REPO / "examples" / "tck_agent.py")], env=env,
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        _wait_for_card(url, proc)
        yield url
    finally:
        _kill_group(proc)


def _wait_for_card(url: str, proc: subprocess.Popen[bytes]) -> None:
    """Block until the card answers; a server that died says why."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"tck_agent exited with {proc.returncode}:\n{err}")
        try:
            with urllib.request.urlopen(url + "/.well-known/agent-card.json", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"tck_agent did not answer on {url} within 20 s")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server's process group, then kill it if it lingers."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    if proc.stderr:
        proc.stderr.close()


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
        subprocess.run(cmd, cwd=kit, env=env, check=False,
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
    """All ``categories`` of one kit against one fresh agent."""
    with agent_server(free_port()) as url:
        return [run_category(kit, python, version, name, url, verbose) for name in categories]


def summary(version: str, results: Sequence[CategoryResult]) -> str:
    """The per-category P/T table, with mandatory and all beside the SDK's figures."""
    lines = [f"A2A {version}",
             f"{'category':<22} {'P/T':>8} {'failed':>7} {'error':>6} {'skipped':>8} {'secs':>6}"]
    for res in results:
        o = res.outcomes
        lines.append(f"{res.name:<22} {res.passed:>3}/{res.total:<4} {o['failed']:>7} "
                     f"{o['error']:>6} {o['skipped']:>8} {res.seconds:>6.1f}")
    sdk = SDK_FIGURES[version]
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kit-10", type=Path, help="checkout of a2a-tck at 410ba92 (A2A 1.0)")
    parser.add_argument("--kit-03", type=Path, help="checkout of a2a-tck at b03fefc (A2A 0.3)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter of the venv holding the kit's requirements")
    parser.add_argument("--categories", default=",".join(CATEGORIES),
                        help="comma-separated subset of: " + ", ".join(CATEGORIES))
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    parser.add_argument("--show-skips", action="store_true", help="list skipped tests too")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the kit's output")
    args = parser.parse_args(argv)
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = set(categories) - set(CATEGORIES)
    if unknown or not (args.kit_10 or args.kit_03):
        parser.error(f"unknown categories {sorted(unknown)}" if unknown
                     else "give --kit-10 and/or --kit-03")
    if not _port_free(WEBHOOK_PORT):
        print(f"warning: port {WEBHOOK_PORT} is busy; the kit's push tests need it",
              file=sys.stderr)
    report: dict[str, object] = {}
    for version, kit in (("1.0", args.kit_10), ("0.3", args.kit_03)):
        if kit is None:
            continue
        started = time.monotonic()
        results = run_version(kit.resolve(), args.python, version, categories, args.verbose)
        print(summary(version, results))
        print(f"({time.monotonic() - started:.0f} s)\nnot passed"
              f"{'' if args.show_skips else ' (skips not listed)'}:\n"
              f"{details(results, args.show_skips)}\n")
        report[version] = {r.name: {"outcomes": dict(r.outcomes), "not_passed": r.not_passed,
                                    "seconds": round(r.seconds, 1)} for r in results}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
