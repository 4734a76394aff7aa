// The frame of our SM90 grouped-GEMM wgmma kernels (fp8 with block scales, bf16): persistent
// CTAs of one producer and two consumer warpgroups over every expert's 128 x kBN tiles, TMA
// stages, the tile walk, the epilogue and the launch. The consumers' mainloop is a parameter of
// the kernel (Consumer::run): the fp8 one promotes per scale block
// (sm90_grouped_gemm_fp8_wgmma_kernels.cu), the bf16 one accumulates in the tensor cores
// (sm90_grouped_gemm_bf16_wgmma_kernels.cu). NOTE [fp8 wgmma kernel] describes the whole.
// Private to src/gemm.
#pragma once

// The frame in layers, each header including the one before:
//   sm90_wgmma_frame_layout.cuh    shapes, parameters, tile location, stage ring, shared memory
//   sm90_wgmma_frame_scales.cuh    fp8 block scales: staged by the producer, read by consumers
//   sm90_wgmma_frame_producer.cuh  the producer warpgroup: copies and the tile schedule
//   sm90_wgmma_frame_consumer.cuh  what the consumers' mainloops share: descriptors, epilogue, tile walk
//   sm90_wgmma_frame_kernel.cuh    the kernel
//   sm90_wgmma_frame_launch.cuh    the host side: tensor maps, CTAs, launch
#include "sm90_wgmma_frame_launch.cuh"
