#!/usr/bin/env python3
"""Timing-only probe of the DeepGEMM baseline: the same K-block clock trace as
gemm_wgmma_kblock_trace.patch records in our default kernel, inserted into a copy of DeepGEMM's
sm90 1d2d fp8 kernel header (the one `symmoe bench gemm --baselines deepgemm` compiles), for its
128 x 192, 4-stage, unclustered config only.

usage: deepgemm_kblock_trace.py TREE
  TREE: a source tree whose third_party/deepgemm is a private copy (scripts/build-probes.sh
  gives each probe one); the header is edited in place. Exits non-zero, naming the anchor, if
  the header does not have the shape this probe expects.

Recorded, as in our probe: per math warpgroup (its thread 0), CTA 0, the first 768 K blocks of
the launch: the SM clock after the stage's full wait and scale reads (before the wgmmas are
issued), after the wgmma wait, and after the promotion; printed on the config's 150th launch as
"TRACE wg W kb I t_issue t_done t_promoted" (scripts/analysis/wgmma_trace.py reads both).
"""
import os
import sys

HEADER = "third_party/deepgemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"
GATE = "BLOCK_M == 128 and BLOCK_N == 192 and kNumStages == 4 and kNumTMAMulticast == 1"

GLOBALS = """// symmoe probe: K-block clock trace (timing only).
static __device__ uint32_t symmoe_trace_buf[2][768][3];
static __device__ int symmoe_trace_launch[2];
static __device__ __forceinline__ uint32_t symmoe_trace_clock() {
    uint32_t t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
    return t;
}

"""


RECORD = "blockIdx.x == 0 and threadIdx.x % 128 == 0 and symmoe_trace_n < 768"


def record(pad, slot):
    """One line: the clock, stored at once in the current K block's slot (the traced config only)."""
    return (f"{pad}if constexpr ({GATE}) {{ const uint32_t symmoe_t = symmoe_trace_clock(); "
            f"if ({RECORD}) symmoe_trace_buf[math_wg_idx][symmoe_trace_n][{slot}] = symmoe_t; }}")


def fail(what):
    sys.exit(f"deepgemm_kblock_trace: {HEADER}: {what}")


def find(lines, text, start=0, count=1):
    """Index of the only line (from `start`) containing `text`; `count` occurrences expected in all."""
    hits = [i for i, l in enumerate(lines) if text in l]
    if len(hits) != count:
        fail(f"expected {count} line(s) with {text!r}, found {len(hits)}")
    after = [i for i in hits if i >= start]
    if not after:
        fail(f"no line with {text!r} after line {start + 1}")
    return after[0]


def indent(line):
    return line[: len(line) - len(line.lstrip())]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = os.path.join(sys.argv[1], HEADER)
    if os.path.islink(os.path.join(sys.argv[1], "third_party/deepgemm")):
        fail("third_party/deepgemm is a link: edit a private copy, not the fetched headers")
    with open(path) as f:
        lines = f.read().split("\n")
    if any("symmoe probe" in l for l in lines):
        fail("already instrumented")

    # Work from the bottom up so that earlier indices stay valid.
    # 1. Print at the end of the math branch (the line before the final #else closes it).
    end = find(lines, "#else")
    if lines[end - 1].strip() != "}":
        fail("the math branch does not close right before #else")
    pad = indent(lines[end - 1]) + "    "
    lines[end - 1:end - 1] = [
        f"{pad}if constexpr ({GATE}) {{",
        f"{pad}    if (blockIdx.x == 0 and threadIdx.x % 128 == 0) {{",
        f"{pad}        const int wg = static_cast<int>(threadIdx.x / 128);",
        f"{pad}        if (atomicAdd(&symmoe_trace_launch[wg], 1) == 150) {{",
        f"{pad}            for (uint32_t i = 0; i < symmoe_trace_n; ++ i)",
        f'{pad}                printf("TRACE wg %d kb %u %u %u %u\\n", wg, i, symmoe_trace_buf[wg][i][0],',
        f"{pad}                       symmoe_trace_buf[wg][i][1], symmoe_trace_buf[wg][i][2]);",
        f"{pad}        }}",
        f"{pad}    }}",
        f"{pad}}}",
    ]
    # 2. After the promotion loop (the brace that closes the loop of its last FFMA line).
    last_ffma = find(lines, "shifted_accum[i * 4 + 3] += ")
    close = last_ffma + 1
    if lines[close].strip() != "}":
        fail("the promotion loop does not close after its last accumulation")
    pad = indent(lines[close])
    lines[close + 1:close + 1] = [
        f"{pad}if constexpr ({GATE}) {{",
        f"{pad}    #pragma unroll",
        f"{pad}    for (uint32_t i = 0; i < WGMMA::kNumAccum; ++ i)",
        f"{pad}        warpgroup_fence_operand(shifted_accum[i]);",
        f"{pad}    const uint32_t symmoe_t2 = symmoe_trace_clock();",
        f"{pad}    if ({RECORD}) {{",
        f"{pad}        symmoe_trace_buf[math_wg_idx][symmoe_trace_n][2] = symmoe_t2;",
        f"{pad}        ++ symmoe_trace_n;",
        f"{pad}    }}",
        f"{pad}}}",
    ]
    # 3. After the wgmma wait; 4. before the wgmma issue.
    # Each clock goes to memory at once: a value held across the wgmmas or the promotion costs a
    # register of the math warpgroups' 232, and DeepGEMM's 128 x 192 kernel then spills.
    wait = find(lines, "warpgroup_wait<0>();")
    lines.insert(wait + 1, record(indent(lines[wait]), 1))
    arrive = find(lines, "warpgroup_arrive();")
    if arrive > wait:
        fail("warpgroup_arrive() does not precede warpgroup_wait<0>()")
    lines.insert(arrive, record(indent(lines[arrive]), 0))
    # 5. The per-thread K-block count, in the math branch before its tile loop.
    rows = find(lines, "const auto r_0 = warp_idx * 16 + lane_idx / 4")
    lines.insert(rows + 1, f"{indent(lines[rows])}uint32_t symmoe_trace_n = 0;  // symmoe probe")
    # 6. The buffers, before the kernel template.
    kernel = find(lines, "template <cute::UMMA::Major kMajorSFB,")
    lines[kernel:kernel] = GLOBALS.split("\n")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"deepgemm_kblock_trace: instrumented {HEADER}")


if __name__ == "__main__":
    main()
