#!/usr/bin/env python3
"""Tests of the analysis scripts that A/B conclusions and trace summaries rest on
(scripts/analysis/wgmma_trace.py, scripts/analysis/ab_ratio.py, sass_compare.py) and of the
scaler loop guard's count (scripts/check-scaler-loop.py), on synthetic inputs whose answers are
known in closed form."""
import importlib.util
import io
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ANALYSIS = os.path.join(ROOT, "scripts", "analysis")
sys.path.insert(0, ANALYSIS)  # the scripts import their shared sass_listing module


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ANALYSIS, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


wgmma_trace = load("wgmma_trace")
sass_listing = load("sass_listing")
ab_ratio = load("ab_ratio")
sass_compare = load("sass_compare")


def synthetic_trace(kpt, tiles, batch, idle_at_tile_start, queue=150, promote=40, origin=0):
    """TRACE lines of two warpgroups whose batches run back to back on one tensor pipe (wg 0's
    K block i, then wg 1's), each `batch` cycles, with `idle_at_tile_start` idle cycles before
    every tile's first batch but the first tile's; clocks start at `origin` (mod 2^32)."""
    lines, t = [], 0
    for kb in range(kpt * tiles):
        if kb and kb % kpt == 0:
            t += idle_at_tile_start
        for wg in (0, 1):
            t += batch
            done = t
            vals = (done - queue, done, done + promote)
            lines.append("TRACE wg %d kb %d %d %d %d\n" % (wg, kb, *((origin + v) % (1 << 32) for v in vals)))
    return lines


class WgmmaTraceTest(unittest.TestCase):
    def test_idle_at_tile_boundaries_is_found_and_placed(self):
        kpt, tiles, batch, idle = 4, 3, 100, 300
        s = wgmma_trace.summarize(wgmma_trace.parse(synthetic_trace(kpt, tiles, batch, idle)), kpt)
        completions = 2 * kpt * tiles
        completed = (completions - 1) * batch + (tiles - 1) * idle
        self.assertEqual(s["gap_floor"], batch)
        self.assertAlmostEqual(s["idle_pct"], 100.0 * (tiles - 1) * idle / completed)
        self.assertAlmostEqual(s["idle_tile_start_pct"], s["idle_pct"])
        # Issue -> done is the queue time of every batch; the lag of wg 1 is one batch.
        self.assertEqual(set(s["wg"][0]["issue_done"]), {150})
        self.assertEqual(set(s["lag"]), {batch})
        # Inside a tile a warpgroup issues its next batch 2 batches - queue - promote later.
        self.assertEqual(set(s["wg"][1]["promoted_issue"]), {2 * batch - 150 - 40})
        self.assertEqual(set(s["wg"][1]["tile_boundary"]), {2 * batch - 150 - 40 + idle})
        # The pipe is covered by some batch except idle - queue at each boundary.
        span = completed + batch + 150 - batch  # first issue = first done - queue
        self.assertEqual(s["span"], span)
        self.assertAlmostEqual(s["busy_pct"], 100.0 * (span - (tiles - 1) * (idle + batch - 150)) / span)

    def test_no_idle_means_zero(self):
        s = wgmma_trace.summarize(wgmma_trace.parse(synthetic_trace(4, 3, 100, 0)), 4)
        self.assertEqual(s["idle_pct"], 0.0)
        self.assertEqual(s["busy_pct"], 100.0)

    def test_clock_wrap(self):
        plain = wgmma_trace.summarize(wgmma_trace.parse(synthetic_trace(4, 3, 100, 300)), 4)
        wrapped = wgmma_trace.summarize(
            wgmma_trace.parse(synthetic_trace(4, 3, 100, 300, origin=(1 << 32) - 1000)), 4)
        self.assertEqual(plain, wrapped)

    def test_other_lines_are_ignored_and_one_warpgroup_is_not_an_error(self):
        lines = ["commit: x\n", "TRACE wg 0 kb 0 10 20 30\n", "TRACE wg 0 kb 1 40 50 60\n", "garbage\n"]
        s = wgmma_trace.summarize(wgmma_trace.parse(lines), 2)
        self.assertNotIn("lag", s)
        self.assertEqual(s["wg"][0]["issue_done"], [10, 10])

    def test_tile_phases(self):
        lines = ["TRACE wg 0 kb 0 10 20 30\n",
                 "TILE wg 0 tile 0 100 400 450 460\n",
                 "TILE wg 0 tile 1 %d %d %d %d\n" % ((1 << 32) - 50, 250, 300, 2300),
                 "TILE wg 1 tile 0 100 150 170 170\n"]
        t = wgmma_trace.tile_phases(wgmma_trace.parse_tiles(lines))
        self.assertEqual(t[0]["stage_wait"], [300, 300])  # the second across the clock's wrap
        self.assertEqual(t[0]["to_issue"], [50, 50])
        self.assertEqual(t[0]["store"], [2000])  # the first tile has no store
        self.assertEqual(t[1]["store"], [])
        self.assertEqual(len(wgmma_trace.parse(lines)[0]), 1)  # TILE lines are not K blocks

    def test_producer_phases(self):
        lines = ["TILE wg 0 tile 0 100 3000 3050 3060\n",
                 "PROD tile 0 10 1010 1100 20 1500 2000\n",
                 "PROD tile 1 %d 950 1000 5 6 7\n" % ((1 << 32) - 50)]
        p = wgmma_trace.prod_phases(wgmma_trace.parse_prod(lines), wgmma_trace.parse_tiles(lines))
        self.assertEqual(p["copier_unit"], [1000, 1000])  # the second across the clock's wrap
        self.assertEqual(p["copier_issue"], [90, 50])
        self.assertEqual(p["scaler_unit"], [1480, 1])
        self.assertEqual(p["scaler_issue"], [500, 1])
        self.assertEqual(p["to_consumer"], [1900])  # tile 1 has no consumer line

    def test_command_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.writelines(synthetic_trace(4, 3, 100, 300))
        try:
            out = subprocess.run([sys.executable, os.path.join(ANALYSIS, "wgmma_trace.py"), f.name, "4"],
                                 capture_output=True, text=True, check=True).stdout
        finally:
            os.unlink(f.name)
        self.assertIn("idle beyond the p10 completion gap (100): 20.7 % of the span", out)


def case_line(op, experts, m, tflops):
    return "  %-8s   fp8 %4d %5d   4096   7168 w128x192      465.9 %8.1f      778  16.9%%\n" % (op, experts, m, tflops)


def power_line(mhz):
    return "           power ours                   %d MHz (min %d), 690 W (max 700), power cap 100 %%\n" % (mhz, mhz)


class AbRatioTest(unittest.TestCase):
    LOG = ["commit: x\n",
           "== base round 1\n", case_line("gate_up", 8, 1024, 1000), power_line(1400),
           case_line("down", 32, 4096, 900), power_line(1500),
           "           DeepGEMM 128x192 s4       420.5 us   1144.1 TFLOPS  ours  0.90x\n",
           "== probe round 1\n", case_line("gate_up", 8, 1024, 1100), power_line(1100),
           case_line("down", 32, 4096, 990), power_line(1500),
           "== base round 2\n", case_line("gate_up", 8, 1024, 1000), power_line(1400),
           case_line("down", 32, 4096, 900), power_line(1500),
           "== probe round 2\n", case_line("gate_up", 8, 1024, 1100), power_line(1100),
           case_line("down", 32, 4096, 990), power_line(1500)]

    def write(self):
        f = tempfile.NamedTemporaryFile("w", suffix=".log", delete=False)
        f.writelines(self.LOG)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_parse_rounds_and_per_ghz(self):
        path = self.write()
        runs, values, variants = ab_ratio.parse(path)
        self.assertEqual(values, ["base", "probe"])
        self.assertEqual(variants, ["env"])
        self.assertEqual(runs[("env", "probe", "down", 32, 4096)], [990.0, 990.0])
        runs, _, _ = ab_ratio.parse(path, per_ghz=True)
        self.assertAlmostEqual(runs[("env", "probe", "gate_up", 8, 1024)][0], 1100 / 1.1)
        self.assertAlmostEqual(runs[("env", "base", "gate_up", 8, 1024)][1], 1000 / 1.4)

    def test_geomean(self):
        path = self.write()
        out = subprocess.run([sys.executable, os.path.join(ANALYSIS, "ab_ratio.py"), path],
                             capture_output=True, text=True, check=True).stdout
        self.assertIn("probe: %.3f" % math.sqrt(1.1 * 1.1), out)
        out = subprocess.run([sys.executable, os.path.join(ANALYSIS, "ab_ratio.py"), path, "--per-ghz"],
                             capture_output=True, text=True, check=True).stdout
        # gate/up: (1100 / 1.1 GHz) / (1000 / 1.4 GHz) = 1.4; down: 990 / 900 = 1.1 at equal clocks.
        self.assertIn("probe: %.3f" % math.sqrt(1.4 * 1.1), out)


def listing(kernels):
    """A cuobjdump -sass style listing: {name: [instruction, ...]}, addresses 16 apart."""
    out = ["", "\tcode for sm_90a"]
    for name, body in kernels.items():
        out.append("\t\tFunction : " + name)
        out.append('\t.headerflags\t@"EF_CUDA_SM90"')
        for i, t in enumerate(body):
            out.append("        /*%04x*/                   %s ;                /* 0x000000030a0075a7 */" % (16 * i, t))
            out.append("                                                                 /* 0x000fe20008000000 */")
    return "\n".join(out) + "\n"


# One K block with a probed next stage taken when ready (ours), one falling through when ready
# (DeepGEMM's shape); the slow paths hold instructions the fast path must not show.
OURS = ["WARPGROUP.ARRIVE", "UIADD3 UR24, UR12, 0x2, URZ", "UIADD3.X UR25, UR13, URZ, URZ, UP0, !UPT",
        "QGMMA.64x192x32.F32.E4M3.E4M3 R24, gdesc[UR12], RZ, !UPT", "WARPGROUP.DEPBAR.LE gsb0, 0x0",
        "FFMA R1, R2, R3, R1", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR18], R3", "FFMA R4, R5, R6, R4",
        "@P0 BRA 0xb0", "CS2R R28, SR_GLOBALTIMERLO", "STG.E desc[UR38][R32.64+0x8], R3",
        "LDS R5, [R154+0x34884]", "WARPGROUP.ARRIVE", "EXIT"]
THEIRS = ["WARPGROUP.ARRIVE", "UMOV UR22, UR56", "QGMMA.64x192x32.F32.E4M3.E4M3 R24, gdesc[UR20], RZ, !UPT",
          "WARPGROUP.DEPBAR.LE gsb0, 0x0", "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR7+0x349c8], R217",
          "FFMA R1, R2, R3, R1", "FFMA R4, R5, R6, R4", "FFMA R7, R8, R9, R7", "@!P1 BRA 0xb0",
          "LDS R220, [R218+0x34200]", "BRA 0xc0", "NANOSLEEP 0x10", "WARPGROUP.ARRIVE", "EXIT"]


class SassCompareTest(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_hot_path_follows_the_ready_branch_both_ways(self):
        k = sass_compare.read_kernels(self.write(listing({"_Z4oursv": OURS, "_Z6theirsv": THEIRS})))
        ours = sass_compare.hot_path(k["_Z4oursv"], at=0)
        self.assertEqual(ours[-1], "WARPGROUP.ARRIVE")
        self.assertIn("LDS R5, [R154+0x34884]", ours)
        self.assertFalse(any("GLOBALTIMER" in t or t.startswith("STG") for t in ours))
        theirs = sass_compare.hot_path(k["_Z6theirsv"], at=0)
        self.assertIn("LDS R220, [R218+0x34200]", theirs)
        self.assertNotIn("NANOSLEEP 0x10", theirs)  # past the unconditional BRA
        self.assertEqual(sum(1 for t in theirs if sass_compare.opcode(t) == "FFMA"), 3)
        self.assertEqual(sass_compare.condensed(theirs)[4:6], ["SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR7+0x349c8], R217",
                                                               "  [3 FFMA]"])

    def test_counts_and_identity(self):
        a = self.write(listing({"_Z4oursv": OURS, "_Z6theirsv": THEIRS}))
        b = self.write(listing({"_Z4oursv": [t for t in OURS if not t.startswith("UIADD3.X")], "_Z6theirsv": THEIRS}))
        ka = sass_compare.read_kernels(a)
        c = sass_compare.counts(ka["_Z4oursv"], ["UIADD3", "UIADD3.X", "FFMA", "BRA"])
        self.assertEqual(c, {"instructions": len(OURS), "UIADD3": 2, "UIADD3.X": 1, "FFMA": 2, "BRA": 1})
        self.assertEqual(sass_compare.main(["x", "identical", a, a]), 0)
        out = subprocess.run([sys.executable, os.path.join(ANALYSIS, "sass_compare.py"), "identical", a, b],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("differs: _Z4oursv", out.stdout)
        self.assertIn("1 kernels identical, 1 differ", out.stdout)

    def test_no_mainloop_is_an_error(self):
        k = sass_compare.read_kernels(self.write(listing({"_Z1fv": ["IADD3 R1, R1, 0x1, RZ", "EXIT"]})))
        with self.assertRaises(ValueError):
            sass_compare.hot_path(k["_Z1fv"])


def load_script(name):
    """A build check from scripts/ (hyphenated file name; it imports scripts/cuda_binutils.py)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), os.path.join(ROOT, "scripts", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check_scaler_loop = load_script("check-scaler-loop")

# A scaler loop of NOTE [scaler loop guard]: the bounded wait's tries (the last one counts), the
# copies, the arrival; a later arrival (another loop) must not count.
SCALER = ["SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [R10+URZ], R3", "@P5 BRA 0x40",
          "SYNCS.PHASECHK.TRANS64.TRYWAIT P5, [R10+URZ], R2", "@!P5 BRA 0x20", "IMAD.WIDE.U32 R4, R14, UR10, R2",
          "LDGSTS.E [R10], desc[UR38][R4.64], !P0", "LDGSTS.E [R36], desc[UR38][R4.64], !P1", "BSYNC B0",
          "ARRIVES.LDGSTSBAR.64.ARVCNT [UR8]", "IADD3 R1, R1, 0x1, RZ", "ARRIVES.LDGSTSBAR.64.ARVCNT [UR9]"]


class ScalerLoopGuardTest(unittest.TestCase):
    def kernels(self, bodies):
        return sass_listing.parse(listing(bodies))

    def test_counts_from_the_last_try_to_the_first_arrival(self):
        k = self.kernels({"_Z1fv": ["EXIT"] + SCALER})
        self.assertEqual(check_scaler_loop.scaler_loop_length(k["_Z1fv"]), 5)

    def test_no_arrival_or_no_wait_is_no_loop(self):
        k = self.kernels({"_Z1fv": SCALER[:8], "_Z1gv": SCALER[4:]})
        self.assertIsNone(check_scaler_loop.scaler_loop_length(k["_Z1fv"]))
        self.assertIsNone(check_scaler_loop.scaler_loop_length(k["_Z1gv"]))


if __name__ == "__main__":
    unittest.main()
