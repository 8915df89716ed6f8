"""Run the fuzz targets, each for a time budget, and say what they executed and found.

    python fuzz/run.py --seconds 60                 # every target, 60 s each
    python fuzz/run.py --seconds 600 jsonrpc rest   # some targets
    python fuzz/run.py --runs 1000000 --seconds 7200 card   # a million inputs (or 2 h)

Each target runs in its own process (atheris + libFuzzer) from its seed corpus
(``fuzz/corpus/<target>``, never written to: new inputs go to a scratch folder) with the
findings' rules: an exception the parser does not document, more than 1 s on one input,
more than ``--rss-limit-mb`` of memory for inputs of at most ``--max-len`` bytes. A finding
is written to ``--artifacts`` (``fuzz/findings`` by default); copy it to
``fuzz/regressions/<target>/`` once fixed, and the tests run it for ever after.

The exit status is 1 when any target found something, else 0.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = ("jsonrpc", "rest", "card", "signed_card", "client_sse", "push_url", "headers",
           "last_event_id")
_EXECUTED = re.compile(rb"stat::number_of_executed_units:\s*(\d+)")


@dataclass
class Outcome:
    target: str
    executed: int
    seconds: float
    returncode: int
    output: str

    @property
    def found(self) -> bool:
        return self.returncode != 0


def run_target(target: str, seconds: int, *, artifacts: Path, max_len: int = 65536,
               rss_limit_mb: int = 1024, runs: int | None = None,
               corpus_out: Path | None = None, python: str = sys.executable) -> Outcome:
    """One target for ``seconds`` (or until ``runs`` inputs, when given, if sooner); its
    executed-input count from libFuzzer's final stats. The inputs it finds go to
    ``corpus_out/<target>`` when given (what ``fuzz/replay.py`` measures coverage on)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{target}-") as scratch:
        if corpus_out is not None:
            scratch = str(corpus_out / target)
            Path(scratch).mkdir(parents=True, exist_ok=True)
        command = [python, str(HERE / f"fuzz_{target}.py"), f"-max_total_time={seconds}",
                   "-timeout=1", f"-rss_limit_mb={rss_limit_mb}", f"-max_len={max_len}",
                   f"-artifact_prefix={artifacts}/{target}-", "-print_final_stats=1",
                   *([f"-runs={runs}"] if runs is not None else []),
                   scratch, str(HERE / "corpus" / target)]
        began = time.monotonic()
        done = subprocess.run(command, capture_output=True, cwd=HERE, timeout=seconds * 3 + 120)
    found = _EXECUTED.findall(done.stderr)
    return Outcome(target, int(found[-1]) if found else 0, time.monotonic() - began,
                   done.returncode, done.stderr.decode("utf-8", "replace"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="*", choices=[[], *TARGETS], default=[],
                        metavar="TARGET", help=f"some of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--seconds", type=int, default=60, help="budget per target")
    parser.add_argument("--runs", type=int, default=None,
                        help="stop a target after this many inputs (if before --seconds)")
    parser.add_argument("--max-len", type=int, default=65536, help="largest input, in bytes")
    parser.add_argument("--rss-limit-mb", type=int, default=1024)
    parser.add_argument("--artifacts", type=Path, default=HERE / "findings")
    parser.add_argument("--corpus-out", type=Path, default=None,
                        help="keep the inputs each target finds in DIR/<target>")
    args = parser.parse_args(argv)
    failed = False
    print(f"{'target':<14} {'inputs':>12} {'seconds':>8}  result")
    for target in args.targets or TARGETS:
        outcome = run_target(target, args.seconds, artifacts=args.artifacts.resolve(),
                             max_len=args.max_len, rss_limit_mb=args.rss_limit_mb,
                             runs=args.runs, corpus_out=args.corpus_out)
        result = "FINDING (see below)" if outcome.found else "ok"
        print(f"{target:<14} {outcome.executed:>12} {outcome.seconds:>8.1f}  {result}",
              flush=True)
        if outcome.found:
            failed = True
            print(outcome.output[-6000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
