#!/usr/bin/env python3
"""Summarizes a consumer K-block clock trace of the fp8 wgmma kernel (lines
"TRACE wg W kb I t_issue t_done t_promoted", SM clock of CTA 0, from the timing-only build of
bench/results/gemm_wgmma_kblock_trace.patch).

With "TILE wg W tile T t_fetch t_fetched t_issue0 t_stored" lines as well (the unserialized
trace, bench/results/gemm_wgmma_kblock_trace_unserialized.patch), per warpgroup and tile start:
the wait for the tile's first stage (and the warpgroup's agreement on it), from there to its
K block 0's issue, and from that issue to the end of the previous tile's store (which runs
under that batch).
And with "PROD tile T c_free c_unit c_issued s_free s_unit s_issued" lines (the producer's
copier and scale warp: after the stage-free wait, once the unit is known, after K block 0's
copies are issued), per tile: those phases, and from the copier's K block 0 copies to
consumer warpgroup 0 past its first-stage wait (the stage's latency as the consumers see it).

usage: wgmma_trace.py TRACE.txt KBLOCKS_PER_TILE
Per warpgroup: issue -> done (its batch, queueing behind the other warpgroup's included),
done -> promoted, promoted -> next issue (inside a tile and across a tile boundary; a stage
wait lands here, t_issue is taken after it). Both: the lag of warpgroup 1's issue behind
warpgroup 0's; the share of the traced span in which some batch was between issue and done
(the tensor pipe idled at least the rest); the gaps between consecutive batch completions of
either warpgroup, and the share of the span by which they exceed their low decile (one batch's
execution time when the pipe never idles), split into gaps that end the first K block of a tile
and the others: the idle estimate, and where it falls.
"""
import statistics
import sys

CLOCK_WRAP = 1 << 32  # %clock is 32 bits


def parse(lines):
    """{warpgroup: [(t_issue, t_done, t_promoted)] in K-block order}, clocks relative to the
    earliest of them. The 32-bit clock may wrap inside a trace: every value is first taken as a
    signed offset from one reference within half the wrap (a trace spans far less)."""
    rows = {0: [], 1: []}
    for line in lines:
        p = line.split()
        if len(p) == 8 and p[0] == "TRACE" and p[1] == "wg" and p[3] == "kb":
            rows[int(p[2])].append(tuple(int(x) for x in p[5:8]))
    firsts = [r[0][0] for r in rows.values() if r]
    if not firsts:
        return rows
    ref, half = firsts[0], CLOCK_WRAP // 2
    rows = {wg: [tuple((t - ref + half) % CLOCK_WRAP - half for t in x) for x in r] for wg, r in rows.items()}
    base = min(t for r in rows.values() for x in r for t in x)
    return {wg: [tuple(t - base for t in x) for x in r] for wg, r in rows.items()}


def elapsed(a, b):
    """Cycles from clock a to clock b, across one wrap of the 32-bit clock."""
    return (b - a) % CLOCK_WRAP


def parse_tiles(lines):
    """{warpgroup: [(t_fetch, t_fetched, t_issue0, t_stored)] in tile order} from TILE lines."""
    rows = {0: [], 1: []}
    for line in lines:
        p = line.split()
        if len(p) == 9 and p[0] == "TILE" and p[1] == "wg" and p[3] == "tile":
            rows[int(p[2])].append(tuple(int(x) for x in p[5:9]))
    return rows


def tile_phases(tiles):
    """Per warpgroup, cycle counts per tile start (differences modulo the 32-bit clock): the
    first-stage wait with the warpgroup's agreement, agreement -> K block 0 issue, and issue ->
    previous tile's store done (from the second tile on: the first has no store)."""
    return {wg: {"stage_wait": [elapsed(f, g) for f, g, _, _ in r],
                 "to_issue": [elapsed(g, i) for _, g, i, _ in r],
                 "store": [elapsed(i, t) for _, _, i, t in r[1:]]}
            for wg, r in tiles.items() if r}


def parse_prod(lines):
    """[(c_free, c_unit, c_issued, s_free, s_unit, s_issued)] in tile order from PROD lines."""
    rows = []
    for line in lines:
        p = line.split()
        if len(p) == 9 and p[0] == "PROD" and p[1] == "tile":
            rows.append(tuple(int(x) for x in p[3:9]))
    return rows


def prod_phases(prod, tiles):
    """Cycle counts per tile (modulo the 32-bit clock): the copier's and the scale warp's
    stage-free -> unit known -> K block 0 issued, and copier issued -> consumer warpgroup 0 past
    the tile's first-stage wait (TILE lines of warpgroup 0, matched by tile index)."""
    wg0 = tiles.get(0, [])
    return {"copier_unit": [elapsed(r[0], r[1]) for r in prod], "copier_issue": [elapsed(r[1], r[2]) for r in prod],
            "scaler_unit": [elapsed(r[3], r[4]) for r in prod], "scaler_issue": [elapsed(r[4], r[5]) for r in prod],
            "to_consumer": [elapsed(r[2], t[1]) for r, t in zip(prod, wg0)]}


def quantiles(v):
    """(median, p10, p90, n) of a non-empty list."""
    s = sorted(v)
    return statistics.median(s), s[len(s) // 10], s[9 * len(s) // 10], len(s)


def merged_busy(intervals):
    """Total length covered by the union of (start, end) intervals."""
    ivs = sorted(intervals)
    busy, cur_a, cur_b = 0, ivs[0][0], ivs[0][1]
    for a, b in ivs[1:]:
        if a > cur_b:
            busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    return busy + cur_b - cur_a


def summarize(rows, kpt):
    """A dict of the trace's statistics (lists of cycle counts and shares in percent)."""
    out = {"wg": {}}
    for wg, r in rows.items():
        if not r:
            continue
        out["wg"][wg] = {
            "issue_done": [b - a for a, b, _ in r],
            "done_promoted": [c - b for _, b, c in r],
            "promoted_issue": [r[i + 1][0] - r[i][2] for i in range(len(r) - 1) if (i + 1) % kpt != 0],
            "tile_boundary": [r[i + 1][0] - r[i][2] for i in range(len(r) - 1) if (i + 1) % kpt == 0],
        }
    n = min(len(rows[0]), len(rows[1]))
    if n < 2:
        return out
    out["lag"] = [rows[1][i][0] - rows[0][i][0] for i in range(n)]
    ivs = [(a, b) for r in rows.values() for a, b, _ in r[:n]]
    start, end = min(a for a, _ in ivs), max(b for _, b in ivs)
    out["span"], out["kblocks"] = end - start, n
    out["busy_pct"] = 100.0 * merged_busy(ivs) / out["span"]
    # Consecutive batch completions of either warpgroup: with the tensor pipe never idle they
    # are one batch's execution apart; the low decile estimates that time, the excess is idle.
    done = sorted((b, i) for r in rows.values() for i, (_, b, _) in enumerate(r[:n]))
    gaps = [(y - x, j) for (x, _), (y, j) in zip(done, done[1:])]
    floor = sorted(g for g, _ in gaps)[len(gaps) // 10]
    completed = done[-1][0] - done[0][0]
    excess = [(max(0, g - floor), j) for g, j in gaps]
    out["completion_gaps"] = [g for g, _ in gaps]
    out["gap_floor"] = floor
    out["idle_pct"] = 100.0 * sum(e for e, _ in excess) / completed
    out["idle_tile_start_pct"] = 100.0 * sum(e for e, j in excess if j % kpt == 0) / completed
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        lines = f.readlines()
    rows = parse(lines)
    tiles = parse_tiles(lines)
    phases = tile_phases(tiles)
    prod = parse_prod(lines)
    kpt = int(argv[2])
    s = summarize(rows, kpt)

    def q(v):
        if not v:
            return "n 0"
        med, p10, p90, n = quantiles(v)
        return f"median {med:7.0f}  p10 {p10:7.0f}  p90 {p90:7.0f}  n {n}"

    for wg, w in s["wg"].items():
        print(f"wg {wg}: {len(w['issue_done'])} K blocks")
        print("  issue -> done        ", q(w["issue_done"]))
        print("  done -> promoted     ", q(w["done_promoted"]))
        print("  promoted -> issue    ", q(w["promoted_issue"]))
        if w["tile_boundary"]:
            print("  tile boundary        ", q(w["tile_boundary"]))
        if wg in phases:
            t = phases[wg]
            print("  tile start: first-stage wait", q(t["stage_wait"]))
            print("  tile start: -> K block 0 issue", q(t["to_issue"]))
            print("  tile start: issue -> previous tile stored", q(t["store"]))
    if prod:
        pp = prod_phases(prod, tiles)
        print(f"producer: {len(prod)} tiles")
        print("  copier: stage free -> unit published   ", q(pp["copier_unit"]))
        print("  copier: unit -> K block 0 copies issued", q(pp["copier_issue"]))
        print("  scaler: stage free -> unit read        ", q(pp["scaler_unit"]))
        print("  scaler: unit -> K block 0 scales issued", q(pp["scaler_issue"]))
        print("  copies issued -> wg 0 past its wait    ", q(pp["to_consumer"]))
    if "lag" not in s:
        print("fewer than 2 K blocks traced for both warpgroups: no joint statistics")
        return
    print("wg1 issue - wg0 issue, same K block:", q(s["lag"]))
    print(f"span {s['span']} cycles over {s['kblocks']} K blocks per warpgroup "
          f"({s['span'] / s['kblocks']:.0f} per K block); some batch in flight {s['busy_pct']:.1f} %")
    print("between completions  ", q(s["completion_gaps"]))
    print(f"idle beyond the p10 completion gap ({s['gap_floor']}): {s['idle_pct']:.1f} % of the span, "
          f"{s['idle_tile_start_pct']:.1f} % in gaps that end a tile's first K block")


if __name__ == "__main__":
    main(sys.argv)
