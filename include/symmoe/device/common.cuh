// Qualifiers shared by the framework-free device headers: they compile as CUDA (device and
// host) and as plain C++ (host only), so the host can size and address with the same code.
#pragma once

#if defined(__CUDACC__)
#define SYMMOE_HOST_DEVICE __host__ __device__ __forceinline__
#define SYMMOE_DEVICE __device__ __forceinline__
#else
#define SYMMOE_HOST_DEVICE inline
#endif
