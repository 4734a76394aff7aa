// Host side of the DeepGEMM baseline (gemm_baseline_deepgemm.hpp): the tensor maps, shared
// memory size and launch of DeepGEMM's sm90_fp8_gemm_1d2d_impl as its kernel expects them
// (read from its headers: A [rows, K] and B [E * N, K] in boxes of 128 K x block rows with the
// 128-byte swizzle; activation scales K-block-major [K / 128, rows rounded up to 4]; the output
// in strips of swizzle / 2 columns; grouped_layout[row] = the row's expert; one CTA per SM, 128
// producer + 256 math threads).
#include "gemm_baseline_deepgemm.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "gemm_baseline_deepgemm_configs.hpp"
#include "symmoe/core/cuda_driver.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe::cli {

#ifdef SYMMOE_WITH_DEEPGEMM
namespace deepgemm_detail {
void append_config_0(std::vector<DeepGemmKernel>&);
void append_config_1(std::vector<DeepGemmKernel>&);
void append_config_2(std::vector<DeepGemmKernel>&);
void append_config_3(std::vector<DeepGemmKernel>&);
void append_config_4(std::vector<DeepGemmKernel>&);
}  // namespace deepgemm_detail
static_assert(kDeepGemmConfigCount == 5, "one append_config_<i> per config");
#endif

std::string DeepGemmConfig::name() const {
  char text[48];
  std::snprintf(text, sizeof(text), "%dx%d s%d%s", block_m, block_n, stages, multicast > 1 ? " c2" : "");
  return text;
}

const std::vector<DeepGemmKernel>& deepgemm_kernels() {
  static const std::vector<DeepGemmKernel> kernels = [] {
    std::vector<DeepGemmKernel> out;
#ifdef SYMMOE_WITH_DEEPGEMM
    deepgemm_detail::append_config_0(out);
    deepgemm_detail::append_config_1(out);
    deepgemm_detail::append_config_2(out);
    deepgemm_detail::append_config_3(out);
    deepgemm_detail::append_config_4(out);
#endif
    return out;
  }();
  return kernels;
}

std::vector<DeepGemmConfig> deepgemm_configs(int experts, int m, int n, int k) {
  std::vector<DeepGemmConfig> out;
  if (experts <= 0 || m <= 0 || n % 64 != 0 || k % 128 != 0) return out;
  for (const DeepGemmKernel& kern : deepgemm_kernels()) {
    if (kern.n != 0) continue;  // one entry per config: its any-shape kernel
    // A block of rows must stay within one expert (DeepGEMM reads the block's expert from its
    // first row).
    if (m % kern.config.block_m == 0) out.push_back(kern.config);
  }
  return out;
}

namespace {

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// The kernel's dynamic shared memory, laid out as its header does: staged output tile, stages of
// (A, B, A scales padded to 128 bytes), the weight scales of every K block (two rows when a tile
// spans two 128-column scale blocks), full and empty barriers.
size_t smem_bytes(const DeepGemmConfig& c, int k) {
  const size_t d = align_up(size_t(c.block_m) * c.block_n * 2, 1024);
  const size_t stage = size_t(c.block_m) * 128 + size_t(c.block_n) * 128 + align_up(size_t(c.block_m) * 4, 128);
  const size_t sfb = align_up(size_t(k / 128) * (128 % c.block_n == 0 ? 1 : 2) * 4, 8);
  return d + c.stages * stage + sfb + 2 * size_t(c.stages) * 8;
}

CUtensorMap encode(const char* what, const void* base, CUtensorMapDataType type, uint64_t inner, uint64_t outer,
                   uint64_t row_bytes, uint32_t box_inner, uint32_t box_outer, CUtensorMapSwizzle swizzle) {
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t elem_strides[2] = {1, 1};
  CUtensorMap map{};
  const CUresult rc = driver().cuTensorMapEncodeTiled(&map, type, 2, const_cast<void*>(base), dims, strides, box,
                                                      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  SYMMOE_CHECK(rc == CUDA_SUCCESS, "DeepGEMM baseline: cuTensorMapEncodeTiled for ", what, " failed (CUresult ",
               static_cast<int>(rc), ")");
  return map;
}

CUtensorMapSwizzle swizzle_mode(uint32_t bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B;
}

__global__ void transpose_scales_kernel(const float* src, float* dst, int rows, int kblocks, int rows_aligned) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < int64_t{rows} * kblocks;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / kblocks, kb = i % kblocks;
    dst[kb * rows_aligned + r] = src[i];
  }
}

__global__ void expert_of_row_kernel(int* dst, int rows, int m) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) dst[i] = i / m;
}

__global__ void max_diff_kernel(const uint16_t* a, const uint16_t* b, size_t count, unsigned* out) {
  float diff = 0, mag = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const float x = __uint_as_float(uint32_t{a[i]} << 16), y = __uint_as_float(uint32_t{b[i]} << 16);
    diff = fmaxf(diff, fabsf(x - y));
    mag = fmaxf(mag, fabsf(y));
  }
  // Non-negative floats order like their bit patterns.
  atomicMax(out, __float_as_uint(diff));
  atomicMax(out + 1, __float_as_uint(mag));
}

}  // namespace

struct DeepGemmGrouped::State {
  DeepGemmConfig config;
  const void* fn = nullptr;
  int experts = 0, m = 0, n = 0, k = 0;
  size_t smem = 0;
  int* layout = nullptr;
  float* sfa = nullptr;
  const float* sfb = nullptr;
  CUtensorMap map_a{}, map_d{}, map_sfa{};
  ~State() {
    cudaFree(layout);
    cudaFree(sfa);
  }
};

DeepGemmGrouped::DeepGemmGrouped(const DeepGemmConfig& config, int experts, int m, int n, int k, const void* act,
                                 const float* act_scales, const float* w_scales, void* out, cudaStream_t stream)
    : s_(new State) {
  try {
    State& s = *s_;
    s.config = config;
    s.experts = experts;
    s.m = m;
    s.n = n;
    s.k = k;
    s.sfb = w_scales;
    for (const DeepGemmKernel& kern : deepgemm_kernels()) {
      if (!(kern.config == config)) continue;
      if (kern.n == uint32_t(n) && kern.k == uint32_t(k)) s.fn = kern.fn;  // compiled for the shape: preferred
      if (kern.n == 0 && s.fn == nullptr) s.fn = kern.fn;
    }
    SYMMOE_CHECK(s.fn != nullptr, "DeepGEMM baseline: config ", config.name(), " is not built in");
    SYMMOE_CHECK(m % config.block_m == 0 && n % 64 == 0 && k % 128 == 0, "DeepGEMM baseline: ", config.name(),
                 " needs M per expert a multiple of ", config.block_m, ", N of 64 and K of 128 (got M ", m, ", N ", n,
                 ", K ", k, ")");
    const int rows = experts * m, kblocks = k / 128, rows_aligned = (rows + 3) / 4 * 4;
    s.smem = smem_bytes(config, k);
    SYMMOE_CUDA_CHECK(cudaFuncSetAttribute(s.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s.smem)),
                      "DeepGEMM ", config.name(), ": ", s.smem, " bytes of shared memory");
    SYMMOE_CUDA_CHECK(cudaMalloc(&s.layout, size_t(rows) * sizeof(int)));
    SYMMOE_CUDA_CHECK(cudaMalloc(&s.sfa, size_t(rows_aligned) * kblocks * sizeof(float)));
    SYMMOE_CUDA_CHECK(cudaMemsetAsync(s.sfa, 0, size_t(rows_aligned) * kblocks * sizeof(float), stream));
    expert_of_row_kernel<<<256, 256, 0, stream>>>(s.layout, rows, m);
    transpose_scales_kernel<<<1024, 256, 0, stream>>>(act_scales, s.sfa, rows, kblocks, rows_aligned);
    SYMMOE_CUDA_CHECK(cudaGetLastError());
    s.map_a = encode("activations", act, CU_TENSOR_MAP_DATA_TYPE_UINT8, k, rows, k, 128, config.block_m,
                     CU_TENSOR_MAP_SWIZZLE_128B);
    const uint32_t swz = deepgemm_swizzle_d(config.block_n);
    s.map_d = encode("output", out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, n, rows, uint64_t(n) * 2, swz / 2,
                     config.block_m, swizzle_mode(swz));
    s.map_sfa = encode("activation scales", s.sfa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rows_aligned, kblocks,
                       uint64_t(rows_aligned) * 4, config.block_m, 1, CU_TENSOR_MAP_SWIZZLE_NONE);
  } catch (...) {
    delete s_;
    throw;
  }
}

DeepGemmGrouped::~DeepGemmGrouped() { delete s_; }

void DeepGemmGrouped::run(const void* weights, cudaStream_t stream) {
  State& s = *s_;
  CUtensorMap map_b = encode("weights", weights, CU_TENSOR_MAP_DATA_TYPE_UINT8, s.k, uint64_t(s.experts) * s.n, s.k,
                             128, s.config.block_n, CU_TENSOR_MAP_SWIZZLE_128B);
  float* sfb = const_cast<float*>(s.sfb);
  int* signal = nullptr;
  uint32_t shape_m = uint32_t(s.experts) * s.m, shape_n = s.n, shape_k = s.k;
  void* args[] = {&sfb, &s.layout, &signal, &shape_m, &shape_n, &shape_k, &s.map_a, &map_b, &s.map_d, &s.map_sfa};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(kDeepGemmSms, 1, 1);
  config.blockDim = dim3(128 + 256, 1, 1);
  config.dynamicSmemBytes = s.smem;
  config.stream = stream;
  cudaLaunchAttribute attr{};
  if (s.config.multicast > 1) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = s.config.multicast;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  SYMMOE_CUDA_CHECK(cudaLaunchKernelExC(&config, s.fn, args), "DeepGEMM ", s.config.name());
}

double bf16_max_rel_diff(const void* a, const void* b, size_t count, cudaStream_t stream) {
  unsigned* words = nullptr;
  SYMMOE_CUDA_CHECK(cudaMalloc(&words, 2 * sizeof(unsigned)));
  unsigned host[2] = {0, 0};
  SYMMOE_CUDA_CHECK(cudaMemsetAsync(words, 0, 2 * sizeof(unsigned), stream));
  max_diff_kernel<<<512, 256, 0, stream>>>(static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), count,
                                           words);
  const cudaError_t rc = cudaMemcpyAsync(host, words, sizeof(host), cudaMemcpyDeviceToHost, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  cudaFree(words);
  SYMMOE_CUDA_CHECK(rc);
  SYMMOE_CUDA_CHECK(sync);
  float diff, mag;
  std::memcpy(&diff, &host[0], 4);
  std::memcpy(&mag, &host[1], 4);
  return mag > 0 ? diff / mag : diff;
}

}  // namespace symmoe::cli
