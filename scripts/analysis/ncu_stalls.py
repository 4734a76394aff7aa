#!/usr/bin/env python3
"""Summarizes the per-instruction stall samples of one kernel (the *_sass.csv that
scripts/device/gemm_ncu.sh writes): samples by stall reason, by execution count (instructions
executed equally often form one loop level: per K block, per tile, ...), the opcodes of the
busiest level, and the hottest instructions.

usage: ncu_stalls.py ncu_<tag>_sass.csv [--top 15]
"""
import argparse
import collections
import csv
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    header_at = next((i for i, r in enumerate(rows) if "Warp Stall Sampling (All Samples)" in r), None)
    if header_at is None:
        print(f"{args.csv}: no 'Warp Stall Sampling (All Samples)' column (not a --page source csv?)", file=sys.stderr)
        return 1
    hdr, data = rows[header_at], [r for r in rows[header_at + 1:] if len(r) == len(rows[header_at])]
    i_s, i_e = hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
    reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    num = lambda v: float(v or 0)
    total = sum(num(r[i_s]) for r in data)
    if total == 0:
        print("no samples", file=sys.stderr)
        return 1
    pct = lambda v: 100.0 * v / total
    opcode = lambda r: (r[1].split()[1] if r[1].startswith("@") else r[1].split()[0]).split(".")[0]

    print(f"{len(data)} instructions, {total:.0f} samples")
    by_reason = collections.Counter()
    for r in data:
        for i in reasons:
            by_reason[hdr[i][6:]] += num(r[i])
    print("by stall reason: " + ", ".join(f"{k} {pct(v):.1f}%" for k, v in by_reason.most_common(10)))

    levels = collections.defaultdict(list)
    for r in data:
        levels[r[i_e]].append(r)
    print("by execution count (samples, instructions):")
    ranked = sorted(levels.items(), key=lambda kv: -sum(num(r[i_s]) for r in kv[1]))
    for execs, rs in ranked[:8]:
        print(f"  {execs:>10s} x: {pct(sum(num(r[i_s]) for r in rs)):5.1f}%  {len(rs)} instructions")
    busiest = ranked[0][1]
    ops = collections.Counter()
    counts = collections.Counter()
    for r in busiest:
        ops[opcode(r)] += num(r[i_s])
        counts[opcode(r)] += 1
    print("busiest level by opcode: " + ", ".join(f"{k} {pct(v):.1f}% ({counts[k]})" for k, v in ops.most_common(12)))
    print(f"top {args.top} instructions:")
    for r in sorted(data, key=lambda r: -num(r[i_s]))[: args.top]:
        top = sorted(((num(r[i]), hdr[i][6:]) for i in reasons), reverse=True)[:2]
        why = " ".join(f"{n}={pct(v):.1f}" for v, n in top if v > 0)
        print(f"  {pct(num(r[i_s])):5.1f}%  x{r[i_e]:>9s}  {r[1][:64]:64s} {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
