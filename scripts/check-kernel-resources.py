#!/usr/bin/env python3
"""NOTE [kernel resource guard]: every kernel in the given CUDA binaries (libsymmoe.a) must use no
stack frame and no local memory — on these kernels both mean register spills — unless an entry of
the allowlist names it, with its reason. A spill is silent at build time and can cost far more
than it looks: 60 bytes spilled in the producer warpgroup of the default fp8 wgmma kernel (40
registers after setmaxnreg) made every large-M case run at 0.70x (bench/RESULTS.md, "Six
timing-only probes"). Allowlist entries that match no such kernel are reported too, so the list
cannot go stale. Exit status: 0 clean, 1 violations, 2 usage or tool errors.

Usage: check-kernel-resources.py [--cuobjdump PATH] [--allow FILE] BINARY...
  cuobjdump: --cuobjdump, else $CUOBJDUMP, else third_party/cuobjdump/cuobjdump
             (scripts/fetch-cuobjdump.sh), else the one on PATH.
  allow:     default scripts/kernel-resources-allow.txt; one entry per line, a Python regular
             expression searched in the demangled kernel name, then "  # " and the reason.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

from cuda_binutils import ROOT, find_tool


def read_allowlist(path):
    """[(regex, reason, line number)]"""
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            pattern, sep, reason = line.partition("  # ")
            if not sep or not reason.strip():
                sys.exit(f"check-kernel-resources: {path}:{n}: an entry is '<regex>  # <reason>'")
            try:
                entries.append((re.compile(pattern.strip()), reason.strip(), n))
            except re.error as e:
                sys.exit(f"check-kernel-resources: {path}:{n}: bad regular expression: {e}")
    return entries


def resource_usage(cuobjdump, binary):
    """[(mangled name, {REG, STACK, LOCAL, ...})] of every function in the binary's device code."""
    out = subprocess.run([cuobjdump, "--dump-resource-usage", binary], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check-kernel-resources: cuobjdump failed on {binary}: {out.stderr.strip()}")
    funcs, name = [], None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*Function (\S+):\s*$", line)
        if m:
            name = m[1]
            continue
        if name and "REG:" in line:
            funcs.append((name, {k: int(v) for k, v in re.findall(r"([A-Z]+):(\d+)", line)}))
            name = None
    return funcs


def demangle(names):
    if not names or shutil.which("c++filt") is None:
        return list(names)
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    lines = out.stdout.splitlines()
    return lines if out.returncode == 0 and len(lines) == len(names) else list(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cuobjdump")
    ap.add_argument("--allow", default=os.path.join(ROOT, "scripts/kernel-resources-allow.txt"))
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    cuobjdump = find_tool("cuobjdump", args.cuobjdump, "check-kernel-resources")
    allow = read_allowlist(args.allow)
    funcs = [f for b in args.binaries for f in resource_usage(cuobjdump, b)]
    if not funcs:
        sys.exit(f"check-kernel-resources: no device functions found in {' '.join(args.binaries)}")
    names = demangle([n for n, _ in funcs])
    used = set()
    bad, allowed = [], 0
    for name, (_, res) in zip(names, funcs):
        if res.get("STACK", 0) == 0 and res.get("LOCAL", 0) == 0:
            continue
        hits = [e for e in allow if e[0].search(name)]
        if hits:
            used.update(e[2] for e in hits)
            allowed += 1
        else:
            bad.append((name, res))
    stale = [e for e in allow if e[2] not in used]
    for name, res in bad:
        print(f"SPILL: {name}\n       registers {res.get('REG')}, stack {res.get('STACK')} bytes, "
              f"local {res.get('LOCAL')} bytes per thread")
    for pattern, reason, n in stale:
        print(f"STALE: {args.allow}:{n}: '{pattern.pattern}' ({reason}) matches no kernel with stack or "
              "local memory: remove it")
    print(f"check-kernel-resources: {len(funcs)} device functions, {allowed} with stack or local memory "
          f"on the allowlist, {len(bad)} not, {len(stale)} stale allowlist entries")
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
