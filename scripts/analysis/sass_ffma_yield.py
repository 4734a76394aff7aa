#!/usr/bin/env python3
"""Experiment: rewrite the scheduling control bits of long FFMA runs in built SASS.

For every function whose name matches --function, runs of at least --min-run consecutive FFMA
instructions (the fp8 block-scale promotion: acc += part * scale) are found in `cuobjdump -sass`
output; in the chosen instructions of each run the operand-b reuse flag is cleared and the yield
flag toggled, so the warp scheduler may switch warps inside the run (a yielding warp cannot keep
an operand in the reuse cache, hence the cleared flag). The instructions are matched by their
bytes (the fatbin of our binaries is not compressed) and patched in place in --out, a copy of
the binary. Every patched run is reported; nothing matches twice by accident because a run's
bytes (16 bytes per instruction, at least --min-run of them) are checked to occur identically
wherever they are patched.

SM90 instruction = two little-endian 64-bit words; in the high word: bits 41-44 stall cycles,
45 yield, 46-48 write barrier, 49-51 read barrier, 52-57 wait mask, 58-61 operand reuse (a, b,
c, ...).

Policies:
  first-half   the first 9/16 of a run (instructions with operand-b reuse only)
  alternate    every other instruction of a run (those with operand-b reuse)
  none         report the runs, change nothing
"""
import argparse
import re
import shutil
import subprocess
import sys

from sass_listing import opcode, parse

YIELD = 1 << 45
REUSE_B = 1 << 59


def ffma_runs(insts, min_run):
    run = []
    for inst in insts + [(None, "", 0, 0)]:
        if opcode(inst[1]) == "FFMA":
            run.append(inst)
            continue
        if len(run) >= min_run:
            yield run
        run = []


def chosen(run, policy):
    if policy == "first-half":
        return range(len(run) * 9 // 16)
    if policy == "alternate":
        return range(0, len(run), 2)
    return range(0)


def encode(run):
    return b"".join(low.to_bytes(8, "little") + high.to_bytes(8, "little") for _, _, low, high in run)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--out", required=True, help="patched copy of the binary")
    ap.add_argument("--function", default="wgmma_kernel", help="regex on the mangled function name")
    ap.add_argument("--policy", default="first-half", choices=["first-half", "alternate", "none"])
    ap.add_argument("--min-run", type=int, default=16)
    ap.add_argument("--cuobjdump", default="cuobjdump")
    args = ap.parse_args()

    sass = subprocess.run([args.cuobjdump, "-sass", args.binary], check=True, capture_output=True, text=True).stdout
    funcs = {n: i for n, i in parse(sass).items() if re.search(args.function, n)}
    if not funcs:
        sys.exit(f"no function matches {args.function!r}")
    data = bytearray(open(args.binary, "rb").read())
    patched_runs = patched_insts = 0
    done = set()
    for name, insts in funcs.items():
        for run in ffma_runs(insts, args.min_run):
            old = encode(run)
            new_run = list(run)
            for i in chosen(run, args.policy):
                off, text, low, high = run[i]
                if high & REUSE_B:
                    new_run[i] = (off, text, low, (high & ~REUSE_B) ^ YIELD)
            new = encode(new_run)
            if old == new or old in done:
                continue
            done.add(old)
            hits = [m.start() for m in re.finditer(re.escape(old), data)]
            if not hits:
                sys.exit(f"{name}: run at 0x{run[0][0]:x} not found in the binary (compressed fatbin?)")
            for h in hits:
                data[h:h + len(new)] = new
            changed = sum(1 for a, b in zip(run, new_run) if a != b)
            patched_runs += 1
            patched_insts += changed * len(hits)
            print(f"{name[-60:]}: run of {len(run)} FFMA at 0x{run[0][0]:x}: {changed} changed, {len(hits)} copies")
    shutil.copyfile(args.binary, args.out)
    open(args.out, "wb").write(data)
    print(f"{args.policy}: {patched_runs} runs, {patched_insts} instructions patched -> {args.out}")


if __name__ == "__main__":
    main()
