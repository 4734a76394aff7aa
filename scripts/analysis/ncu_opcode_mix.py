#!/usr/bin/env python3
"""Instruction mix of kernels from their per-instruction execution counts (the *_sass.csv that
`ncu --import R --page source --print-source sass --csv` writes; scripts/device/gemm_ncu.sh and
gemm_vs_deepgemm_ncu.sh with SOURCE=1): warp-level instructions by opcode, and by execution
count (instructions executed equally often form one loop level: per K block and warp, per tile,
...), so two kernels' loops can be compared line for line.

usage: ncu_opcode_mix.py A_sass.csv [B_sass.csv ...] [--top 25] [--levels 6]
"""
import argparse
import collections
import csv
import os


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    at = next(i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"])
    out = []
    for r in rows[at + 1:]:
        if len(r) < 3:
            continue
        src = r[1].strip()
        words = src.split()
        if not words:
            continue
        op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        out.append((op.split(".")[0], float(r[2] or 0)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--levels", type=int, default=6)
    args = ap.parse_args()
    for path in args.csv:
        d = load(path)
        total = sum(n for _, n in d)
        print(f"== {os.path.basename(path)}: {total / 1e6:.1f} M warp instructions, {len(d)} SASS lines")
        by_op = collections.Counter()
        for op, n in d:
            by_op[op] += n
        for op, n in by_op.most_common(args.top):
            print(f"  {op:12} {n / 1e6:8.2f} M")
        levels = collections.Counter()
        for _, n in d:
            levels[n] += 1
        print("  loop levels (executions x lines = instructions):")
        for n, lines in sorted(levels.items(), key=lambda x: -x[0] * x[1])[: args.levels]:
            print(f"    {n:>12.0f} x {lines:4d} = {n * lines / 1e6:7.1f} M")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
