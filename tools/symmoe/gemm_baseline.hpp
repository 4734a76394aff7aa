// The same-run baselines of `symmoe bench gemm`, on cuBLASLt: one dense GEMM of the grouped
// problem's total FLOPs (all experts' rows against one weight matrix; fp8 with per-tensor
// scales, the best case for cuBLASLt, or with the DeepSeek-V3 recipe's block scales — the
// grouped kernels' own promotion — where cuBLASLt has it: Hopper, cuBLAS 12.9+), and a loop of
// one GEMM per expert (what a framework without a grouped kernel does). Plus device fills for
// the benchmark's inputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "symmoe/gemm/grouped_gemm_problem.hpp"

namespace symmoe::cli {

// How an fp8 baseline scales its operands: one scalar per tensor, or the recipe's blocks —
// activations 1 x 128 along K (cuBLASLt's VEC128_32F; the scales K-block-major, [K / 128][M]),
// weights 128 x 128 (BLK128x128_32F; [N / 128][K / 128], K / 128 a multiple of 4). Every scale
// is 1: the values do not change the work, the modes select cuBLASLt's promoting kernels.
enum class Fp8Scales { kTensor, kBlock };

// out[m, n] = act[m, :] · w[n, :] (row-major act [M, K], w [N, K], out [M, N] bf16). The
// algorithm is chosen once, by cuBLASLt's heuristic; a configuration it has no algorithm for
// throws (the bench prints the baseline as n/a).
class CublasLtGemm {
 public:
  CublasLtGemm(gemm::GemmDtype dtype, int64_t m, int64_t n, int64_t k, Fp8Scales scales = Fp8Scales::kTensor);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void run(const void* act, const void* w, void* out, cudaStream_t stream);

 private:
  struct State;
  State* s_;
};

// Fills for benchmark inputs (deterministic in `seed`): fp8 e4m3 codes of magnitude <= 2 (no
// NaN), bf16 values in [-1, 1), fp32 constants.
void fill_fp8(void* dst, size_t count, uint64_t seed, cudaStream_t stream);
void fill_bf16(void* dst, size_t count, uint64_t seed, cudaStream_t stream);
void fill_f32(float* dst, size_t count, float value, cudaStream_t stream);
void fill_i32_ramp(int32_t* dst, int count, int32_t step, cudaStream_t stream);  // dst[i] = i * step
void fill_i32(int32_t* dst, int count, int32_t value, cudaStream_t stream);

}  // namespace symmoe::cli
