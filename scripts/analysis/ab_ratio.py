#!/usr/bin/env python3
"""Per-case means and the geometric-mean ratio of an A/B log from scripts/device/gemm_wgmma_ab.sh.

Usage: ab_ratio.py LOG  — prints, per tile variant, each case's TFLOPS under every value of the
A/B setting (one column per round) and the ratio of each value's mean to the first value's.
"""
import collections
import math
import re
import sys


def main(path):
    runs = collections.defaultdict(list)  # (variant, value, op, experts, m) -> [TFLOPS per round]
    values, cur = [], None
    for line in open(path):
        m = re.match(r"== bench (n\d+ v\d) \S+?=(\S+) round", line)
        if m:
            cur = (m[1], m[2])
            if m[2] not in values:
                values.append(m[2])
            continue
        f = line.split()
        if cur and len(f) > 8 and f[0] in ("gate_up", "down"):
            runs[cur + (f[0], int(f[2]), int(f[3]))].append(float(f[8]))
    for variant in sorted({k[0] for k in runs}):
        print(f"== {variant}: TFLOPS per round for values {values}; ratio = mean / mean of {values[0]}")
        logs = collections.defaultdict(list)
        for case in sorted({k[2:] for k in runs if k[0] == variant}):
            base = runs[(variant, values[0]) + case]
            cells = []
            for v in values:
                got = runs[(variant, v) + case]
                r = (sum(got) / len(got)) / (sum(base) / len(base))
                logs[v].append(math.log(r))
                cells.append("/".join(f"{x:.0f}" for x in got) + f" ({r:.3f})")
            print(f"  {case[0]:8s} {case[1]:3d} x {case[2]:5d}  " + "  ".join(cells))
        print("  geomean " + "  ".join(f"{v}: {math.exp(sum(l) / len(l)):.3f}" for v, l in logs.items()))


if __name__ == "__main__":
    main(sys.argv[1])
