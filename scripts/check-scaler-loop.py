#!/usr/bin/env python3
"""NOTE [scaler loop guard]: in every fp8 wgmma kernel of the given CUDA binaries (libsymmoe.a), the
scaler's K-block loop (producer warp 1: wait for the stage's release, copy the K block's scales by
cp.async, arrive on the stage's full barrier; src/gemm/sm90_wgmma_frame_{producer,scales}.cuh) may
hold at most --budget instructions from the stage wait's last try (SYNCS.PHASECHK TRYWAIT) to the
arrival (ARRIVES.LDGSTSBAR). That loop is on the kernel's critical path and nothing else warns when
it grows: 25 more instructions there (a full scale index per copy, the consumers' SASS unchanged)
ran the default 128 x 192 kernel at 0.92x on an H100 (bench/RESULTS.md, "Column-major activation
scales, measured"). Lengths per build: 63-64 before the column-major scales (e9db52f), 88-89 with
the per-copy index (0f24034: 0.92x), 70-78 with a tile's sources set once (eff33e7: 1.00x), 61-62
with one running step for the four rows (a3ca070), 53-60 with the scales staged by rows
(gemm_wgmma_scale_rows.patch: 0.99x with row-major scales on an H100). Raise the budget only
with a same-run A/B showing the longer loop costs nothing. Exit status: 0 within budget, 1 over
(or no such loop found), 2 usage or tool errors.

Usage: check-scaler-loop.py [--budget N] [--cuobjdump PATH] [--nvdisasm PATH] BINARY...
  tools: --cuobjdump / --nvdisasm, else $CUOBJDUMP / $NVDISASM, else third_party/cuobjdump
         (scripts/fetch-cuobjdump.sh), else PATH.
"""
import argparse
import collections
import os
import subprocess
import sys

from cuda_binutils import ROOT, find_tool

sys.path.insert(0, os.path.join(ROOT, "scripts/analysis"))
import sass_listing  # noqa: E402

# The fp8 wgmma kernels' mangled names hold both (sm90_wgmma_frame_kernel.cuh, Fp8Consumer).
KERNEL_PARTS = ("sm90_grouped_gemm_wgmma_kernel", "Fp8Consumer")


def scaler_loop_length(insts):
    """Instructions strictly between the last TRYWAIT before the first ARRIVES.LDGSTSBAR and that
    arrival, or None when the function has no such pair."""
    last_wait = None
    for i, (_, text, _, _) in enumerate(insts):
        op = sass_listing.opcode(text)
        if op.startswith("SYNCS.PHASECHK") and "TRYWAIT" in op:
            last_wait = i
        elif op.startswith("ARRIVES.LDGSTSBAR"):
            return None if last_wait is None else i - last_wait - 1
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=62)
    ap.add_argument("--cuobjdump")
    ap.add_argument("--nvdisasm")
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    cuobjdump = find_tool("cuobjdump", args.cuobjdump, "check-scaler-loop")
    nvdisasm = find_tool("nvdisasm", args.nvdisasm, "check-scaler-loop")
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(nvdisasm)) + os.pathsep + os.environ.get("PATH", ""))
    kernels = {}
    for binary in args.binaries:
        out = subprocess.run([cuobjdump, "-sass", binary], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print(f"check-scaler-loop: cuobjdump -sass failed on {binary}: {out.stderr.strip()}", file=sys.stderr)
            return 2
        for name, insts in sass_listing.parse(out.stdout).items():
            if all(p in name for p in KERNEL_PARTS):
                kernels[name] = scaler_loop_length(insts)
    if not kernels:
        print(f"check-scaler-loop: no fp8 wgmma kernel in {' '.join(args.binaries)}")
        return 1
    over = {n: c for n, c in kernels.items() if c is None or c > args.budget}
    for name, count in sorted(over.items()):
        what = "no scaler loop found (TRYWAIT ... ARRIVES.LDGSTSBAR)" if count is None else f"{count} instructions"
        print(f"OVER: {name}\n      {what}, budget {args.budget}")
    lengths = collections.Counter(c for c in kernels.values() if c is not None)
    print(f"check-scaler-loop: {len(kernels)} fp8 wgmma kernels, scaler loop lengths "
          f"{dict(sorted(lengths.items()))} (length: kernels), budget {args.budget}, {len(over)} over")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
