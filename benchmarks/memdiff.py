"""What grew in a worker: the tracemalloc snapshots of ``soak.py --tracemalloc DIR`` compared.

    .venv/bin/python benchmarks/memdiff.py DIR [--top 15] [--skip 1] [--frames 8]

For each worker (PID) it compares the snapshot number ``--skip`` (after warm-up)
with the last, and prints the traced total of each snapshot (does it still
grow or has it levelled off?) and the ``--top`` allocation sites, grouped by
their ``--frames`` innermost frames, that grew most between the two.
"""

from __future__ import annotations

import argparse
import tracemalloc
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--skip", type=int, default=1, help="the baseline snapshot's number")
    parser.add_argument("--frames", type=int, default=8)
    args = parser.parse_args()
    by_pid: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(args.folder.glob("*.snap")):
        by_pid[path.name.split("-")[0]].append(path)
    for pid, paths in sorted(by_pid.items()):
        snaps = [tracemalloc.Snapshot.load(str(path)) for path in paths]
        totals = [sum(stat.size for stat in snap.statistics("filename")) / 1e6 for snap in snaps]
        print(f"worker {pid}: traced MB per snapshot: "
              + " ".join(f"{total:.1f}" for total in totals))
        if len(snaps) <= args.skip + 1:
            continue
        base, last = snaps[args.skip], snaps[-1]
        print(f"  grown from snapshot {args.skip} to {len(snaps) - 1}:")
        for stat in last.compare_to(base, "traceback")[:args.top]:
            print(f"  {stat.size_diff / 1e3:+10.1f} kB {stat.count_diff:+8d} blocks")
            for line in stat.traceback.format(limit=args.frames, most_recent_first=True):
                print(f"      {line}")


if __name__ == "__main__":
    main()
