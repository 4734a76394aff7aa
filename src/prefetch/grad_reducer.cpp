#include "symmoe/prefetch/grad_reducer.hpp"

#include "prefetch_copy_launch.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::prefetch {

std::unique_ptr<GradPool> GradPool::create(comm::Group& group, const ExpertSpec& spec,
                                           uint32_t experts_per_rank, uint32_t num_slots,
                                           symm::HandleType handle_type) {
  std::unique_ptr<GradPool> pool(new GradPool());
  pool->elements_ = spec.elements();
  SYMMOE_CHECK(pool->elements_ % 4 == 0, "gradient reduce moves float4: an expert's ",
               pool->elements_, " elements must be a multiple of 4");
  SYMMOE_CHECK(experts_per_rank >= 1, "a gradient pool needs at least one expert per rank");
  pool->experts_per_rank_ = experts_per_rank;
  const uint64_t bytes = (pool->elements_ * sizeof(float) + device::kExpertAlignment - 1) /
                         device::kExpertAlignment * device::kExpertAlignment;
  pool->layout_ = device::make_expert_pool_layout(bytes, static_cast<uint32_t>(group.size()), 0,
                                                  num_slots);
  symm::SymmetricBufferOptions options;
  options.bytes_per_rank = pool->layout_.bytes_per_rank;
  options.handle_type = handle_type;
  options.layout_name = "grad_pool";
  options.layout_params = {bytes, experts_per_rank, num_slots};
  pool->buffer_ = symm::SymmetricBuffer::create(group, options);
  return pool;
}

float* GradPool::slot(uint32_t s) const {
  SYMMOE_CHECK(s < layout_.num_slots, "slot ", s, " is outside this rank's ", layout_.num_slots);
  return reinterpret_cast<float*>(static_cast<char*>(buffer_->local()) + layout_.slot_at(s));
}

GradReducer::GradReducer(comm::Group& group, const GradPool& pool, runtime::DeviceRuntime& rt,
                         const PrefetchPlan& plan)
    : pool_(pool), rt_(rt) {
  // The plan addresses experts of the weight pool: validate it against those dimensions.
  device::ExpertPoolLayout weights = pool.layout();
  weights.experts_per_rank = pool.experts_per_rank();
  agree_on_plan(group, plan, weights, 0, "gradient reduce plan");
  // Sources of each owned expert, in (rank, plan order) order.
  const uint32_t epr = pool.experts_per_rank();
  const uint32_t first = static_cast<uint32_t>(group.rank()) * epr;
  std::vector<std::vector<GradSource>> per_expert(epr);
  for (uint32_t q = 0; q < plan.per_rank.size(); ++q) {
    for (const SlotAssignment& a : plan.per_rank[q]) {
      if (a.expert >= first && a.expert < first + epr) {
        per_expert[a.expert - first].push_back({q, 0, pool.layout().slot_at(a.slot)});
      }
    }
  }
  std::vector<uint32_t> begin(epr + 1, 0);
  std::vector<GradSource> sources;
  for (uint32_t j = 0; j < epr; ++j) {
    begin[j] = static_cast<uint32_t>(sources.size());
    sources.insert(sources.end(), per_expert[j].begin(), per_expert[j].end());
  }
  begin[epr] = static_cast<uint32_t>(sources.size());
  num_sources_ = static_cast<int>(sources.size());
  const uint64_t expert_bytes = pool.elements() * sizeof(float);
  bytes_.read = (sources.size() + epr) * expert_bytes;
  bytes_.written = (sources.size() + epr) * expert_bytes;
  for (const GradSource& s : sources) {
    if (s.rank != static_cast<uint32_t>(group.rank())) bytes_.remote += 2 * expert_bytes;
  }
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&source_begin_), begin.size() * sizeof(uint32_t)));
  SYMMOE_CUDA_CHECK(cudaMemcpy(source_begin_, begin.data(), begin.size() * sizeof(uint32_t),
                               cudaMemcpyHostToDevice));
  if (!sources.empty()) {
    SYMMOE_CUDA_CHECK(cudaMalloc(&sources_, sources.size() * sizeof(GradSource)));
    SYMMOE_CUDA_CHECK(cudaMemcpy(sources_, sources.data(), sources.size() * sizeof(GradSource),
                                 cudaMemcpyHostToDevice));
  }
}

GradReducer::~GradReducer() {
  if (source_begin_ != nullptr) cudaFree(source_begin_);
  if (sources_ != nullptr) cudaFree(sources_);
}

runtime::GridLaunch GradReducer::launch(float* owner_grads, cudaStream_t stream,
                                        runtime::SmBudget budget, double timeout_s) {
  SYMMOE_CHECK(owner_grads != nullptr, "gradient reduce needs the owner's gradient buffer");
  SYMMOE_CHECK(reinterpret_cast<uintptr_t>(owner_grads) % 16 == 0,
               "owner gradients must be 16-byte aligned (float4)");
  GradReduceArgs args{};
  args.peers = pool_.buffer().peer_table();
  symm::validate_peer_table(args.peers, rt_.device());
  args.pad_offset = pool_.layout().pad_offset;
  args.source_begin = source_begin_;
  args.sources = static_cast<const GradSource*>(sources_);
  args.owner_grads = owner_grads;
  args.elements = pool_.elements();
  args.experts_per_rank = pool_.experts_per_rank();
  args.grid = rt_.grid_state();
  args.status = rt_.status();
  args.timeout_ns = runtime::wait_timeout_ns(timeout_s);
  const runtime::GridLaunch config = grad_reduce_config(rt_.device(), budget);
  launch_grad_reduce(args, config, stream);
  return config;
}

}  // namespace symmoe::prefetch
