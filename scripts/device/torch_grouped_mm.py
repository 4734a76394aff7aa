#!/usr/bin/env python3
"""Same-call baseline for the bf16 grouped GEMM target: PyTorch's torch._grouped_mm (bf16,
contiguous rows per expert, offsets), timed like `symmoe bench gemm` times ours: a CUDA graph of
PER_GRAPH calls back to back alternating between two copies of the weights (no call finds the
previous one's weights in L2), the median over REPS replays, per call.

FLOPs = 2 E M N K. Shapes: deepseek-v3 experts, gate/up N = 4096, K = 7168; down N = 7168,
K = 2048. Env: MS (default 256,1024), EXPERTS (default 8,32), REPS (default 10), PER_GRAPH (10).
Prints one line per case and writes JSON to argv[1] when given.
"""
import json
import os
import statistics
import sys

import torch


def time_graph_us(fn, reps, per_graph):
    fn(0)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn(0)  # warm-up on the capture stream
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for i in range(per_graph):
                fn(i)
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / per_graph)
    return statistics.median(times)


def main():
    ms = [int(x) for x in os.environ.get("MS", "256,1024").split(",")]
    experts = [int(x) for x in os.environ.get("EXPERTS", "8,32").split(",")]
    reps = int(os.environ.get("REPS", "10"))
    per_graph = int(os.environ.get("PER_GRAPH", "10"))
    dev = torch.device("cuda")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"  {'op':8} {'E':>4} {'M':>5} {'N':>6} {'K':>6} {'time(us)':>9} {'TFLOPS':>8}")
    out = {}
    for op, n, k in (("gate_up", 4096, 7168), ("down", 7168, 2048)):
        for e in experts:
            for m in ms:
                a = torch.randn(e * m, k, device=dev, dtype=torch.bfloat16)
                w = [torch.randn(e, n, k, device=dev, dtype=torch.bfloat16) for _ in range(2)]
                offs = torch.arange(m, e * m + 1, m, device=dev, dtype=torch.int32)
                # _grouped_mm takes B as [E, K, N]: the transposed view of our [E, N, K] weights.
                fn = lambda i: torch._grouped_mm(a, w[i % 2].transpose(-2, -1), offs=offs)
                us = time_graph_us(fn, reps, per_graph)
                tflops = 2.0 * e * m * n * k / (us * 1e-6) / 1e12
                print(f"  {op:8} {e:4d} {m:5d} {n:6d} {k:6d} {us:9.1f} {tflops:8.1f}")
                out[f"{op} bf16 E={e} M={m} torch_grouped_mm_us"] = us
                out[f"{op} bf16 E={e} M={m} torch_grouped_mm_tflops"] = tflops
                del a, w
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
