#!/usr/bin/env python3
"""Summarizes a consumer K-block clock trace of the fp8 wgmma kernel (lines
"TRACE wg W kb I t_issue t_done t_promoted", SM clock of CTA 0; a timing-only build).

usage: wgmma_trace.py TRACE.txt KBLOCKS_PER_TILE
Per warpgroup: issue -> done (its batch, queueing behind the other warpgroup's included),
done -> promoted, promoted -> next issue (inside a tile and across a tile boundary). Both:
the lag of warpgroup 1's issue behind warpgroup 0's; the share of the traced span in which some
batch was between issue and done (the tensor pipe idled at least the rest); the gaps between
consecutive batch completions of either warpgroup, and the share of the span by which they
exceed their low decile (one batch's execution time when the pipe never idles): the idle estimate.
"""
import statistics
import sys

M = 1 << 32
rows = {0: [], 1: []}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 8 and p[0] == "TRACE":
        rows[int(p[2])].append(tuple(int(x) for x in p[5:8]))
kpt = int(sys.argv[2])
base = min(r[0][0] for r in rows.values() if r)
def rel(t):
    return (t - base) % M
for wg, r in rows.items():
    r[:] = [tuple(rel(t) for t in x) for x in r]
def q(v):
    v = sorted(v)
    return f"median {statistics.median(v):7.0f}  p10 {v[len(v)//10]:7.0f}  p90 {v[9*len(v)//10]:7.0f}  n {len(v)}"
for wg, r in rows.items():
    if not r:
        continue
    print(f"wg {wg}: {len(r)} K blocks")
    print("  issue -> done        ", q([b - a for a, b, c in r]))
    print("  done -> promoted     ", q([c - b for a, b, c in r]))
    inner = [r[i + 1][0] - r[i][2] for i in range(len(r) - 1) if (i + 1) % kpt != 0]
    edge = [r[i + 1][0] - r[i][2] for i in range(len(r) - 1) if (i + 1) % kpt == 0]
    print("  promoted -> issue    ", q(inner))
    if edge:
        print("  tile boundary        ", q(edge))
n = min(len(rows[0]), len(rows[1]))
if n:
    d = [rows[1][i][0] - rows[0][i][0] for i in range(n)]
    print("wg1 issue - wg0 issue, same K block:", q(d))
    ivs = sorted((a, b) for r in rows.values() for a, b, c in r[:n])
    start, end = ivs[0][0], max(b for a, b in ivs)
    busy, cur_a, cur_b = 0, ivs[0][0], ivs[0][1]
    for a, b in ivs[1:]:
        if a > cur_b:
            busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    busy += cur_b - cur_a
    span = end - start
    print(f"span {span} cycles over {n} K blocks per warpgroup ({span / n:.0f} per K block); "
          f"some batch in flight {100 * busy / span:.1f} %")
    # Consecutive batch completions of either warpgroup: with the tensor pipe never idle they
    # are one batch's execution apart; the low decile estimates that time, the excess is idle.
    done = sorted(b for r in rows.values() for a, b, c in r[:n])
    gaps = [y - x for x, y in zip(done, done[1:])]
    floor = sorted(gaps)[len(gaps) // 10]
    print("between completions  ", q(gaps))
    print(f"idle beyond the p10 completion gap ({floor}): {100 * sum(g - floor for g in gaps) / (done[-1] - done[0]):.1f} % of the span")
