// CPU reference of the expert grouped GEMM (gemm/grouped_gemm_problem.hpp) over host memory:
// the oracle of the SM90 kernels.
#pragma once

#include <vector>

#include "symmoe/gemm/grouped_gemm_problem.hpp"

namespace symmoe::reference {

// NOTE [grouped GEMM reference]: every operand is dequantized exactly (bf16 -> fp32; e4m3 ->
// fp32 times its fp32 scale, both exact in fp64), products are summed in fp64 in ascending K,
// and each output is rounded once to bf16 (round to nearest even). Rows past counts[e] and rows
// of no expert keep what `out` held. A kernel that accumulates in fp32 per 128-wide K block and
// promotes with the block scales differs from this by at most
//   |gpu - ref| <= 2^-8 |ref| + K * 2^-23 * sum_k |a_k b_k|
// (one bf16 rounding plus fp32 accumulation); integer-valued inputs whose partial sums stay
// below 2^24 make the kernel exact, then only the bf16 rounding remains.
// Also writes the fp64 sums (before rounding) to `exact` and sum_k |a_k b_k| (the bound's
// scale) to `abs_products` when given (each [rows, N], zero outside the experts' rows). An
// expert's rows run on `threads` threads (0: reference_threads()); each output is summed by one
// thread in ascending K, so every result is the same for any thread count.
void grouped_gemm_reference(const gemm::GroupedGemmProblem& p, std::vector<double>* exact = nullptr,
                            std::vector<double>* abs_products = nullptr, int threads = 0);

// Threads the reference runs on: the machine's hardware threads, 1 to 32.
int reference_threads();

}  // namespace symmoe::reference
