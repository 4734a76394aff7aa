#include "symmoe/prefetch/prefetcher.hpp"

#include "prefetch_copy_launch.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/symm/peer_validation.hpp"

namespace symmoe::prefetch {

Prefetcher::Prefetcher(comm::Group& group, const ExpertPool& pool, runtime::DeviceRuntime& rt,
                       PrefetchPlan plan, PrefetchMode mode, PrefetchOptions options)
    : pool_(pool),
      rt_(rt),
      mode_(mode),
      synchronize_(!(options.static_weights && mode == PrefetchMode::kPull)),
      pipeline_(prefetch_pipeline_from_env()) {
  SYMMOE_CHECK(group.size() == static_cast<int>(pool.layout().num_ranks), "the group has ",
               group.size(), " ranks but the expert pool spans ", pool.layout().num_ranks);
  agree_on_plan(group, plan, pool.layout(),
                static_cast<uint64_t>(mode) * 2 + (synchronize_ ? 1 : 0) + 1, "prefetch plan");
  const auto tasks = copy_tasks(plan, pool.layout(), group.rank(), mode);
  num_tasks_ = static_cast<int>(tasks.size());
  bytes_ = count_bytes(tasks, pool.layout(), group.rank());
  if (!tasks.empty()) {
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&tasks_), tasks.size() * sizeof(device::CopyTask)));
    SYMMOE_CUDA_CHECK(cudaMemcpy(tasks_, tasks.data(), tasks.size() * sizeof(device::CopyTask),
                                 cudaMemcpyHostToDevice));
  }
}

Prefetcher::~Prefetcher() {
  if (tasks_ != nullptr) cudaFree(tasks_);
}

runtime::GridLaunch Prefetcher::launch(cudaStream_t stream, runtime::SmBudget budget,
                                       double timeout_s, PrefetchTrace* trace) {
  const device::ExpertPoolLayout& layout = pool_.layout();
  const uint64_t per_task = (layout.expert_bytes + pipeline_.chunk_bytes - 1) / pipeline_.chunk_bytes;
  const runtime::GridLaunch config = prefetch_copy_config(
      rt_.device(), budget, pipeline_, per_task * static_cast<uint64_t>(num_tasks_));
  PrefetchCopyArgs args{};
  args.pipeline = pipeline_;
  args.peers = pool_.buffer().peer_table();
  symm::validate_peer_table(args.peers, rt_.device());
  args.layout = layout;
  args.tasks = tasks_;
  args.num_tasks = static_cast<uint32_t>(num_tasks_);
  args.grid = rt_.grid_state();
  args.status = rt_.status();
  args.timeout_ns = runtime::wait_timeout_ns(timeout_s);
  args.synchronize = synchronize_ ? 1 : 0;
  args.trace = trace;
  launch_prefetch_copy(args, config, stream);
  return config;
}

}  // namespace symmoe::prefetch
