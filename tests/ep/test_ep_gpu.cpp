// Dispatch and combine between virtual ranks on one GPU, against the CPU references: the
// expert-major layout row by row (self-identifying rows), fp8 codes and scales bitwise,
// combine bitwise, graph replays equal to eager runs, named errors for bad inputs, and the
// whole layer with the grouped GEMM between dispatch and combine.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <cstring>
#include <random>

#include "support/device_array.hpp"
#include "support/ep_inputs.hpp"
#include "support/error_text.hpp"
#include "support/gpu.hpp"
#include "symmoe/comm/thread_group.hpp"
#include "symmoe/core/bf16.hpp"
#include "symmoe/core/cuda_handles.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/device/cross_rank_barrier.cuh"
#include "symmoe/ep/ep_buffer.hpp"
#include "symmoe/gemm/grouped_gemm.hpp"
#include "symmoe/reference/grouped_gemm_reference.hpp"
#include "symmoe/symm/peer_smoke.hpp"

namespace symmoe::ep {
namespace {

using reference::ExpertMajor;
using reference::RankTokens;
using test::DeviceArray;

// Virtual ranks share the GPU: each gets its slice of SMs so that every grid is resident.
runtime::SmBudget slice(int ranks) { return {(query_device(0).num_sms - 4) / ranks, 0}; }

struct Case {
  int ranks = 2;
  EpShape shape;
  std::vector<int> tokens;  // per rank (cycled)
  int max_tokens = 0;
  int alignment = 8;
  device::EpPayload payload = device::EpPayload::kBF16;
  bool fp8_input = false;   // fp8 rows + scales given (else bf16, quantized for fp8 payloads)
  IdDtype ids = IdDtype::kInt64;
  test::EpInputOptions inputs;
};

// Device copies of one rank's inputs.
struct RankInputs {
  DeviceArray<uint16_t> x;
  DeviceArray<uint8_t> x_fp8;
  DeviceArray<float> x_scales;
  DeviceArray<int64_t> idx64;
  DeviceArray<int32_t> idx32;
  DeviceArray<float> weights;

  explicit RankInputs(const RankTokens& in)
      : x(in.x), x_fp8(in.x_fp8), x_scales(in.x_scales), idx64(in.topk_idx),
        idx32(std::vector<int32_t>(in.topk_idx.begin(), in.topk_idx.end())), weights(in.topk_weights) {}

  DispatchInput input(const Case& c, int num_tokens) const {
    DispatchInput d;
    d.num_tokens = num_tokens;
    if (c.fp8_input) {
      d.x = x_fp8.get();
      d.x_dtype = TokenDtype::kFP8E4M3;
      d.x_scales = x_scales.get();
    } else {
      d.x = x.get();
    }
    d.idx_dtype = c.ids;
    d.topk_idx = c.ids == IdDtype::kInt64 ? static_cast<const void*>(idx64.get()) : idx32.get();
    d.topk_weights = weights.get();
    return d;
  }
};

std::vector<RankTokens> case_inputs(const Case& c) {
  auto in = test::make_ep_inputs(c.shape, c.tokens, c.inputs);
  if (c.fp8_input) {
    for (auto& r : in) reference::quantize_fp8_blocks(r.x, r.num_tokens, c.shape.hidden, r.x_fp8, r.x_scales);
  }
  return in;
}

// Checks this rank's receive layout against the reference: segment tables, every valid row's
// payload (and scales), weight and source tag; the source tag must agree with the row's
// self-identification.
void expect_layout(const EpBuffer& b, const ExpertMajor& m, const Case& c, int rank) {
  const EpShape& s = c.shape;
  const int epr = s.experts_per_rank();
  const auto offsets = DeviceArray<int32_t>::download_from(b.segment_offsets(), epr + 1);
  const auto counts = DeviceArray<int32_t>::download_from(b.segment_counts(), epr);
  ASSERT_EQ(offsets, m.segment_offset) << "rank " << rank << ": segment offsets";
  ASSERT_EQ(counts, m.segment_count) << "rank " << rank << ": segment counts";
  const size_t rows = static_cast<size_t>(m.segment_offset[epr]);
  const auto weights = DeviceArray<float>::download_from(b.recv_weights(), rows);
  const auto source = DeviceArray<int32_t>::download_from(b.recv_source(), rows);
  const bool fp8 = c.payload == device::EpPayload::kFP8;
  const auto x16 = fp8 ? std::vector<uint16_t>() : DeviceArray<uint16_t>::download_from(b.recv_x(), rows * s.hidden);
  const auto x8 = fp8 ? DeviceArray<uint8_t>::download_from(b.recv_x(), rows * s.hidden) : std::vector<uint8_t>();
  const int spr = s.hidden / 128;
  const auto scales = fp8 ? DeviceArray<float>::download_from(b.recv_scales(), rows * spr) : std::vector<float>();
  for (int j = 0; j < epr; ++j) {
    for (int i = 0; i < m.segment_count[j]; ++i) {
      const size_t row = static_cast<size_t>(m.segment_offset[j]) + i;
      const int64_t tag = (static_cast<int64_t>(m.src_rank[row]) * c.max_tokens + m.src_token[row]) * s.top_k + m.src_k[row];
      ASSERT_EQ(source[row], tag) << "rank " << rank << " row " << row;
      ASSERT_EQ(weights[row], m.weight[row]) << "rank " << rank << " row " << row;
      if (fp8) {
        ASSERT_EQ(std::memcmp(x8.data() + row * s.hidden, m.rows_fp8.data() + row * s.hidden, s.hidden), 0)
            << "rank " << rank << " row " << row << ": fp8 codes";
        ASSERT_EQ(std::memcmp(scales.data() + row * spr, m.scales.data() + row * spr, spr * 4), 0)
            << "rank " << rank << " row " << row << ": scales";
      } else {
        const uint16_t* got = x16.data() + row * s.hidden;
        ASSERT_EQ(bf16_bits_to_float(got[0]), static_cast<float>(m.src_rank[row])) << "row " << row;
        ASSERT_EQ(bf16_bits_to_float(got[1]) * 256 + bf16_bits_to_float(got[2]),
                  static_cast<float>(m.src_token[row])) << "row " << row;
        ASSERT_EQ(std::memcmp(got, m.rows.data() + row * s.hidden, s.hidden * 2), 0)
            << "rank " << rank << " row " << row;
      }
    }
  }
}

// Expert outputs for combine: random bf16 rows per rank (same on every thread).
std::vector<std::vector<uint16_t>> random_outputs(const std::vector<ExpertMajor>& layouts, int hidden,
                                                  uint64_t seed) {
  std::vector<std::vector<uint16_t>> y;
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (size_t r = 0; r < layouts.size(); ++r) {
    std::mt19937 rng(static_cast<unsigned>(seed * 100 + r));
    std::vector<uint16_t> v(layouts[r].src_rank.size() * hidden);
    for (auto& b : v) b = float_to_bf16_bits(d(rng));
    y.push_back(std::move(v));
  }
  return y;
}

EpConfig config_of(const Case& c) {
  EpConfig cfg;
  cfg.num_experts = c.shape.num_experts;
  cfg.top_k = c.shape.top_k;
  cfg.hidden = c.shape.hidden;
  cfg.max_tokens_per_rank = c.max_tokens;
  cfg.alignment = c.alignment;
  cfg.payload = c.payload;
  cfg.handle_type = symm::HandleType::kFd;
  return cfg;
}

// One rank's test state: runtime, EP buffer, stream, device inputs and a poisoned output.
struct RankContext {
  runtime::DeviceRuntime rt{0};
  std::unique_ptr<EpBuffer> b;
  Stream stream;
  RankInputs dev;
  int T;
  DeviceArray<uint16_t> out;

  RankContext(comm::Group& g, const Case& c, const RankTokens& in)
      : b(EpBuffer::create(g, rt, config_of(c))), dev(in), T(in.num_tokens),
        out(static_cast<size_t>(in.num_tokens) * c.shape.hidden) {}

  // Poisons the output on the stream and meets the other ranks: every rank has allocated and
  // poisoned before any EP kernel runs (NOTE [allocations between EP calls]).
  void ready(comm::Group& g) {
    test::poison(out.get(), out.size() * 2, 0xFF, stream);
    SYMMOE_CUDA_CHECK(cudaStreamSynchronize(stream));
    g.barrier();
  }
};

// SYMMOE_TEST_HOLD_BUFFERS=1 (diagnostic for the legacy-stream repro below): run_case keeps
// every rank's context, EP buffer included, alive until the repro test ends: nothing is
// unmapped or released between cases.
bool hold_buffers() {
  const char* v = std::getenv("SYMMOE_TEST_HOLD_BUFFERS");
  return v != nullptr && std::string(v) == "1";
}
std::mutex g_held_mutex;
std::vector<std::unique_ptr<RankContext>> g_held;

// After a barrier timeout: this rank's pad as it reads it (epoch, arrived[]), and what it
// reads at arrived[me] of every peer's pad through its own mapping of that peer. A peer whose
// local arrived[me] differs from what this rank reads through its mapping means the two
// mappings of one allocation disagree.
void print_signal_pads(const EpBuffer& b, int rank) {
  const symm::SymmetricBuffer& buf = b.buffer();
  const size_t pad = b.layout().pad_offset;
  device::SignalPad mine{};
  SYMMOE_CUDA_CHECK(cudaMemcpy(&mine, static_cast<const char*>(buf.local()) + pad, sizeof(mine),
                               cudaMemcpyDeviceToHost));
  std::string text = "rank " + std::to_string(rank) + ": epoch " + std::to_string(mine.epoch) + ", arrived[]";
  for (int r = 0; r < buf.num_ranks(); ++r) text += " " + std::to_string(mine.arrived[r]);
  text += "; through my mappings, peers' arrived[me]";
  for (int r = 0; r < buf.num_ranks(); ++r) {
    uint64_t v = 0;
    SYMMOE_CUDA_CHECK(cudaMemcpy(&v, static_cast<const char*>(buf.peer(r)) + pad + offsetof(device::SignalPad, arrived) +
                                         sizeof(uint64_t) * rank,
                                 sizeof(v), cudaMemcpyDeviceToHost));
    text += " " + std::to_string(v);
  }
  std::printf("%s\n", text.c_str());
}

// Dispatch (twice when `twice`: the second one runs the entry barrier), check the layout,
// then combine random expert outputs and compare with the reference bitwise.
// `legacy_poison`: poison the receive rows asynchronously on the legacy default stream, as an
// earlier version of this test did (see DISABLED_LegacyStreamPoisonBeforeFirstDispatch).
void run_case(const Case& c, bool twice = false, bool smoke = false, bool legacy_poison = false) {
  const auto inputs = case_inputs(c);
  const auto layouts = reference::dispatch_reference(inputs, c.shape, c.alignment, c.payload);
  const auto y = random_outputs(layouts, c.shape.hidden, c.inputs.seed);
  const auto expected = reference::combine_reference(y, layouts, inputs, c.shape);
  comm::run_thread_ranks(c.ranks, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    auto owned = std::make_unique<RankContext>(g, c, inputs[rank]);
    RankContext& r = *owned;
    if (smoke) {
      // Every rank's mapping of every peer carries writes to the right place (then re-zeroed).
      const symm::SmokeReport report = symm::run_peer_smoke(g, r.b->buffer());
      EXPECT_TRUE(report.ok()) << "rank " << rank << ": " << report.first_mismatch;
      SYMMOE_CUDA_CHECK(cudaMemsetAsync(r.b->buffer().local(), 0, r.b->buffer().mapped_bytes_per_rank(), r.stream));
    }
    const auto& l = r.b->layout();
    const cudaStream_t poison_stream = legacy_poison ? nullptr : r.stream.get();
    test::poison(r.b->recv_x(), l.recv_rows * l.row_bytes, 0xFF, poison_stream);
    test::poison(r.b->recv_weights(), l.recv_rows * 4, 0xFF, poison_stream);
    test::poison(r.b->recv_source(), l.recv_rows * 4, 0xFF, poison_stream);
    r.ready(g);
    DispatchHandle h = r.b->dispatch(r.dev.input(c, r.T), r.stream, slice(c.ranks));
    if (twice) h = r.b->dispatch(r.dev.input(c, r.T), r.stream, slice(c.ranks));
    if (auto failure = r.rt.take_failure(r.stream)) {
      std::printf("rank %d: %s\n", rank, failure->c_str());  // every rank's view, not just the first
      if (legacy_poison) print_signal_pads(*r.b, rank);
      SYMMOE_FAIL(*failure);
    }
    expect_layout(*r.b, layouts[rank], c, rank);
    SYMMOE_CUDA_CHECK(cudaMemcpy(r.b->expert_output(), y[rank].data(), y[rank].size() * 2, cudaMemcpyHostToDevice));
    r.ready(g);  // every rank's expert outputs are uploaded (host copies are not stream-ordered)
    r.b->combine(h, r.out.get(), r.stream, nullptr, slice(c.ranks));
    r.rt.check(r.stream);
    const auto got = r.out.download();
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], expected[rank][i]) << "rank " << rank << " token " << i / c.shape.hidden
                                           << " element " << i % c.shape.hidden;
    }
    g.barrier();
    if (hold_buffers()) {  // diagnostic: nothing of this case is released before the repro ends
      std::lock_guard lock(g_held_mutex);
      g_held.push_back(std::move(owned));
    }
  }, 120);
}

Case make_case(int ranks, int experts, int top_k, int hidden, std::vector<int> tokens, int max_tokens,
               uint64_t seed) {
  Case c;
  c.ranks = ranks;
  c.shape = EpShape{ranks, experts, top_k, hidden};
  c.tokens = std::move(tokens);
  c.max_tokens = max_tokens;
  c.inputs.seed = seed;
  return c;
}

TEST(EpGpu, DispatchAndCombineMatchTheReferenceOn2To8Ranks) {
  SYMMOE_SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  for (int ranks : {2, 4, 8}) {
    for (int rep = 0; rep < 2; ++rep) {
      const int epr = 1 + static_cast<int>(rng() % 6);
      const int top_k = 1 + static_cast<int>(rng() % std::min(8, ranks * epr));
      const int hidden = 8 * (1 + static_cast<int>(rng() % 96));
      const int max_tokens = 1 + static_cast<int>(rng() % 200);
      // T = max, T = 1, T = 0 and random counts.
      std::vector<int> tokens{max_tokens, 1, 0};
      for (int r = 3; r < ranks; ++r) tokens.push_back(static_cast<int>(rng() % (max_tokens + 1)));
      Case c = make_case(ranks, ranks * epr, top_k, hidden, tokens, max_tokens, 100 + ranks * 10 + rep);
      c.alignment = rep == 0 ? 1 : 16;
      c.inputs.idle_rank = ranks - 1;  // a rank that receives nothing
      c.ids = rep == 0 ? IdDtype::kInt64 : IdDtype::kInt32;
      SCOPED_TRACE(testing::Message() << ranks << " ranks, " << ranks * epr << " experts, top-" << top_k
                                      << ", hidden " << hidden << ", max tokens " << max_tokens);
      run_case(c);
    }
  }
}

TEST(EpGpu, DeepSeekShapedRowsAndRepeatedDispatch) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(8, 64, 8, 7168, {128, 77}, 128, 7);
  c.alignment = 128;
  c.inputs.mask_one_in = 0;
  run_case(c, /*twice=*/true, /*smoke=*/true);
}

// The open question of this layer, kept runnable: with the receive rows poisoned asynchronously
// on the legacy default stream right before the first dispatch, and after other 8-rank cases
// in the same process, some ranks' first barrier arrivals are not seen by their peers (H200:
// every run at 2, 5 and 20 s bounds, so it is not a delay). print_signal_pads showed: the ranks
// that passed wrote arrived = 1 into every peer's pad, went on to the second dispatch's entry
// barrier and wrote 2; the others polled with ld.acquire.sys and saw 0 until their bound; read
// afterwards by cudaMemcpy, the pads hold the 2s. What changes it: SYMMOE_TEST_HOLD_BUFFERS=1
// (every earlier case's buffers stay mapped and allocated) passes, 3 of 3 reps; never
// returning released virtual ranges to the driver (a library switch tried once, not kept)
// still fails, 2 of 2. So the earlier buffers' release (unmap, cuMemRelease of exported and
// imported handles) matters, the reuse of their virtual ranges does not; applications that
// create their EP buffers once per process do not meet it. Poison on the rank's own stream
// (every other test) passes. Reproduce with SYMMOE_WAIT_TIMEOUT_S=5 test_ep_gpu
// --gtest_also_run_disabled_tests --gtest_filter='*2To8Ranks*:*LegacyStreamPoison*'.
TEST(EpGpu, DISABLED_LegacyStreamPoisonBeforeFirstDispatch) {
  SYMMOE_SKIP_WITHOUT_GPU();
  for (int rep = 0; rep < 3; ++rep) {
    Case warm = make_case(8, 16, 4, 512, {100, 3}, 128, 60 + rep);
    run_case(warm);
    Case c = make_case(8, 64, 8, 7168, {128, 77}, 128, 7);
    c.alignment = 128;
    c.inputs.mask_one_in = 0;
    run_case(c, /*twice=*/true, /*smoke=*/false, /*legacy_poison=*/true);
  }
  SYMMOE_CUDA_CHECK(cudaDeviceSynchronize());
  g_held.clear();
}

// Which of the DeepSeek-shaped case's traits matter: each variant runs on its own and reports.
TEST(EpGpu, DeepSeekShapedVariants) {
  SYMMOE_SKIP_WITHOUT_GPU();
  struct V { int ranks, experts, hidden; std::vector<int> tokens; int alignment; bool twice; };
  const std::vector<V> variants = {
      {8, 64, 7168, {128, 77}, 128, false}, {8, 64, 256, {128, 77}, 128, false},
      {8, 64, 7168, {128}, 128, false},     {8, 256, 7168, {128, 77}, 128, false},
      {4, 64, 7168, {128, 77}, 128, false}, {8, 64, 7168, {128, 77}, 8, false},
      {8, 64, 7168, {100, 77}, 128, false},
  };
  for (const V& v : variants) {
    Case c = make_case(v.ranks, v.experts, 8, v.hidden, v.tokens, 128, 7);
    c.alignment = v.alignment;
    c.inputs.mask_one_in = 0;
    const std::string what = test::error_text([&] { run_case(c, v.twice); });
    std::printf("variant ranks %d experts %d hidden %d tokens %d,%d alignment %d: %s\n", v.ranks, v.experts,
                v.hidden, v.tokens[0], v.tokens.size() > 1 ? v.tokens[1] : v.tokens[0], v.alignment, what.c_str());
    EXPECT_EQ(what, "<no error>");
  }
}

// The MoE layer end to end: dispatch, the grouped GEMM straight on the receive layout
// (segment offsets / counts as its row tables, expert_output() as its output), combine. With
// integer rows and weights in {-1, 0, 1} every GEMM sum is exact in fp32, so the layer equals
// the references (dispatch, fp64 grouped GEMM, combine) bit for bit. Each rank's GEMM keeps to
// its SM slice: ranks share one GPU here, and a GEMM grid wider than the SMs the other ranks'
// spinning combine kernels leave free could not finish before their wait bound.
TEST(EpGpu, DispatchGroupedGemmCombineIsAnExactMoeLayer) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(4, 16, 4, 256, {64, 40, 0, 17}, 64, 31);
  c.inputs.integer_values = true;
  const int epr = c.shape.experts_per_rank(), h = c.shape.hidden;
  const auto inputs = case_inputs(c);
  const auto layouts = reference::dispatch_reference(inputs, c.shape, c.alignment, c.payload);
  std::vector<std::vector<uint16_t>> weights(c.ranks), y(c.ranks);
  for (int r = 0; r < c.ranks; ++r) {
    std::mt19937 rng(1000 + r);
    weights[r].resize(static_cast<size_t>(epr) * h * h);
    for (auto& w : weights[r]) w = float_to_bf16_bits(static_cast<float>(static_cast<int>(rng() % 3) - 1));
    const ExpertMajor& m = layouts[r];
    y[r].assign(m.src_rank.size() * h, 0);
    gemm::GroupedGemmProblem p;
    p.num_experts = epr;
    p.n = p.k = h;
    p.total_rows = m.segment_offset[epr];
    p.act = m.rows.data();
    p.weights = weights[r].data();
    p.offsets = m.segment_offset.data();
    p.counts = m.segment_count.data();
    p.out = y[r].data();
    reference::grouped_gemm_reference(p);
  }
  const auto expected = reference::combine_reference(y, layouts, inputs, c.shape);
  comm::run_thread_ranks(c.ranks, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    RankContext r(g, c, inputs[rank]);
    gemm::GroupedGemm gg(r.rt, epr);
    DeviceArray<uint16_t> w(weights[rank]);
    r.ready(g);
    const DispatchHandle handle = r.b->dispatch(r.dev.input(c, r.T), r.stream, slice(c.ranks));
    gemm::GroupedGemmProblem p;
    p.num_experts = epr;
    p.n = p.k = h;
    p.total_rows = r.b->layout().recv_rows;
    p.act = r.b->recv_x();
    p.weights = w.get();
    p.offsets = r.b->segment_offsets();
    p.counts = r.b->segment_counts();
    p.out = r.b->expert_output();
    gemm::GroupedGemmOptions o;
    o.budget = slice(c.ranks);
    gg.run(p, r.stream, o);
    r.b->combine(handle, r.out.get(), r.stream, nullptr, slice(c.ranks));
    r.rt.check(r.stream);
    EXPECT_EQ(r.out.download(), expected[rank]) << "rank " << rank;
    g.barrier();
  }, 120);
}

TEST(EpGpu, Fp8QuantizedOnTheFlyAndFp8InputScalesRoundTrip) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(4, 16, 4, 512, {50, 1, 33, 0}, 64, 9);
  c.payload = device::EpPayload::kFP8;
  run_case(c);  // bf16 in, quantized during the prep
  c.fp8_input = true;
  c.inputs.seed = 10;
  run_case(c);  // fp8 + scales in, carried unchanged
}

TEST(EpGpu, CombineOfDispatchWithUnitWeightsCountsTheDestinations) {
  SYMMOE_SKIP_WITHOUT_GPU();
  // Identity experts: y = the received rows. Every (token, expert) row a token was dispatched
  // to contributes x once, so out = x * (number of distinct destination experts).
  Case c = make_case(4, 32, 6, 256, {96, 40}, 96, 21);
  c.inputs.unit_weights = true;
  c.inputs.integer_values = true;
  const auto inputs = case_inputs(c);
  comm::run_thread_ranks(c.ranks, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    RankContext r(g, c, inputs[rank]);
    r.ready(g);
    const DispatchHandle h = r.b->dispatch(r.dev.input(c, r.T), r.stream, slice(c.ranks));
    SYMMOE_CUDA_CHECK(cudaMemcpyAsync(r.b->expert_output(), r.b->recv_x(),
                                      r.b->layout().recv_rows * r.b->layout().row_bytes,
                                      cudaMemcpyDeviceToDevice, r.stream));
    r.b->combine(h, r.out.get(), r.stream, nullptr, slice(c.ranks));
    r.rt.check(r.stream);
    const auto got = r.out.download();
    const RankTokens& in = inputs[rank];
    for (int t = 0; t < r.T; ++t) {
      int destinations = 0;
      for (int k = 0; k < c.shape.top_k; ++k) destinations += in.topk_idx[t * c.shape.top_k + k] >= 0;
      for (int hh = 0; hh < c.shape.hidden; ++hh) {
        const size_t i = static_cast<size_t>(t) * c.shape.hidden + hh;
        ASSERT_EQ(got[i], float_to_bf16_bits(bf16_bits_to_float(in.x[i]) * destinations))
            << "rank " << rank << " token " << t << " element " << hh;
      }
    }
    g.barrier();
  }, 120);
}

TEST(EpGpu, GraphReplaysAreBitwiseEqualToEager) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(4, 16, 4, 1024, {64, 13, 64, 0}, 64, 31);
  c.alignment = 32;
  const auto inputs = case_inputs(c);
  comm::run_thread_ranks(c.ranks, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    RankContext r(g, c, inputs[rank]);
    auto& stream = r.stream;
    const size_t y_bytes = r.b->layout().recv_rows * c.shape.hidden * 2;
    // One step: poison, dispatch, identity "experts" (y = the received rows), combine.
    auto step = [&] {
      test::poison(r.out.get(), r.out.size() * 2, 0xFF, stream);
      const DispatchHandle h = r.b->dispatch(r.dev.input(c, r.T), stream, slice(c.ranks));
      SYMMOE_CUDA_CHECK(cudaMemcpyAsync(r.b->expert_output(), r.b->recv_x(), y_bytes, cudaMemcpyDeviceToDevice, stream));
      r.b->combine(h, r.out.get(), stream, nullptr, slice(c.ranks));
    };
    r.ready(g);
    step();
    r.rt.check(stream);
    const auto eager = r.out.download();
    CapturedGraph graph(stream, step);
    for (int i = 0; i < 100; ++i) {
      graph.launch(stream);
      if (i % 25 == 24 || i == 0) {
        r.rt.check(stream);
        ASSERT_EQ(r.out.download(), eager) << "rank " << rank << " replay " << i;
      }
    }
    r.rt.check(stream);
    ASSERT_EQ(r.out.download(), eager) << "rank " << rank << " after 100 replays";
    g.barrier();
  }, 120);
}

TEST(EpGpu, InvalidIdsAreReportedByTheirRankAndItsReceivers) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(4, 8, 2, 64, {5}, 8, 41);
  c.inputs.mask_one_in = 0;
  auto inputs = case_inputs(c);
  inputs[1].topk_idx[3 * 2 + 1] = 8;  // rank 1, token 3, k 1: out of range
  std::vector<std::string> first(4), second(4);
  comm::run_thread_ranks(c.ranks, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    RankContext r(g, c, inputs[rank]);
    r.ready(g);
    r.b->dispatch(r.dev.input(c, 5), r.stream, slice(c.ranks), 5.0);
    first[rank] = test::error_text([&] { r.rt.check(r.stream); });
    // The protocol went on: the next dispatch with valid ids works everywhere.
    if (rank == 1) r.dev.idx64.upload(std::vector<int64_t>(10, 0));
    g.barrier();
    r.b->dispatch(r.dev.input(c, 5), r.stream, slice(c.ranks), 5.0);
    second[rank] = test::error_text([&] { r.rt.check(r.stream); });
  }, 120);
  EXPECT_NE(first[1].find("topk_idx[token 3, k 1] = 8 is out of range: expert ids lie in [0, 8)"),
            std::string::npos) << first[1];
  for (int r : {0, 2, 3}) {
    EXPECT_NE(first[r].find("rank 1 dispatched an invalid top-k id"), std::string::npos) << first[r];
  }
  for (int r = 0; r < 4; ++r) EXPECT_EQ(second[r], "<no error>") << "rank " << r;
}

TEST(EpGpu, BadCallsFailBeforeLaunchWithNamedErrors) {
  SYMMOE_SKIP_WITHOUT_GPU();
  Case c = make_case(2, 4, 2, 128, {4}, 4, 51);
  const auto inputs = case_inputs(c);
  std::vector<std::string> capacity(2);
  comm::run_thread_ranks(2, {0}, [&](comm::Group& g) {
    const int rank = g.rank();
    runtime::DeviceRuntime rt(0);
    auto b = EpBuffer::create(g, rt, config_of(c));
    Stream stream;
    RankInputs dev(inputs[rank]);
    EXPECT_NE(test::error_text([&] { b->dispatch(dev.input(c, 5), stream); }).find(
                  "dispatch of 5 tokens: this EP buffer holds 0..4 per rank"), std::string::npos);
    Case fp8 = c;
    fp8.fp8_input = true;
    EXPECT_NE(test::error_text([&] { b->dispatch(dev.input(fp8, 4), stream); }).find(
                  "an fp8 e4m3 input cannot be dispatched through a bf16 EP buffer"), std::string::npos);
    DispatchInput no_x = dev.input(c, 4);
    no_x.x = nullptr;
    EXPECT_NE(test::error_text([&] { b->dispatch(no_x, stream); }).find("needs x, topk_idx and topk_weights"),
              std::string::npos);
    EXPECT_NE(test::error_text([&] { b->combine(DispatchHandle{4, 0}, nullptr, stream); }).find(
                  "combine with the handle of dispatch #0"), std::string::npos);
    // A receive capacity too small for this routing: a named device-side error, no corruption.
    EpConfig small = config_of(c);
    small.recv_capacity_rows = 1;
    auto tiny = EpBuffer::create(g, rt, small);
    tiny->dispatch(dev.input(c, 4), stream, slice(2), 5.0);
    capacity[rank] = test::error_text([&] { rt.check(stream); });
    g.barrier();
  }, 120);
  for (const auto& m : capacity) {
    EXPECT_NE(m.find("receive rows but the EP buffer holds 1 (EpConfig::recv_capacity_rows)"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace symmoe::ep
