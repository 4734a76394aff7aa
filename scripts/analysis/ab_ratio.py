#!/usr/bin/env python3
"""Per-case means and the geometric-mean ratio of an A/B log from scripts/device/gemm_wgmma_ab.sh
or scripts/device/gemm_wgmma_env_ab.sh (its "== <tag> round <r>" sections: one value per tag).

Usage: ab_ratio.py LOG [--across]
  default: per tile variant (TILE_N:OVERLAP), each case's TFLOPS under every value of the A/B
           setting (one column per round) and the ratio of each value's mean to the first value's;
  --across: per A/B value, the tile variants side by side, each variant's mean against the first
           variant's in the log (e.g. VARIANTS="256:2 192:0": is the 192-wide tile faster, case by
           case, in the same call).
  --per-ghz: TFLOPS per GHz of the section's mean SM clock instead of TFLOPS (runs made with
           `symmoe bench gemm --power`, whose "power ours" line follows each case): the H200
           runs large GEMMs at its power cap, where the clock a run gets moves with what ran
           before it (bench/RESULTS.md); cases without a power line are left out.
"""
import argparse
import collections
import math
import re


def parse(path, per_ghz=False):
    """(variant, value, op, experts, m) -> [TFLOPS (or TFLOPS per GHz) per round], with values and
    variants in log order."""
    runs = collections.defaultdict(list)
    values, variants, cur = [], [], None
    pending = None  # per_ghz: the last case row's (key, TFLOPS), until its power line
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        if per_ghz:
            m = re.match(r"\s+power ours\s+(\d+) MHz", line)
            if m and pending:
                runs[pending[0]].append(pending[1] / (float(m[1]) / 1000))
                pending = None
                continue
        m = re.match(r"== bench (n\d+ v\d) \S+?=(\S+) round", line) or re.match(r"== ()(\S+) round \d+$", line)
        if m:
            cur = (m[1] or "env", m[2])
            if m[2] not in values:
                values.append(m[2])
            if cur[0] not in variants:
                variants.append(cur[0])
            continue
        f = line.split()
        if cur and len(f) > 8 and f[0] in ("gate_up", "down"):
            key = cur + (f[0], int(f[2]), int(f[3]))
            if per_ghz:
                pending = (key, float(f[8]))
            else:
                runs[key].append(float(f[8]))
    return runs, values, variants


def table(title, columns, key_of, cases, runs):
    """Prints one block: a row per case, a column per entry of `columns` (key_of(column, case)
    names its runs), each with its rounds and its mean's ratio to the first column's."""
    print(title)
    logs = collections.defaultdict(list)
    for case in cases:
        base = runs[key_of(columns[0], case)]
        cells = []
        for c in columns:
            got = runs[key_of(c, case)]
            if not got or not base:
                cells.append("-")
                continue
            r = (sum(got) / len(got)) / (sum(base) / len(base))
            logs[c].append(math.log(r))
            cells.append("/".join(f"{x:.0f}" for x in got) + f" ({r:.3f})")
        print(f"  {case[0]:8s} {case[1]:3d} x {case[2]:5d}  " + "  ".join(cells))
    print("  geomean " + "  ".join(f"{c}: {math.exp(sum(l) / len(l)):.3f}" for c, l in logs.items() if l))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--across", action="store_true", help="compare the tile variants per A/B value")
    ap.add_argument("--per-ghz", action="store_true", help="TFLOPS per GHz (logs of runs with --power)")
    args = ap.parse_args()
    runs, values, variants = parse(args.log, args.per_ghz)
    unit = "TFLOPS per GHz" if args.per_ghz else "TFLOPS"
    all_cases = sorted({k[2:] for k in runs})
    if args.across:
        for v in values:
            table(f"== {v}: {unit} per round for variants {variants}; ratio = mean / mean of {variants[0]}",
                  variants, lambda var, case, v=v: (var, v) + case, all_cases, runs)
        return
    for variant in variants:
        cases = sorted({k[2:] for k in runs if k[0] == variant})
        table(f"== {variant}: {unit} per round for values {values}; ratio = mean / mean of {values[0]}",
              values, lambda val, case, variant=variant: (variant, val) + case, cases, runs)


if __name__ == "__main__":
    main()
