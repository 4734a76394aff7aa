#!/usr/bin/env bash
# Expert-prefetch copy shapes on prebuilt binaries (carry build/release/tools/symmoe), pull with
# barriers, against the same-run d2d copy: the bulk TMA pipeline at each SHAPES entry
# (SYMMOE_PREFETCH_CHUNK_KB x _STAGES x _STORES_IN_FLIGHT), then the vector copy (the default)
# at each VECTOR_KB chunk size. Usage: [SHAPES="32x6x1 ..."] [VECTOR_KB="64 128"]
# [CASES=slots_1,slots_5] [FLAGS=--static-weights] prefetch_sweep.sh. Output: $OUT/prefetch_sweep.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
for shape in ${SHAPES:-32x6x1 32x6x2 16x12x1 16x12x2 16x12x3 32x7x2 64x3x1 8x16x2}; do
  IFS=x read -r kb stages stores <<<"$shape"
  echo "== chunk ${kb} KiB x ${stages} stages, ${stores} store(s) in flight"
  SYMMOE_PREFETCH_COPY=bulk SYMMOE_PREFETCH_CHUNK_KB=$kb SYMMOE_PREFETCH_STAGES=$stages \
    SYMMOE_PREFETCH_STORES_IN_FLIGHT=$stores \
    timeout 120 $B bench prefetch --ranks 4 --reps 8 --cases ${CASES:-slots_1,slots_5,heavy} ${FLAGS:-} 2>&1 |
    grep -E "^  [a-z_0-9]+ +[0-9]|d2d copy|phases \(|error|failed"
done 2>&1 | tee $OUT/prefetch_sweep.log
for kb in ${VECTOR_KB:-32 64 128}; do
  echo "== vector copy, chunk ${kb} KiB"
  SYMMOE_PREFETCH_COPY=vector SYMMOE_PREFETCH_CHUNK_KB=$kb \
    timeout 120 $B bench prefetch --ranks 4 --reps 8 --cases ${CASES:-slots_1,slots_5,heavy} ${FLAGS:-} 2>&1 |
    grep -E "^  [a-z_0-9]+ +[0-9]|d2d copy|phases \(|error|failed"
done 2>&1 | tee -a $OUT/prefetch_sweep.log
