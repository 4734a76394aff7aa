// Grouped GEMM, fp8, large-M tiles: CTA tile 128x128x128, cluster 1x2, cooperative consumers.
#include "sm90_grouped_gemm_cutlass.cuh"

namespace symmoe::gemm::sm90 {

const ConfigOps& fp8_large_ops() {
  static const ConfigOps ops =
      make_config_ops<TileConfig<cutlass::float_e4m3_t, 128, 128, 128, 1, 2, true>>(GemmTile::kLargeM);
  return ops;
}

}  // namespace symmoe::gemm::sm90
