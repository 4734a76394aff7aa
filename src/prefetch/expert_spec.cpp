#include "symmoe/prefetch/expert_spec.hpp"

#include "symmoe/core/error.hpp"
#include "symmoe/device/expert_pool_layout.cuh"

namespace symmoe::prefetch {
namespace {

uint64_t align(uint64_t v) {
  return (v + device::kExpertAlignment - 1) / device::kExpertAlignment * device::kExpertAlignment;
}

}  // namespace

const char* weight_dtype_name(WeightDtype dtype) {
  return dtype == WeightDtype::kBF16 ? "bf16" : "fp8_e4m3";
}

ExpertSpec ExpertSpec::swiglu(uint32_t hidden, uint32_t intermediate, WeightDtype dtype) {
  return ExpertSpec{{{intermediate, hidden}, {intermediate, hidden}, {hidden, intermediate}}, dtype};
}

ExpertSpec ExpertSpec::single(uint32_t rows, uint32_t cols, WeightDtype dtype) {
  return ExpertSpec{{{rows, cols}}, dtype};
}

uint64_t ExpertSpec::bytes() const {
  SYMMOE_CHECK(!matrices.empty(), "an expert needs at least one matrix");
  uint64_t total = 0;
  for (const Matrix& m : matrices) {
    SYMMOE_CHECK(m.rows > 0 && m.cols > 0, "expert matrix ", m.rows, "x", m.cols,
                 " has a zero dimension");
    const uint64_t elems = static_cast<uint64_t>(m.rows) * m.cols;
    total += align(elems * (dtype == WeightDtype::kBF16 ? 2 : 1));
    if (dtype == WeightDtype::kFP8E4M3) {
      const uint64_t blocks = ((m.rows + 127) / 128) * static_cast<uint64_t>((m.cols + 127) / 128);
      total += align(blocks * sizeof(float));
    }
  }
  return total;
}

uint64_t ExpertSpec::elements() const {
  uint64_t total = 0;
  for (const Matrix& m : matrices) total += static_cast<uint64_t>(m.rows) * m.cols;
  return total;
}

std::string ExpertSpec::describe() const {
  std::string out;
  for (const Matrix& m : matrices) out += detail::concat(out.empty() ? "" : " + ", m.rows, "x", m.cols);
  return detail::concat(out, " ", weight_dtype_name(dtype), " (", bytes(), " bytes)");
}

}  // namespace symmoe::prefetch
