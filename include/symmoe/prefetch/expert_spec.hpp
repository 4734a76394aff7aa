// What one expert's weights are: matrices of one dtype, plus 128x128 block scales for FP8.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace symmoe::prefetch {

enum class WeightDtype { kBF16, kFP8E4M3 };

const char* weight_dtype_name(WeightDtype dtype);

struct Matrix {
  uint32_t rows = 0;
  uint32_t cols = 0;
};

struct ExpertSpec {
  std::vector<Matrix> matrices;
  WeightDtype dtype = WeightDtype::kBF16;

  // gate [I, H], up [I, H], down [H, I]: a SwiGLU expert.
  static ExpertSpec swiglu(uint32_t hidden, uint32_t intermediate, WeightDtype dtype);
  // One [rows, cols] matrix (the benchmark's unit).
  static ExpertSpec single(uint32_t rows, uint32_t cols, WeightDtype dtype);

  // Bytes of one expert in the pool: each matrix (and, for FP8, its fp32 block scales
  // [ceil(rows/128), ceil(cols/128)]) rounded up to kExpertAlignment. Throws on an empty spec
  // or a zero dimension.
  uint64_t bytes() const;
  // Weight elements of one expert (the length of its fp32 gradient).
  uint64_t elements() const;
  std::string describe() const;
};

}  // namespace symmoe::prefetch
