#!/usr/bin/env python3
"""Reads `cuobjdump -sass` listings (third_party/cuobjdump/cuobjdump needs nvdisasm on PATH) and
compares kernels statically: what a probe or a candidate changed before any device time is spent.

usage: sass_compare.py stats A.sass [B.sass] [--kernel SUB[,SUB...]] [--ops OP,OP...]
         per kernel (those whose mangled name holds every SUB): instruction count and the count
         of each OP (an opcode prefix: UIADD3.X counts only those, UIADD3 every UIADD3*); with B,
         only kernels whose counts differ, A -> B
       sass_compare.py identical A.sass B.sass
         exit 0 when every kernel's instructions are the same (a pure refactor), else lists the
         kernels that differ and exits 1
       sass_compare.py hotpath A.sass --kernel SUB[,SUB...] [--at N]
         the wgmma K-block body of one kernel: from its N-th WARPGROUP.ARRIVE (default: the
         middle one) to the next, on the path taken when every stage is already full — a branch
         on a TRYWAIT's predicate is followed the way "ready" goes — with FFMA runs condensed
"""
import argparse
import re
import sys

from sass_listing import opcode, parse

def read_kernels(path):
    """{mangled name: [(address, instruction text with single spaces)]}, in listing order."""
    with open(path) as f:
        funcs = parse(f.read())
    return {k: [(a, re.sub(r"\s+", " ", t)) for a, t, _, _ in v] for k, v in funcs.items()}


def select(kernels, subs):
    return {k: v for k, v in kernels.items() if all(s in k for s in subs)}


def counts(body, ops):
    names = [opcode(t) for _, t in body]
    out = {"instructions": len(names)}
    for op in ops:
        out[op] = sum(1 for n in names if n == op or n.startswith(op + "."))
    return out


def hot_path(body, at=None, limit=2000):
    """Instructions from the chosen WARPGROUP.ARRIVE to the next one, on the stage-ready path."""
    arrives = [i for i, (_, t) in enumerate(body) if opcode(t) == "WARPGROUP.ARRIVE"]
    if len(arrives) < 2:
        raise ValueError("fewer than two WARPGROUP.ARRIVE: not a wgmma mainloop")
    i = arrives[len(arrives) // 2 if at is None else at]
    index = {a: j for j, (a, _) in enumerate(body)}
    ready = None  # the predicate register the last TRYWAIT set (true: stage full)
    path = []
    while len(path) < limit:
        _, t = body[i]
        path.append(t)
        if len(path) > 1 and opcode(t) == "WARPGROUP.ARRIVE":
            return path
        op = opcode(t)
        m = re.match(r"(?:\S+ )?SYNCS\.PHASECHK\.\S*TRYWAIT (U?P\d+),", t)
        if m:
            ready = m.group(1)
        m = re.match(r"@(!?)(U?P\d+) BRA (?:\S+ )?(0x[0-9a-f]+)", t)
        if m and ready is not None and m.group(2) == ready:
            if m.group(1) == "":  # taken when ready
                i = index[int(m.group(3), 16)]
                path.append("  -> (stage ready)")
                ready = None
                continue
            ready = None  # @!P: falls through when ready
        elif op == "BRA" and not t.startswith("@"):
            m = re.search(r"(0x[0-9a-f]+)", t)
            i = index[int(m.group(1), 16)]
            continue
        i += 1
    raise ValueError("no next WARPGROUP.ARRIVE within the limit")


def condensed(path):
    out, run = [], 0
    for t in path:
        if opcode(t) == "FFMA":
            run += 1
            continue
        if run:
            out.append(f"  [{run} FFMA]")
            run = 0
        out.append(t)
    if run:
        out.append(f"  [{run} FFMA]")
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["stats", "identical", "hotpath"])
    ap.add_argument("listings", nargs="+")
    ap.add_argument("--kernel", default="", help="comma-separated substrings of the mangled name")
    ap.add_argument("--ops", default="QGMMA,HGMMA,FFMA,UIADD3.X,UMOV,R2UR,STL,LDL")
    ap.add_argument("--at", type=int, default=None, help="hotpath: which WARPGROUP.ARRIVE (0-based)")
    args = ap.parse_args(argv[1:])
    subs = [s for s in args.kernel.split(",") if s]
    ops = [o for o in args.ops.split(",") if o]
    lists = [select(read_kernels(p), subs) for p in args.listings]
    if args.mode == "identical":
        if len(lists) != 2:
            ap.error("identical takes two listings")
        a, b = lists
        differ = sorted(k for k in set(a) | set(b) if [t for _, t in a.get(k, [])] != [t for _, t in b.get(k, [])])
        for k in differ:
            print("differs:", k)
        print(f"{len(set(a) | set(b)) - len(differ)} kernels identical, {len(differ)} differ")
        return 1 if differ else 0
    if args.mode == "stats":
        a = lists[0]
        b = lists[1] if len(lists) > 1 else None
        for k in a:
            ca = counts(a[k], ops)
            if b is None:
                print(k)
                print("  " + "  ".join(f"{n} {v}" for n, v in ca.items()))
                continue
            cb = counts(b.get(k, []), ops)
            if ca != cb:
                print(k)
                print("  " + "  ".join(f"{n} {ca[n]}->{cb[n]}" for n in ca if ca[n] != cb[n]))
        return 0
    if len(lists[0]) != 1:
        print(f"hotpath: {len(lists[0])} kernels match {subs}; name one", file=sys.stderr)
        for k in lists[0]:
            print("  " + k, file=sys.stderr)
        return 2
    body = next(iter(lists[0].values()))
    path = hot_path(body, args.at)
    print(f"{len(path)} lines on the path, {sum(1 for t in path if opcode(t) == 'FFMA')} FFMA")
    print("\n".join(condensed(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
