// Grouped GEMM, bf16, large-M tiles: CTA tile 128x256x64, cluster 1x2, cooperative consumers.
#include "sm90_grouped_gemm_cutlass.cuh"

namespace symmoe::gemm::sm90 {

const ConfigOps& bf16_large_ops() {
  static const ConfigOps ops =
      make_config_ops<TileConfig<cutlass::bfloat16_t, 128, 256, 64, 1, 2, true>>(GemmTile::kLargeM);
  return ops;
}

}  // namespace symmoe::gemm::sm90
