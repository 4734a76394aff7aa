#include "gemm_baseline.hpp"

#include <cublasLt.h>

#include <memory>

#include "symmoe/core/error.hpp"

namespace symmoe::cli {

namespace {

void check(cublasStatus_t s, const char* what) {
  SYMMOE_CHECK(s == CUBLAS_STATUS_SUCCESS, "cuBLASLt: ", what, " failed with status ", static_cast<int>(s));
}

__device__ uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

__global__ void fill_fp8_kernel(uint8_t* dst, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix(seed * 0x9E3779B97F4A7C15ull + i);
    // sign | exponent 0..7 | mantissa: magnitudes up to 1.875, never NaN (0x7F / 0xFF).
    dst[i] = static_cast<uint8_t>((h & 0x80) | ((h >> 8) & 0x3F));
  }
}

__global__ void fill_bf16_kernel(uint16_t* dst, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix(seed * 0x9E3779B97F4A7C15ull + i);
    const float v = static_cast<float>(h >> 40) / static_cast<float>(1 << 24) * 2.f - 1.f;
    dst[i] = static_cast<uint16_t>(__float_as_uint(v) >> 16);
  }
}

__global__ void fill_f32_kernel(float* dst, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = value;
  }
}

__global__ void fill_i32_kernel(int32_t* dst, int count, int32_t value, int32_t step) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) dst[i] = value + i * step;
}

unsigned grid_for(size_t count) { return static_cast<unsigned>(std::min<size_t>((count + 255) / 256, 4096)); }

}  // namespace

struct CublasLtGemm::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulHeuristicResult_t algos[8]{};
  int num_algos = 0;
  int algo = 0;  // the first of the heuristic's candidates that runs
  void* workspace = nullptr;
  size_t workspace_bytes = size_t{64} << 20;
  float* scales = nullptr;  // per-tensor scales: weights at [0], activations at [4] (16-byte aligned each)
  float* block_scales = nullptr;  // Fp8Scales::kBlock: weights' [N / 128][K / 128], then activations' [K / 128][M]
  ~State() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (handle) cublasLtDestroy(handle);
    cudaFree(workspace);
    cudaFree(scales);
    cudaFree(block_scales);
  }
};

// Column-major view: out^T [N x M] = W [N x K] · act^T [K x M]. W is row-major [N, K], i.e. a
// column-major K x N matrix taken transposed ("TN", the layout cuBLASLt's fp8 path requires).
CublasLtGemm::CublasLtGemm(gemm::GemmDtype dtype, int64_t m, int64_t n, int64_t k, Fp8Scales scales)
    : s_(new State) {
  std::unique_ptr<State> guard(s_);  // a failed set-up (a throw below) frees what it made
  const bool fp8 = dtype == gemm::GemmDtype::kFP8E4M3;
  const bool block = fp8 && scales == Fp8Scales::kBlock;
  SYMMOE_CHECK(!block || (n % 128 == 0 && k % 512 == 0 && m % 4 == 0), "cuBLASLt block-scaled fp8: N = ", n,
               " must be a multiple of 128, K = ", k, " of 512 (16-byte scale rows), M = ", m, " of 4");
  const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  check(cublasLtCreate(&s_->handle), "cublasLtCreate");
  check(cublasLtMatmulDescCreate(&s_->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof(nt)), "TRANSB");
  SYMMOE_CUDA_CHECK(cudaMalloc(&s_->workspace, s_->workspace_bytes));
  SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&s_->scales), 8 * sizeof(float)));
  const float ones[8] = {1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f};
  SYMMOE_CUDA_CHECK(cudaMemcpy(s_->scales, ones, sizeof(ones), cudaMemcpyHostToDevice));
  if (block) {
    // A = the weights (K innermost): 128 x 128 blocks; B = the activations (K innermost): 1 x 128.
    const size_t w_count = size_t(n / 128) * (k / 128), a_count = size_t(k / 128) * m;
    SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&s_->block_scales), (w_count + a_count) * sizeof(float)));
    fill_f32(s_->block_scales, w_count + a_count, 1.f, nullptr);
    SYMMOE_CUDA_CHECK(cudaDeviceSynchronize());
    const int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    const float* sa = s_->block_scales;
    const float* sb = s_->block_scales + w_count;
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof(mode_a)),
          "A scale mode (128 x 128 blocks)");
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof(mode_b)),
          "B scale mode (1 x 128 blocks)");
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof(sa)), "A scale");
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof(sb)), "B scale");
  } else if (fp8) {
    const float* sa = s_->scales;
    const float* sb = s_->scales + 4;
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof(sa)), "A scale");
    check(cublasLtMatmulDescSetAttribute(s_->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof(sb)), "B scale");
  }
  check(cublasLtMatrixLayoutCreate(&s_->a, in, k, n, k), "layout A");
  check(cublasLtMatrixLayoutCreate(&s_->b, in, k, m, k), "layout B");
  check(cublasLtMatrixLayoutCreate(&s_->d, CUDA_R_16BF, n, m, n), "layout D");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &s_->workspace_bytes,
                                             sizeof(s_->workspace_bytes)),
        "workspace preference");
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(s_->handle, s_->desc, s_->a, s_->b, s_->d, s_->d, pref, 8,
                                                           s_->algos, &s_->num_algos);
  cublasLtMatmulPreferenceDestroy(pref);
  check(st, "cublasLtMatmulAlgoGetHeuristic");
  SYMMOE_CHECK(s_->num_algos > 0, "cuBLASLt has no algorithm for ", block ? "block-scaled fp8" : fp8 ? "fp8" : "bf16",
               " M = ", m, ", N = ", n, ", K = ", k);
  guard.release();
}

CublasLtGemm::~CublasLtGemm() { delete s_; }

// A candidate the heuristic offers can still be refused at run time (CUBLAS_STATUS_NOT_SUPPORTED):
// the next one is tried, so the first run decides (outside any graph capture: bench warm-up).
void CublasLtGemm::run(const void* act, const void* w, void* out, cudaStream_t stream) {
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
  for (; s_->algo < s_->num_algos; ++s_->algo) {
    st = cublasLtMatmul(s_->handle, s_->desc, &alpha, w, s_->a, act, s_->b, &beta, out, s_->d, out, s_->d,
                        &s_->algos[s_->algo].algo, s_->workspace, s_->workspace_bytes, stream);
    if (st != CUBLAS_STATUS_NOT_SUPPORTED) break;
  }
  check(st, "cublasLtMatmul (every candidate algorithm)");
}

void fill_fp8(void* dst, size_t count, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_fp8_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<uint8_t*>(dst), count, seed);
  SYMMOE_CUDA_CHECK(cudaGetLastError(), "fill_fp8");
}

void fill_bf16(void* dst, size_t count, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_bf16_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<uint16_t*>(dst), count, seed);
  SYMMOE_CUDA_CHECK(cudaGetLastError(), "fill_bf16");
}

void fill_f32(float* dst, size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_f32_kernel<<<grid_for(count), 256, 0, stream>>>(dst, count, value);
  SYMMOE_CUDA_CHECK(cudaGetLastError(), "fill_f32");
}

void fill_i32_ramp(int32_t* dst, int count, int32_t step, cudaStream_t stream) {
  if (count == 0) return;
  fill_i32_kernel<<<grid_for(count), 256, 0, stream>>>(dst, count, 0, step);
  SYMMOE_CUDA_CHECK(cudaGetLastError(), "fill_i32_ramp");
}

void fill_i32(int32_t* dst, int count, int32_t value, cudaStream_t stream) {
  if (count == 0) return;
  fill_i32_kernel<<<grid_for(count), 256, 0, stream>>>(dst, count, value, 0);
  SYMMOE_CUDA_CHECK(cudaGetLastError(), "fill_i32");
}

}  // namespace symmoe::cli
