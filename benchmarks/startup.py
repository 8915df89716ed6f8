"""Weight at rest: import times, the ``a2a --version`` command, and idle memory of a server.

    .venv/bin/python benchmarks/startup.py                 # ~1 minute
    .venv/bin/python benchmarks/startup.py --runs 20 --pss-rounds 5
    .venv/bin/python benchmarks/startup.py --no-sdk        # without benchmarks/.venv-sdk
    .venv/bin/python benchmarks/startup.py --ours-venv benchmarks/.venv-ours   # as shipped

``--ours-venv DIR`` runs our side from another venv: ``python3 -m venv benchmarks/.venv-ours
&& benchmarks/.venv-ours/bin/pip install .`` is the package as a user installs it (no editable
finder, no test extras: OpenTelemetry, which the test extras install and our telemetry then
uses, costs a worker about 3 MB). The default is the interpreter running this script.

Each command runs in a fresh process, ``--runs`` times, interleaved (every command once per
round, the order rotating), and the median wall time from spawn to exit is reported with the
process's peak RSS. The official SDK's nearest equivalents run from its own venv
(``benchmarks/.venv-sdk``, README.md) for context, next to a bare ``python -c pass``.

Idle memory: ``a2a serve benchmarks.apps.ours:app --workers 1`` (master and worker) and the
SDK app of ``benchmarks/apps/sdk.py`` under uvicorn, one worker (one process), as ``run.py``
starts them. Each is started fresh per round, asked for its card once (so both have answered
a request), left alone for ``--settle`` seconds, and then the PSS of every process in its
group is summed (``/proc/PID/smaps_rollup``: shared pages are split between the processes
that map them, so master and worker are not counted twice).

Goals (issue 33): ``import a2a_wsgi`` and ``a2a --version`` at most 0.15 s; our idle PSS at
most the SDK's in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import (  # noqa: E402  (the checkout's root must be on the path first)
    SDK_VENV,
    Server,
    free_port,
    gunicorn_argv,
    start,
    stop,
    uvicorn_argv,
)

__all__ = ["main"]

#: Import-time goal of issue 33, seconds (median of fresh processes).
GOAL_S = 0.15
PYTHON = Path(sys.executable)
TIME = Path("/usr/bin/time").exists()


@dataclass
class Command:
    """One command timed from spawn to exit."""

    name: str
    argv: list[str]
    goal: float | None = None


def commands(with_sdk: bool) -> list[Command]:
    py = str(PYTHON)
    found = [
        Command("python -c pass", [py, "-c", "pass"]),
        Command("import a2a_wsgi", [py, "-c", "import a2a_wsgi"], GOAL_S),
        Command("a2a --version", [str(PYTHON.parent / "a2a"), "--version"], GOAL_S),
        Command("import a2a_client", [py, "-c", "import a2a_client"]),
        Command("import a2a_core", [py, "-c", "import a2a_core"]),
        # what an app module really pulls in: the names it uses, and the app built
        Command("from a2a_wsgi import A2AApp", [py, "-c", "from a2a_wsgi import A2AApp"]),
        Command("examples.echo app built", [py, "-c", "import examples.echo"]),
        Command("from a2a_client import A2AClient",
                [py, "-c", "from a2a_client import A2AClient"]),
    ]
    if with_sdk:
        sdk = str(SDK_VENV / "bin" / "python")
        found += [
            Command("sdk: python -c pass", [sdk, "-c", "pass"]),
            # the SDK's server package and what an app needs from it (benchmarks/apps/sdk.py)
            Command("sdk: server imports", [sdk, "-c", (
                "from a2a.server.request_handlers import DefaultRequestHandler;"
                "from a2a.server.routes import create_jsonrpc_routes;"
                "from a2a.server.tasks import InMemoryTaskStore")]),
            Command("sdk: benchmarks.apps.sdk app built",
                    [sdk, "-c", "import benchmarks.apps.sdk"]),
            Command("sdk: import a2a.client", [sdk, "-c", "import a2a.client"]),
        ]
    return found


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds from spawn to exit, and the command's peak RSS in MB.

    The peak comes from ``/usr/bin/time``: a child forked from this (Python) process would
    count this process's pages in its own ``ru_maxrss`` until its exec.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.NamedTemporaryFile("r") as peak:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", peak.name, *argv] if TIME else argv
        began = time.perf_counter()
        proc = subprocess.run(wrapped, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - began
        if proc.returncode != 0:
            raise RuntimeError(f"{argv} exited {proc.returncode}: {proc.stderr.decode()}")
        text = peak.read().strip()
    return elapsed, (int(text.splitlines()[-1]) / 1024 if text else float("nan"))


def group_pss_mb(pgid: int) -> tuple[float, int]:
    """Summed PSS (MB) of every live process in a process group, and how many there are."""
    total_kb = 0
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != pgid:
                continue
            with open(f"/proc/{entry}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total_kb += int(line.split()[1])
                        count += 1
                        break
        except (OSError, ProcessLookupError):
            continue
    return total_kb / 1024, count


def idle_pss(with_sdk: bool, rounds: int, settle: float) -> dict[str, list[tuple[float, int]]]:
    """Idle PSS of ours (master + worker) and the SDK's (one process), fresh each round."""
    found: dict[str, list[tuple[float, int]]] = {"ours": []}
    if with_sdk:
        found["sdk"] = []
    with tempfile.TemporaryDirectory(prefix="a2a-startup-") as tmp:
        for index in range(rounds):
            names = list(found)
            names = names[index % len(names):] + names[:index % len(names)]
            for name in names:
                port = free_port()
                argv = (gunicorn_argv("benchmarks.apps.ours:app", port, 1) if name == "ours"
                        else uvicorn_argv(port, 1))
                argv[0] = str(PYTHON) if name == "ours" else argv[0]
                server = Server(name, argv, {}, port)
                start(server, Path(tmp))
                try:
                    time.sleep(settle)
                    assert server.proc is not None
                    found[name].append(group_pss_mb(server.proc.pid))
                finally:
                    stop(server)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh processes per command")
    parser.add_argument("--pss-rounds", type=int, default=3, help="server starts per server")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds a server is left idle before its PSS is read")
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDK")
    parser.add_argument("--no-pss", action="store_true", help="imports and commands only")
    parser.add_argument("--ours-venv", type=Path, help="run our side from this venv")
    args = parser.parse_args(argv)
    global PYTHON
    if args.ours_venv:
        PYTHON = args.ours_venv.absolute() / "bin" / "python"
    with_sdk = not args.no_sdk and (SDK_VENV / "bin" / "python").exists()
    if not args.no_sdk and not with_sdk:
        print(f"(no SDK venv at {SDK_VENV}: SDK rows skipped)")
    cmds = commands(with_sdk)
    samples: dict[str, list[tuple[float, float]]] = {c.name: [] for c in cmds}
    for c in cmds:  # warm the page cache once, untimed
        timed(c.argv)
    for index in range(args.runs):
        turn = cmds[index % len(cmds):] + cmds[:index % len(cmds)]
        for c in turn:
            samples[c.name].append(timed(c.argv))
    print(f"{'command':40} {'median s':>9} {'min s':>7} {'max s':>7} {'peak RSS MB':>12}  goal")
    missed = 0
    for c in cmds:
        walls = [wall for wall, _ in samples[c.name]]
        rss = statistics.median(mb for _, mb in samples[c.name])
        median = statistics.median(walls)
        verdict = ""
        if c.goal is not None:
            met = median <= c.goal
            missed += not met
            verdict = f"<= {c.goal:.2f} s {'MET' if met else 'MISSED'}"
        print(f"{c.name:40} {median:9.3f} {min(walls):7.3f} {max(walls):7.3f} {rss:12.1f}  "
              f"{verdict}")
    if not args.no_pss:
        found = idle_pss(with_sdk, args.pss_rounds, args.settle)
        print(f"\nidle PSS after one card GET and {args.settle:g} s "
              f"(median of {args.pss_rounds} fresh starts):")
        for name, rows in found.items():
            pss = [mb for mb, _ in rows]
            procs = rows[0][1] if rows else 0
            label = ("ours: a2a serve --workers 1 (master + worker)" if name == "ours"
                     else "sdk: uvicorn --workers 1 (one process)")
            print(f"  {label:48} {statistics.median(pss):6.1f} MB  "
                  f"({', '.join(f'{mb:.1f}' for mb in pss)}; {procs} processes)")
        if "sdk" in found:
            ours = statistics.median(mb for mb, _ in found["ours"])
            sdk = statistics.median(mb for mb, _ in found["sdk"])
            met = ours <= sdk
            missed += not met
            print(f"target idle PSS ours <= sdk: {ours:.1f} MB vs {sdk:.1f} MB "
                  f"{'MET' if met else 'MISSED'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
