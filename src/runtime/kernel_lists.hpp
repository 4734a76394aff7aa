// Each CUDA translation unit of the library lists its kernels here (private).
#pragma once

#include <vector>

#include "symmoe/runtime/kernel_registry.hpp"

namespace symmoe::runtime {

void append_smoke_kernels(std::vector<KernelEntry>& out);    // symm/peer_smoke_kernels.cu
void append_barrier_kernels(std::vector<KernelEntry>& out);  // runtime/barrier_kernels.cu
void append_prefetch_kernels(std::vector<KernelEntry>& out);  // prefetch/sm90_prefetch_copy_kernels.cu
void append_ep_dispatch_kernels(std::vector<KernelEntry>& out);  // ep/sm90_ep_dispatch_kernels.cu
void append_ep_combine_kernels(std::vector<KernelEntry>& out);   // ep/sm90_ep_combine_kernels.cu
void append_grouped_gemm_kernels(std::vector<KernelEntry>& out);  // gemm/grouped_gemm.cpp
void append_act_scales_transpose_kernels(std::vector<KernelEntry>& out);  // gemm/act_scales_transpose_kernels.cu

}  // namespace symmoe::runtime
