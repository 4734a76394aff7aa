#!/usr/bin/env bash
# Same-call comparison of environment settings of the fp8 wgmma kernel (prebuilt binaries: carry
# build/release/tools/symmoe, built with the DeepGEMM baseline for its lines): each line of
# $SETTINGS is "<tag> VAR=value ...", run in turn, ROUNDS times, as `symmoe bench gemm --tile
# wgmma`; the first run carries the same-run baselines (cuBLASLt, per-expert loop, DeepGEMM).
# Sections are "== <tag> round <r>": scripts/analysis/ab_ratio.py LOG compares every tag with
# the first, case by case and as a geometric mean.
# A setting may name its own binary with SYMMOE_AB_BIN=<path relative to build/release> (e.g.
# ../ab/symmoe_base, carried beside it): an A/B of two builds; the variable is not passed on.
# SYMMOE_AB_ARG=--flag=value adds a bench argument to that setting (e.g. --act-scales=col).
# Env: SETTINGS (default: the default tile against 128 x 256 overlapped), TILE (wgmma; auto
# for the default choice per size, e.g. the swap-AB kernels at decode sizes), MS (256,1024,4096),
# EXPERTS (8,32), ROUNDS (2), NAME (log name, default gemm_wgmma_env_ab), DG_EACH=1 (DeepGEMM in
# every run, not only the first: its spread between processes in the same log), REPS (graph
# replays per section, default 5), POWER=1 (`--power`: the clock of each section, for
# `ab_ratio.py --per-ghz`; give REPS 30 or more so that sections last long enough to sample),
# NOBASE=1 (no baselines in the first run either: the shortest call, ratios only).
# Output: $OUT/$NAME.log, $OUT/${NAME}_json.tgz (JSON per run).
export PATH=/usr/local/cuda/bin:$PATH
# Binaries resolve from build/release, which a carry of build/ab or build/dev alone does not
# create: make it, and check every setting's binary before the first run.
mkdir -p "$(dirname "$0")/../../build/release" && cd "$(dirname "$0")/../../build/release" || exit 1
name=${NAME:-gemm_wgmma_env_ab}
settings=${SETTINGS:-"default SYMMOE_GEMM_WGMMA_TILE_N=0
w256 SYMMOE_GEMM_WGMMA_TILE_N=256"}
# split_setting "VAR=value ...": bin (SYMMOE_AB_BIN, else tools/symmoe), args (each
# SYMMOE_AB_ARG=--flag=value: a bench argument) and pass (the rest).
split_setting() {
  bin=tools/symmoe pass= args=
  for kv in $1; do
    case $kv in
      SYMMOE_AB_BIN=*) bin=${kv#SYMMOE_AB_BIN=} ;;
      SYMMOE_AB_ARG=*) args="$args ${kv#SYMMOE_AB_ARG=}" ;;
      *) pass="$pass $kv" ;;
    esac
  done
}
missing=0
while read -r tag envs; do
  [ -z "$tag" ] && continue
  split_setting "$envs"
  [ -x "$bin" ] || { echo "gemm_wgmma_env_ab: setting '$tag': no binary $bin (relative to build/release: carry it)" >&2; missing=1; }
done <<<"$settings"
[ $missing = 0 ] || exit 2
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  base=$([ "${NOBASE:-0}" = 1 ] && echo --no-baseline)
  for round in $(seq "${ROUNDS:-2}"); do
    while read -r tag envs; do
      [ -z "$tag" ] && continue
      echo "== $tag round $round"
      split_setting "$envs"
      # shellcheck disable=SC2086
      env $pass timeout 300 "$bin" bench gemm --dtype fp8 --tile "${TILE:-wgmma}" --experts ${EXPERTS:-8,32} \
        --m ${MS:-256,1024,4096} --reps ${REPS:-5} $([ "${POWER:-0}" = 1 ] && echo --power) $base $args --json "$OUT/envab_${tag}_r$round.json" 2>&1 |
        grep -E "^  (gate_up|down) |DeepGEMM 128x(128|192)|power ours|rror|^symmoe "
      base=--no-baseline
      [ "${DG_EACH:-0}" = 1 ] && base="--baselines deepgemm"
    done <<<"$settings"
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee "$OUT/$name.log"
tar -C "$OUT" -czf "$OUT/${name}_json.tgz" $(cd "$OUT" && ls envab_*.json) && rm -f "$OUT"/envab_*.json
