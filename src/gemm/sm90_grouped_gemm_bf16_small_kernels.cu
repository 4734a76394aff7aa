// Grouped GEMM, bf16, small-M tiles: CTA tile 64x128x64, cluster 1x1, ping-pong consumers.
#include "sm90_grouped_gemm_cutlass.cuh"

namespace symmoe::gemm::sm90 {

const ConfigOps& bf16_small_ops() {
  static const ConfigOps ops =
      make_config_ops<TileConfig<cutlass::bfloat16_t, 64, 128, 64, 1, 1, false>>(GemmTile::kSmallM);
  return ops;
}

}  // namespace symmoe::gemm::sm90
