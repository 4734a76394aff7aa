// NOTE [activation scale transpose] on the GPU: random scales of random shapes (partial 32 x 32
// tiles in both directions, both layouts) against the CPU's transposition, into a NaN-poisoned
// destination whose padding must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/device_array.hpp"
#include "support/gpu.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/gemm/act_scales_transpose.hpp"
#include "symmoe/runtime/device_runtime.hpp"

namespace symmoe::gemm {
namespace {

using test::DeviceArray;

struct Shape {
  GroupedLayout layout;
  int experts, kblocks;
  int64_t rows;  // total_rows (contiguous) or max_m (masked)
};

TEST(ActScalesTransposeGpu, RandomShapesMatchTheHostTranspositionAndLeaveThePaddingAlone) {
  SYMMOE_SKIP_WITHOUT_GPU();
  runtime::DeviceRuntime rt(0);
  Stream stream;
  std::mt19937 rng(20261207);
  std::vector<Shape> shapes = {{GroupedLayout::kContiguous, 1, 1, 1},     {GroupedLayout::kContiguous, 4, 56, 33},
                               {GroupedLayout::kContiguous, 8, 16, 4096}, {GroupedLayout::kContiguous, 3, 33, 1000},
                               {GroupedLayout::kMasked, 1, 1, 5},         {GroupedLayout::kMasked, 3, 56, 130},
                               {GroupedLayout::kMasked, 7, 20, 64}};
  for (int i = 0; i < 6; ++i) {  // and random ones
    const bool masked = rng() % 2 == 0;
    shapes.push_back({masked ? GroupedLayout::kMasked : GroupedLayout::kContiguous, 1 + static_cast<int>(rng() % 9),
                      1 + static_cast<int>(rng() % 70), 1 + static_cast<int64_t>(rng() % (masked ? 300 : 3000))});
  }
  alignas(16) static uint8_t fake[16];  // act, weights, out: not read by the copy
  const std::vector<int32_t> zeros(64, 0);
  DeviceArray<int32_t> counts(zeros), offsets(zeros);
  for (const Shape& s : shapes) {
    const bool masked = s.layout == GroupedLayout::kMasked;
    const int batches = masked ? s.experts : 1;
    const std::string what = std::string(masked ? "masked" : "contiguous") + " E " + std::to_string(s.experts) +
                             " rows " + std::to_string(s.rows) + " K blocks " + std::to_string(s.kblocks);
    std::vector<float> src(static_cast<size_t>(batches) * s.rows * s.kblocks);
    std::uniform_real_distribution<float> scale(1e-4f, 10.f);
    for (float& v : src) v = scale(rng);
    DeviceArray<float> d_src(src), d_weight_scales(size_t(s.experts) * 2 * s.kblocks);
    GroupedGemmProblem p;
    p.dtype = GemmDtype::kFP8E4M3;
    p.layout = s.layout;
    p.num_experts = s.experts;
    p.n = 256;
    p.k = 128 * s.kblocks;
    p.total_rows = masked ? 0 : s.rows;
    p.max_m = masked ? static_cast<int>(s.rows) : 0;
    p.act = p.weights = p.out = fake;
    p.act_scales = d_src.get();
    p.weight_scales = d_weight_scales.get();
    p.offsets = masked ? nullptr : offsets.get();
    p.counts = counts.get();
    const int64_t ld = column_major_act_scales_ld(p);
    const size_t floats = column_major_act_scales_floats(p);
    ASSERT_EQ(ld % 4, 0) << what;
    ASSERT_GE(ld, s.rows) << what;
    ASSERT_EQ(floats, static_cast<size_t>(batches) * s.kblocks * ld) << what;
    DeviceArray<float> d_dst(floats + 8);  // 8 more floats: nothing may be written past the copy
    std::vector<float> poison(floats + 8, std::nanf("0x7ab"));
    d_dst.upload(poison);
    const GroupedGemmProblem q = transpose_act_scales(p, d_dst.get(), floats, stream.get());
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    EXPECT_EQ(q.act_scales, d_dst.get());
    EXPECT_EQ(q.act_scale_layout, ScaleLayout::kColumnMajor);
    EXPECT_EQ(q.act_scales_ld, ld);
    const std::vector<float> got = d_dst.download();
    int64_t wrong = 0, touched = 0;
    for (int b = 0; b < batches; ++b) {
      for (int kb = 0; kb < s.kblocks; ++kb) {
        for (int64_t r = 0; r < ld; ++r) {
          const float v = got[(int64_t{b} * s.kblocks + kb) * ld + r];
          if (r < s.rows) {
            const float want = src[(int64_t{b} * s.rows + r) * s.kblocks + kb];
            if (std::memcmp(&v, &want, sizeof(float)) != 0 && wrong++ < 3) {
              ADD_FAILURE() << what << ": batch " << b << " K block " << kb << " row " << r << ": " << v << ", want "
                            << want;
            }
          } else if (!std::isnan(v)) {
            ++touched;
          }
        }
      }
    }
    for (size_t i = floats; i < got.size(); ++i) touched += std::isnan(got[i]) ? 0 : 1;
    EXPECT_EQ(wrong, 0) << what;
    EXPECT_EQ(touched, 0) << what << ": padding or floats past the copy written";
  }
  EXPECT_FALSE(rt.take_failure(stream.get()).has_value());
}

}  // namespace
}  // namespace symmoe::gemm
