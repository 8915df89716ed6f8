"""Run inputs through a target without the fuzzer: to reproduce a finding with its whole
traceback, or to measure (under ``coverage run``) what a corpus reaches.

    python fuzz/replay.py TARGET FILE_OR_FOLDER...

Every file given (or held by a folder given) is passed to the target's ``check``; the first
finding raises, with its traceback, and names the file.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path

from run import TARGETS


def replay(target: str, paths: list[Path]) -> int:
    check = importlib.import_module(f"fuzz_{target}").check
    files = [f for p in paths if p.exists()  # (a target without kept findings has no folder)
             for f in (sorted(p.iterdir()) if p.is_dir() else [p])]
    for path in files:
        try:
            check(path.read_bytes())
        except BaseException:
            print(f"finding: {path}", file=sys.stderr)
            raise
    return len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    print(f"{args.target}: {replay(args.target, args.paths)} inputs, no finding")


if __name__ == "__main__":
    main()
