// Grouped GEMM, fp8, small-M tiles: CTA tile 64x128x128, cluster 1x1, ping-pong consumers.
#include "sm90_grouped_gemm_cutlass.cuh"

namespace symmoe::gemm::sm90 {

const ConfigOps& fp8_small_ops() {
  static const ConfigOps ops =
      make_config_ops<TileConfig<cutlass::float_e4m3_t, 64, 128, 128, 1, 1, false>>(GemmTile::kSmallM);
  return ops;
}

}  // namespace symmoe::gemm::sm90
