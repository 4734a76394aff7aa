// Prefetch plans, expert sizes, pool layout, and the CPU references (no GPU).
#include <gtest/gtest.h>

#include <random>

#include "support/env_guard.hpp"
#include "support/error_text.hpp"
#include "symmoe/prefetch/expert_pool.hpp"
#include "symmoe/prefetch/plan.hpp"
#include "symmoe/prefetch/prefetcher.hpp"
#include "symmoe/reference/prefetch_reference.hpp"

namespace symmoe::prefetch {
namespace {

device::ExpertPoolLayout small_layout() {
  return expert_pool_layout(ExpertSpec::single(64, 32, WeightDtype::kBF16), 3, 2, 4);
}

TEST(ExpertSpec, BytesFollowTheDtypeAndAlignment) {
  EXPECT_EQ(ExpertSpec::single(3584, 3072, WeightDtype::kBF16).bytes(), 3584ull * 3072 * 2);
  // 3 matrices of 256x128 fp8 (32768 B each) + scales [2,1] fp32 = 8 B -> aligned to 128.
  EXPECT_EQ(ExpertSpec::swiglu(128, 256, WeightDtype::kFP8E4M3).bytes(), 3 * (32768ull + 128));
  EXPECT_EQ(ExpertSpec::single(3, 5, WeightDtype::kBF16).bytes(), 128u);
  EXPECT_EQ(ExpertSpec::swiglu(7168, 2048, WeightDtype::kBF16).elements(), 3ull * 7168 * 2048);
  EXPECT_THROW(ExpertSpec::single(0, 5, WeightDtype::kBF16).bytes(), Error);
  EXPECT_THROW(ExpertSpec{}.bytes(), Error);
}

TEST(ExpertPoolLayout, OffsetsAndPad) {
  const auto l = small_layout();
  EXPECT_EQ(l.expert_bytes, 4096u);
  EXPECT_EQ(l.num_experts(), 6u);
  EXPECT_EQ(l.owner(5), 2u);
  EXPECT_EQ(l.owned_at(5), 4096u);
  EXPECT_EQ(l.slot_at(0), 2u * 4096);
  EXPECT_EQ(l.pad_offset % 128, 0u);
  EXPECT_GE(l.pad_offset, l.slot_at(3) + 4096);
  EXPECT_EQ(l.bytes_per_rank, l.pad_offset + device::kSignalPadBytes);
  EXPECT_THROW(expert_pool_layout(ExpertSpec::single(8, 8, WeightDtype::kBF16), 73, 1, 1), Error);
}

TEST(PrefetchPlan, NamedErrors) {
  const auto l = small_layout();
  PrefetchPlan two_ranks{{{}, {}}};
  EXPECT_NE(test::error_text([&] { validate_plan(two_ranks, l); })
                .find("the prefetch plan lists 2 ranks but the expert pool spans 3"),
            std::string::npos);
  PrefetchPlan bad_expert{{{}, {{1, 0}, {6, 1}}, {}}};
  EXPECT_NE(test::error_text([&] { validate_plan(bad_expert, l); })
                .find("prefetch plan for rank 1, entry 1: expert 6 is out of range (the pool holds "
                      "6 experts: 3 ranks x 2)"),
            std::string::npos);
  PrefetchPlan bad_slot{{{{0, 4}}, {}, {}}};
  EXPECT_NE(test::error_text([&] { validate_plan(bad_slot, l); })
                .find("prefetch plan for rank 0, entry 0: slot 4 is out of range (4 slots per rank)"),
            std::string::npos);
  PrefetchPlan twice{{{}, {}, {{0, 2}, {3, 2}}}};
  EXPECT_NE(test::error_text([&] { validate_plan(twice, l); })
                .find("prefetch plan for rank 2: slot 2 is assigned twice (experts 0 and 3)"),
            std::string::npos);
  // Duplicated experts (on one rank and across ranks) and empty ranks are fine.
  PrefetchPlan dup{{{{5, 0}, {5, 1}, {0, 3}}, {{5, 0}}, {}}};
  EXPECT_NO_THROW(validate_plan(dup, l));
}

TEST(PrefetchPlan, TasksForPullAndPush) {
  const auto l = small_layout();
  const PrefetchPlan plan{{{{5, 0}, {1, 1}}, {{0, 3}}, {{4, 0}, {2, 1}, {1, 2}}}};
  // Pull on rank 2: its three assignments, from their owners.
  const auto pull = copy_tasks(plan, l, 2, PrefetchMode::kPull);
  ASSERT_EQ(pull.size(), 3u);
  EXPECT_EQ(pull[0].src_rank, 2u);
  EXPECT_EQ(pull[0].src_offset, l.owned_at(4));
  EXPECT_EQ(pull[0].dst_rank, 2u);
  EXPECT_EQ(pull[1].src_rank, 1u);
  EXPECT_EQ(pull[2].src_rank, 0u);
  EXPECT_EQ(pull[2].dst_offset, l.slot_at(2));
  // Push on rank 0 (owner of experts 0 and 1): three copies to ranks 0, 1 and 2.
  const auto push = copy_tasks(plan, l, 0, PrefetchMode::kPush);
  ASSERT_EQ(push.size(), 3u);
  EXPECT_EQ(push[0].dst_rank, 0u);
  EXPECT_EQ(push[1].dst_rank, 1u);
  EXPECT_EQ(push[1].dst_offset, l.slot_at(3));
  EXPECT_EQ(push[2].dst_rank, 2u);
  const CopyBytes b = count_bytes(push, l, 0);
  EXPECT_EQ(b.read, 3 * l.expert_bytes);
  EXPECT_EQ(b.written, 3 * l.expert_bytes);
  EXPECT_EQ(b.remote, 2 * l.expert_bytes);
  // Every copy appears exactly once over all ranks, in either mode.
  size_t pulls = 0, pushes = 0;
  for (int r = 0; r < 3; ++r) {
    pulls += copy_tasks(plan, l, r, PrefetchMode::kPull).size();
    pushes += copy_tasks(plan, l, r, PrefetchMode::kPush).size();
  }
  EXPECT_EQ(pulls, 6u);
  EXPECT_EQ(pushes, 6u);
}

TEST(PrefetchPlan, DigestSeesEveryField) {
  const PrefetchPlan a{{{{5, 0}}, {{1, 1}}}};
  const PrefetchPlan b{{{{5, 1}}, {{1, 1}}}};
  const PrefetchPlan c{{{{5, 0}}, {{1, 1}}, {}}};
  EXPECT_NE(plan_digest(a), plan_digest(b));
  EXPECT_NE(plan_digest(a), plan_digest(c));
  EXPECT_EQ(plan_digest(a), plan_digest(PrefetchPlan{{{{5, 0}}, {{1, 1}}}}));
}

TEST(PrefetchReference, CopiesPlannedExpertsOnly) {
  const auto l = small_layout();
  std::mt19937 rng(3);
  std::vector<std::vector<uint8_t>> pools(3, std::vector<uint8_t>(l.bytes_per_rank));
  for (auto& p : pools) for (auto& b : p) b = static_cast<uint8_t>(rng());
  const auto before = pools;
  const PrefetchPlan plan{{{{5, 0}, {5, 2}}, {}, {{0, 1}}}};
  reference::prefetch_reference(pools, plan, l);
  EXPECT_TRUE(std::equal(pools[0].begin() + l.slot_at(0), pools[0].begin() + l.slot_at(0) + 4096,
                         before[2].begin() + l.owned_at(5)));
  EXPECT_TRUE(std::equal(pools[0].begin() + l.slot_at(2), pools[0].begin() + l.slot_at(2) + 4096,
                         before[2].begin() + l.owned_at(5)));
  EXPECT_TRUE(std::equal(pools[2].begin() + l.slot_at(1), pools[2].begin() + l.slot_at(1) + 4096,
                         before[0].begin() + l.owned_at(0)));
  EXPECT_EQ(pools[1], before[1]);
  // Unplanned slots are untouched.
  EXPECT_TRUE(std::equal(pools[0].begin() + l.slot_at(1), pools[0].begin() + l.slot_at(1) + 4096,
                         before[0].begin() + l.slot_at(1)));
}

TEST(PrefetchReference, GradReduceSumsInRankOrderAndClears) {
  const uint64_t elements = 8;
  const auto gl = device::make_expert_pool_layout(128, 2, 0, 3);
  // One expert per rank: expert 0 is rank 0's, expert 1 is rank 1's.
  const PrefetchPlan plan{{{{1, 0}, {0, 2}}, {{1, 1}}}};
  std::vector<std::vector<float>> owners = {std::vector<float>(elements, 1.f),
                                            std::vector<float>(elements, 2.f)};
  std::vector<std::vector<float>> slots(2, std::vector<float>(gl.bytes_per_rank / 4, 0.f));
  for (uint64_t i = 0; i < elements; ++i) {
    slots[0][gl.slot_at(0) / 4 + i] = 10.f + i;   // expert 1 on rank 0
    slots[0][gl.slot_at(2) / 4 + i] = 100.f;      // expert 0 on rank 0
    slots[1][gl.slot_at(1) / 4 + i] = 0.5f;       // expert 1 on rank 1
  }
  reference::grad_reduce_reference(owners, slots, plan, gl, 1, elements);
  for (uint64_t i = 0; i < elements; ++i) {
    EXPECT_EQ(owners[0][i], 1.f + 100.f);
    EXPECT_EQ(owners[1][i], (2.f + (10.f + i)) + 0.5f);
    EXPECT_EQ(slots[0][gl.slot_at(0) / 4 + i], 0.f);
    EXPECT_EQ(slots[1][gl.slot_at(1) / 4 + i], 0.f);
  }
}

}  // namespace
}  // namespace symmoe::prefetch

namespace symmoe::prefetch {
namespace {

TEST(PrefetchPipeline, DefaultsAndNamedErrorsFromTheEnvironment) {
  const test::EnvGuard copy("SYMMOE_PREFETCH_COPY", std::nullopt);
  const test::EnvGuard chunk("SYMMOE_PREFETCH_CHUNK_KB", std::nullopt);
  const test::EnvGuard stages("SYMMOE_PREFETCH_STAGES", std::nullopt);
  const test::EnvGuard stores("SYMMOE_PREFETCH_STORES_IN_FLIGHT", std::nullopt);
  const test::EnvGuard early("SYMMOE_PREFETCH_EARLY_LAUNCH", std::nullopt);
  const PrefetchPipeline d = prefetch_pipeline_from_env();
  EXPECT_EQ(d.vector, 1);
  EXPECT_EQ(d.chunk_bytes, 64u * 1024);
  EXPECT_EQ(d.early_launch, 1);
  {
    const test::EnvGuard bulk("SYMMOE_PREFETCH_COPY", "bulk");
    const PrefetchPipeline b = prefetch_pipeline_from_env();
    EXPECT_EQ(b.vector, 0);
    EXPECT_EQ(b.stages, 3);
    EXPECT_EQ(b.stores_in_flight, 1);
    const test::EnvGuard big("SYMMOE_PREFETCH_CHUNK_KB", "128");
    EXPECT_NE(test::error_text([] { prefetch_pipeline_from_env(); })
                  .find("SYMMOE_PREFETCH_STAGES (3) x SYMMOE_PREFETCH_CHUNK_KB (128) <= 224 KiB"),
              std::string::npos);
    const test::EnvGuard ok_chunk("SYMMOE_PREFETCH_CHUNK_KB", "32");
    const test::EnvGuard many("SYMMOE_PREFETCH_STORES_IN_FLIGHT", "3");
    EXPECT_NE(test::error_text([] { prefetch_pipeline_from_env(); })
                  .find("SYMMOE_PREFETCH_STORES_IN_FLIGHT (3) must be below SYMMOE_PREFETCH_STAGES (3)"),
              std::string::npos);
  }
  const test::EnvGuard plain("SYMMOE_PREFETCH_EARLY_LAUNCH", "0");
  EXPECT_EQ(prefetch_pipeline_from_env().early_launch, 0);
}

}  // namespace
}  // namespace symmoe::prefetch
