// A typed device allocation for tests: upload, download, poison, freed on scope exit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "symmoe/core/error.hpp"

namespace symmoe::test {

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : count_(count) {
    if (count_ > 0) SYMMOE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    SYMMOE_CHECK(host.size() == count_, "upload of ", host.size(), " elements into ", count_);
    if (count_ > 0) SYMMOE_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const { return download_from(ptr_, count_); }

  static std::vector<T> download_from(const void* src, size_t count) {
    std::vector<T> host(count);
    if (count > 0) SYMMOE_CUDA_CHECK(cudaMemcpy(host.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  size_t count_ = 0;
  T* ptr_ = nullptr;
};

// Fills `bytes` at `dst` with `byte` (stream-ordered when `stream` is given).
inline void poison(void* dst, size_t bytes, uint8_t byte = 0xFF, cudaStream_t stream = nullptr) {
  if (bytes > 0) SYMMOE_CUDA_CHECK(cudaMemsetAsync(dst, byte, bytes, stream));
}

}  // namespace symmoe::test
