"""Summarise ``benchmarks/gctrace`` logs: per process and generation, count, total and max ms."""

from __future__ import annotations

import sys
from collections import defaultdict


def main(path: str = "/tmp/a2a-gc.log") -> None:
    rows: dict[tuple[str, str], list[float]] = defaultdict(list)
    tracked: dict[str, str] = {}
    for line in open(path):
        pid, _t, gen, ms, *rest = line.split()
        rows[(pid, gen)].append(float(ms.split("=")[1]))
        if gen == "gen=2":
            tracked[pid] = " ".join(rest[1:])
    for (pid, gen), times in sorted(rows.items()):
        print(f"{pid} {gen}: {len(times)} collections, total {sum(times):.0f} ms, "
              f"max {max(times):.1f} ms  {tracked.get(pid, '') if gen == 'gen=2' else ''}")


if __name__ == "__main__":
    main(*sys.argv[1:])
