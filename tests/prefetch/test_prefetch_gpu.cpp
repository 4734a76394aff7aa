// Expert prefetch and gradient reduce between virtual ranks on one GPU, against the CPU
// references: bitwise equal copies, untouched unplanned slots, exact fp32 sums.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "support/error_text.hpp"
#include "support/env_guard.hpp"
#include "support/gpu.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/prefetch/grad_reducer.hpp"
#include "symmoe/prefetch/prefetcher.hpp"
#include "symmoe/reference/prefetch_reference.hpp"

namespace symmoe::prefetch {
namespace {

constexpr uint8_t kPoison = 0xA5;

// Virtual ranks share the GPU: each gets its slice of SMs so that every grid is resident.
runtime::SmBudget slice(int ranks) { return {(query_device(0).num_sms - 4) / ranks, 0}; }

// Rank r's initial buffer image: random owned experts, poisoned slots (same on every thread).
std::vector<uint8_t> initial_image(const device::ExpertPoolLayout& l, int rank, uint64_t seed) {
  std::vector<uint8_t> img(l.bytes_per_rank, 0);
  std::mt19937_64 rng(seed * 1000 + rank);
  for (uint64_t i = 0; i < l.slots_offset; i += 8) {
    const uint64_t v = rng();
    std::memcpy(img.data() + i, &v, 8);
  }
  std::memset(img.data() + l.slots_offset, kPoison, l.pad_offset - l.slots_offset);
  return img;
}

// A random plan: every slot of rank 0 used, rank n-1 empty, duplicated experts.
PrefetchPlan random_plan(const device::ExpertPoolLayout& l, uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  PrefetchPlan plan;
  plan.per_rank.resize(l.num_ranks);
  for (uint32_t r = 0; r + 1 < l.num_ranks || l.num_ranks == 1; ++r) {
    const uint32_t used = r == 0 ? l.num_slots : rng() % (l.num_slots + 1);
    std::vector<uint32_t> slots(l.num_slots);
    for (uint32_t s = 0; s < l.num_slots; ++s) slots[s] = s;
    std::shuffle(slots.begin(), slots.end(), rng);
    for (uint32_t i = 0; i < used; ++i) {
      const uint32_t expert = i == 1 ? plan.per_rank[r][0].expert : rng() % l.num_experts();
      plan.per_rank[r].push_back({expert, slots[i]});
    }
    if (l.num_ranks == 1) break;
  }
  return plan;
}

void upload(void* dst, const std::vector<uint8_t>& img, cudaStream_t s) {
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(dst, img.data(), img.size(), cudaMemcpyHostToDevice, s));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::vector<uint8_t> download(const void* src, size_t bytes, cudaStream_t s) {
  std::vector<uint8_t> img(bytes);
  SYMMOE_CUDA_CHECK(cudaMemcpyAsync(img.data(), src, bytes, cudaMemcpyDeviceToHost, s));
  SYMMOE_CUDA_CHECK(cudaStreamSynchronize(s));
  return img;
}

void run_case(int n, PrefetchMode mode, const ExpertSpec& spec, uint32_t epr, uint32_t slots,
              uint64_t seed, bool graph, PrefetchOptions options = {}) {
  comm::run_thread_ranks(n, {0}, [&](comm::Group& g) {
    auto pool = ExpertPool::create(g, spec, epr, slots, symm::HandleType::kFd);
    const auto& l = pool->layout();
    runtime::DeviceRuntime rt(pool->buffer().device());
    Stream stream;
    const PrefetchPlan plan = random_plan(l, seed);
    std::vector<std::vector<uint8_t>> expected;
    for (int r = 0; r < n; ++r) expected.push_back(initial_image(l, r, seed));
    reference::prefetch_reference(expected, plan, l);
    const auto mine = initial_image(l, g.rank(), seed);
    // The pad region holds barrier state: keep the buffer's own (zero) pad.
    upload(pool->buffer().local(), std::vector<uint8_t>(mine.begin(), mine.begin() + l.pad_offset), stream);
    Prefetcher prefetcher(g, *pool, rt, plan, mode, options);
    EXPECT_EQ(prefetcher.synchronizes(), !(options.static_weights && mode == PrefetchMode::kPull));
    g.barrier();
    const int rounds = graph ? 5 : 1;
    if (graph) {
      CapturedGraph captured(stream, [&] {
        SYMMOE_CUDA_CHECK(cudaMemsetAsync(pool->slot(0), kPoison, l.pad_offset - l.slots_offset, stream));
        prefetcher.launch(stream, slice(n));
      });
      for (int i = 0; i < rounds; ++i) {
        captured.launch(stream);
        rt.check(stream);
        const auto got = download(pool->buffer().local(), l.pad_offset, stream);
        ASSERT_TRUE(std::equal(got.begin(), got.end(), expected[g.rank()].begin()))
            << "rank " << g.rank() << " replay " << i;
      }
    } else {
      prefetcher.launch(stream, slice(n));
      rt.check(stream);
      const auto got = download(pool->buffer().local(), l.pad_offset, stream);
      for (uint64_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], expected[g.rank()][i]) << "rank " << g.rank() << " byte " << i
                                                 << (i >= l.slots_offset ? " (slots)" : " (owned)");
      }
    }
    g.barrier();
  }, 120);
}

TEST(PrefetchGpu, PullCopiesAreBitwiseEqual) {
  SYMMOE_SKIP_WITHOUT_GPU();
  for (int n : {1, 2, 4}) run_case(n, PrefetchMode::kPull, ExpertSpec::single(256, 768, WeightDtype::kBF16), 3, 5, 11 + n, false);
}

TEST(PrefetchGpu, PushCopiesAreBitwiseEqual) {
  SYMMOE_SKIP_WITHOUT_GPU();
  for (int n : {2, 4}) run_case(n, PrefetchMode::kPush, ExpertSpec::single(256, 768, WeightDtype::kBF16), 3, 5, 21 + n, false);
}

TEST(PrefetchGpu, Fp8ExpertsWithScalesAndOddSizes) {
  SYMMOE_SKIP_WITHOUT_GPU();
  // 3 fp8 matrices with block scales; sizes not multiples of the 32 KiB chunk.
  run_case(3, PrefetchMode::kPull, ExpertSpec::swiglu(200, 136, WeightDtype::kFP8E4M3), 2, 4, 31, false);
  run_case(3, PrefetchMode::kPush, ExpertSpec::swiglu(7168 / 8, 2048 / 8, WeightDtype::kFP8E4M3), 2, 6, 32, false);
}

TEST(PrefetchGpu, GraphCaptureAndReplay) {
  SYMMOE_SKIP_WITHOUT_GPU();
  run_case(4, PrefetchMode::kPush, ExpertSpec::single(512, 512, WeightDtype::kBF16), 2, 3, 41, true);
  run_case(2, PrefetchMode::kPull, ExpertSpec::single(512, 512, WeightDtype::kBF16), 2, 3, 42, true);
}

TEST(PrefetchGpu, StaticWeightsPullNeedsNoBarriers) {
  SYMMOE_SKIP_WITHOUT_GPU();
  const PrefetchOptions fixed{true};
  run_case(4, PrefetchMode::kPull, ExpertSpec::single(256, 768, WeightDtype::kBF16), 3, 5, 51, false, fixed);
  run_case(4, PrefetchMode::kPull, ExpertSpec::single(512, 512, WeightDtype::kBF16), 2, 3, 52, true, fixed);
  // Push keeps its barriers (they guard the consumers' slots) even with static weights.
  run_case(2, PrefetchMode::kPush, ExpertSpec::single(256, 768, WeightDtype::kBF16), 3, 5, 53, false, fixed);
}

// NOTE [split-phase barrier] seen from the outside: with one rank launching late in turn, no
// rank passes its start barrier before every rank's kernel has started, and none leaves before
// every rank's copies are done (the ranks share one GPU, hence one global timer).
TEST(PrefetchGpu, BarriersHoldWithALateRank) {
  SYMMOE_SKIP_WITHOUT_GPU();
  constexpr int n = 4;
  constexpr int rounds = 8;
  std::vector<PrefetchTrace> traces(n);
  comm::run_thread_ranks(n, {0}, [&](comm::Group& g) {
    auto pool = ExpertPool::create(g, ExpertSpec::single(512, 768, WeightDtype::kBF16), 3, 4, symm::HandleType::kFd);
    const auto& l = pool->layout();
    runtime::DeviceRuntime rt(pool->buffer().device());
    Stream stream;
    const PrefetchPlan plan = random_plan(l, 61);
    std::vector<std::vector<uint8_t>> expected;
    for (int r = 0; r < n; ++r) expected.push_back(initial_image(l, r, 61));
    reference::prefetch_reference(expected, plan, l);
    const auto mine = initial_image(l, g.rank(), 61);
    upload(pool->buffer().local(), std::vector<uint8_t>(mine.begin(), mine.begin() + l.pad_offset), stream);
    PrefetchTrace* trace = nullptr;
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&trace), sizeof(PrefetchTrace)));
    for (PrefetchMode mode : {PrefetchMode::kPush, PrefetchMode::kPull}) {
      Prefetcher prefetcher(g, *pool, rt, plan, mode);
      for (int round = 0; round < rounds; ++round) {
        SYMMOE_CUDA_CHECK(cudaMemsetAsync(pool->slot(0), kPoison, l.pad_offset - l.slots_offset, stream));
        SYMMOE_CUDA_CHECK(cudaMemsetAsync(trace, 0, sizeof(PrefetchTrace), stream));
        SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
        g.barrier();
        if (g.rank() == round % n) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        prefetcher.launch(stream, slice(n), 0, trace);
        rt.check(stream);
        const auto got = download(pool->buffer().local(), l.pad_offset, stream);
        EXPECT_TRUE(std::equal(got.begin(), got.end(), expected[g.rank()].begin()))
            << "rank " << g.rank() << ", " << prefetch_mode_name(mode) << " round " << round;
        SYMMOE_CUDA_CHECK(cudaMemcpy(&traces[g.rank()], trace, sizeof(PrefetchTrace), cudaMemcpyDeviceToHost));
        g.barrier();
        if (g.rank() == 0) {
          uint64_t last_start = 0, last_copy = 0;
          for (const PrefetchTrace& t : traces) {
            last_start = std::max(last_start, t.kernel_start_ns);
            last_copy = std::max(last_copy, t.copies_done_ns);
          }
          for (int r = 0; r < n; ++r) {
            const PrefetchTrace& t = traces[r];
            EXPECT_GT(t.kernel_start_ns, 0u);
            EXPECT_LE(t.kernel_start_ns, t.entered_ns);
            EXPECT_LE(t.entered_ns, t.copies_done_ns);
            EXPECT_LE(t.copies_done_ns, t.left_ns);
            EXPECT_GE(t.entered_ns, last_start) << "rank " << r << " passed the start barrier early";
            EXPECT_GE(t.left_ns, last_copy) << "rank " << r << " passed the end barrier early";
          }
          // The late rank's delay shows up as the others' start wait.
          const PrefetchTrace& early = traces[(round + 1) % n];
          EXPECT_GT(early.entered_ns - early.kernel_start_ns, 10'000'000u) << "round " << round;
        }
        g.barrier();
      }
    }
    cudaFree(trace);
  }, 120);
}

// The other copy path (SYMMOE_PREFETCH_COPY=bulk: TMA through shared memory) and a launch
// without the early (programmatic) attribute: same bytes.
TEST(PrefetchGpu, BulkCopyAndPlainLaunchAreBitwiseEqualToo) {
  SYMMOE_SKIP_WITHOUT_GPU();
  const test::EnvGuard bulk("SYMMOE_PREFETCH_COPY", "bulk");
  run_case(4, PrefetchMode::kPull, ExpertSpec::single(256, 768, WeightDtype::kBF16), 3, 5, 71, false);
  run_case(3, PrefetchMode::kPush, ExpertSpec::swiglu(200, 136, WeightDtype::kFP8E4M3), 2, 4, 72, true);
  const test::EnvGuard plain("SYMMOE_PREFETCH_EARLY_LAUNCH", "0");
  run_case(4, PrefetchMode::kPull, ExpertSpec::single(512, 512, WeightDtype::kBF16), 2, 3, 73, true);
}

TEST(PrefetchGpu, BadPlanIsANamedErrorOnEveryRank) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::vector<std::string> seen(2);
  comm::run_thread_ranks(2, {0}, [&](comm::Group& g) {
    auto pool = ExpertPool::create(g, ExpertSpec::single(64, 64, WeightDtype::kBF16), 2, 2);
    runtime::DeviceRuntime rt(pool->buffer().device());
    PrefetchPlan plan{{{{0, 0}}, {{1, 7}}}};  // rank 1 asks for slot 7 of 2
    seen[g.rank()] = test::error_text([&] { Prefetcher p(g, *pool, rt, plan, PrefetchMode::kPull); });
  });
  for (const auto& m : seen) {
    EXPECT_NE(m.find("prefetch plan failed on"), std::string::npos) << m;
    EXPECT_NE(m.find("prefetch plan for rank 1, entry 0: slot 7 is out of range (2 slots per rank)"),
              std::string::npos) << m;
  }
}

TEST(GradReduceGpu, OwnersReceiveExactSumsAndSlotsAreCleared) {
  SYMMOE_SKIP_WITHOUT_GPU();
  constexpr int kRanks = 4;
  constexpr uint32_t kEpr = 2, kSlots = 3;
  const ExpertSpec spec = ExpertSpec::single(64, 96, WeightDtype::kBF16);
  const uint64_t elements = spec.elements();
  comm::run_thread_ranks(kRanks, {0}, [&](comm::Group& g) {
    auto pool = GradPool::create(g, spec, kEpr, kSlots, symm::HandleType::kFd);
    const auto& gl = pool->layout();
    runtime::DeviceRuntime rt(pool->buffer().device());
    Stream stream;
    device::ExpertPoolLayout weights = gl;
    weights.experts_per_rank = kEpr;
    const PrefetchPlan plan = random_plan(weights, 77);
    auto image = [&](int r) {
      std::mt19937 rng(500 + r);
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      std::vector<float> owner(kEpr * elements), slots(gl.pad_offset / 4);
      for (auto& v : owner) v = d(rng);
      for (auto& v : slots) v = d(rng);
      return std::make_pair(owner, slots);
    };
    std::vector<std::vector<float>> owners, slot_grads;
    for (int r = 0; r < kRanks; ++r) {
      auto [o, s] = image(r);
      owners.push_back(o);
      slot_grads.push_back(s);
    }
    const auto mine = image(g.rank());
    float* grads = nullptr;
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&grads), mine.first.size() * sizeof(float)));
    SYMMOE_CUDA_CHECK(cudaMemcpy(grads, mine.first.data(), mine.first.size() * sizeof(float), cudaMemcpyHostToDevice));
    SYMMOE_CUDA_CHECK(cudaMemcpy(pool->buffer().local(), mine.second.data(), mine.second.size() * sizeof(float), cudaMemcpyHostToDevice));
    reference::grad_reduce_reference(owners, slot_grads, plan, gl, kEpr, elements);
    GradReducer reducer(g, *pool, rt, plan);
    g.barrier();
    reducer.launch(grads, stream, slice(kRanks));
    rt.check(stream);
    std::vector<float> got_owner(mine.first.size()), got_slots(mine.second.size());
    SYMMOE_CUDA_CHECK(cudaMemcpy(got_owner.data(), grads, got_owner.size() * sizeof(float), cudaMemcpyDeviceToHost));
    SYMMOE_CUDA_CHECK(cudaMemcpy(got_slots.data(), pool->buffer().local(), got_slots.size() * sizeof(float), cudaMemcpyDeviceToHost));
    g.barrier();
    EXPECT_EQ(std::memcmp(got_owner.data(), owners[g.rank()].data(), got_owner.size() * 4), 0)
        << "rank " << g.rank() << ": owner gradients differ from the CPU sum";
    EXPECT_EQ(std::memcmp(got_slots.data(), slot_grads[g.rank()].data(), got_slots.size() * 4), 0)
        << "rank " << g.rank() << ": slots not cleared (or unplanned slots touched)";
    cudaFree(grads);
    g.barrier();
  }, 120);
}

}  // namespace
}  // namespace symmoe::prefetch
