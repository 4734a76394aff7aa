#!/usr/bin/env bash
# The staggered-warpgroups candidates (NOTE [staggered consumer warpgroups] in their patches) in
# one device call (about 7 minutes; PARTS selects, run in its order; AB_ROUNDS: rounds of the A/B,
# 2; AB_REPS: replays per section, 30; AB_NOBASE=1: no baselines at all). CAND names the candidates whose GPU tests run, one after the other into one log (default
# stagrounds); ABS the probes timed
# against HEAD (default "stagtiles stagrounds"); TRACES the traced builds (default
# "stagtilestrace stagroundstrace"; add trace and dgtrace where the carried tree has room).
# The probes: stagtiles (gemm_wgmma_stagger_tiles.patch) keeps warpgroup 1 at least 400 cycles
# behind warpgroup 0 at every tile start, stagrounds (gemm_wgmma_stagger_rounds.patch) at every
# round of kStages K blocks. The first run, at e7236c7, was CAND=stagger ABS="stagger stagger700"
# TRACES="trace stagtrace" (gemm_wgmma_stagger.patch, once per kernel, and its 700-cycle copy).
# stagenv (gemm_wgmma_stagger_env.patch) is stagrounds with the cycles from
# SYMMOE_GEMM_WGMMA_STAGGER (default 400, 0 = off): one binary for a sweep, e.g.
#   b=SYMMOE_AB_BIN=../ab/symmoe_stagenv v=SYMMOE_GEMM_WGMMA_STAGGER
#   CAND=stagenv AB_SETTINGS="base"$'\n'"off $b $v=0"$'\n'"s400 $b"$'\n'"s700 $b $v=700" \
#     TRACES=stagroundstrace scripts/device/gemm_stagger_session.sh
#   (AB_SETTINGS, when set, is the A/B's SETTINGS as gemm_wgmma_env_ab.sh reads them).
# o128 (gemm_wgmma_overlap128.patch, NOTE [overlapped 128 x 128]) is the 128 x 128 tile with its
# one batch per K block overlapped across K blocks, selected by SYMMOE_GEMM_WGMMA_TILE_N=128 with
# SYMMOE_GEMM_WGMMA_OVERLAP=2|4; its GPU tests add two wgmma variants (29, 30). Both families:
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_overlap128.patch:o128
#   b=SYMMOE_AB_BIN=../ab/symmoe_stagenv o=SYMMOE_AB_BIN=../ab/symmoe_o128
#   t=SYMMOE_GEMM_WGMMA_TILE_N=128 w=SYMMOE_GEMM_WGMMA_OVERLAP
#   CAND="stagenv o128" TRACES=stagroundstrace AB_SETTINGS="base"$'\n'"s400 $b"$'\n'"w128 $t"$'\n'\
#     "o2 $o $t $w=2"$'\n'"o4 $o $t $w=4" scripts/device/gemm_stagger_session.sh
# The tile-start candidates: nxt (gemm_wgmma_next_unit_late.patch, NOTE [next unit after the
# first copies]) and nxtpf (gemm_wgmma_next_unit_late_l2.patch: nxt, and the next tile's K block 0
# asked into L2 as a tile's last round is issued), with the unserialized K-block trace of HEAD
# (trace2) and of nxt (nxttrace); nxtpf's GPU tests cover nxt's change too (the carried
# binaries must stay under 64 MiB: leave test_gemm_gpu_nxt behind):
#   scripts/build-probes.sh bench/results/gemm_wgmma_next_unit_late.patch:nxt \
#     bench/results/gemm_wgmma_kblock_trace_unserialized.patch:trace2 \
#     bench/results/gemm_wgmma_next_unit_late_trace.patch:nxttrace
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_next_unit_late_l2.patch:nxtpf
#   n=SYMMOE_AB_BIN=../ab/symmoe_nxt
#   CAND=nxtpf TRACES="trace2 nxttrace" AB_SETTINGS="base"$'\n'"nxt $n"$'\n'"nxtpf SYMMOE_AB_BIN=../ab/symmoe_nxtpf"$'\n'\
#     "nxt_tma $n SYMMOE_GEMM_WGMMA_SCALES=tma" PARTS="tests trace ab" scripts/device/gemm_stagger_session.sh
# NOTE [tiles located ahead], as measured against 9bb29c6 (ahead2, its trace ahead2trace):
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_tiles_ahead.patch:ahead2
#   scripts/build-probes.sh bench/results/gemm_wgmma_tiles_ahead_trace.patch:ahead2trace
#   CAND=ahead2 TRACES="trace2 ahead2trace" AB_ROUNDS=3 \
#     AB_SETTINGS="base"$'\n'"ahead2 SYMMOE_AB_BIN=../ab/symmoe_ahead2" scripts/device/gemm_stagger_session.sh
# Measured 2026-12-07 on an H100 (bench/RESULTS.md "The stage ring carried across tiles"): ring4
# 1.031-1.040x, landed in 91257db (the ring changes without the five-stage shape); rs5 0.902x,
# not landed. The probe patches below apply to 1a53a0a, not to later trees, except the trace
# gemm_wgmma_kblock_trace_unserialized.patch (trace2), rebased on the landed tree.
# Five 128 x 192 stages with the stage ring continued across tiles (gemm_wgmma_ring_s5.patch:
# NOTE [five 128 x 192 stages] and the continuous NOTE [unrolled stage ring]; its GPU tests add
# wgmma variants 29-31). The first s5 patch (gemm_wgmma_192_s5.patch, never run) restarted every
# tile at stage 0: with 56 or 16 K blocks over 5 stages each tile's first copies would have
# waited for the previous tile's last K block. ring4 is the same binary at 4 stages (the
# default shape, still starting every tile at stage 0, but compiled differently: 45 R2UR
# against 125, 16976 instructions against 17096 — time it too):
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_ring_s5.patch:rs5
#   r=SYMMOE_AB_BIN=../ab/symmoe_rs5 s=SYMMOE_GEMM_WGMMA_STAGES=5 t=SYMMOE_GEMM_WGMMA_TILE_N=192
#   CAND=rs5 AB_ROUNDS=2 AB_SETTINGS="base"$'\n'"ring4 $r"$'\n'"rs5 $r $s $t" PARTS="tests ab" \
#     scripts/device/gemm_stagger_session.sh
#   Its trace beside HEAD's (built and SASS-checked: unserialized, 21-32 spill stores outside
#   the K-block bodies, as the trace on HEAD):
#   scripts/build-probes.sh bench/results/gemm_wgmma_ring_s5_trace.patch:rs5trace \
#     bench/results/gemm_wgmma_kblock_trace_unserialized.patch:trace2
#   and add TRACES="trace2 rs5trace" TRACE_ENV_rs5trace="$s $t" PARTS="tests ab trace"
#   (TRACE_ENV_<build>: the settings that traced build runs with).
#   When little device time is left (a call of ~4 minutes): the unrolled shapes' wgmma variants
#   only, no baselines, 10 replays per section:
#   SYMMOE_TEST_WGMMA_VARIANTS=7,17,21,29,30,31 AB_NOBASE=1 AB_REPS=10 CAND=rs5 AB_ROUNDS=2 \
#     AB_SETTINGS="base"$'\n'"rs5 $r $s $t" PARTS="tests ab" scripts/device/gemm_stagger_session.sh
# 2026-12-07, later (H100, bench/RESULTS.md "Direct stores with a fifth stage"): direct192
# (gemm_wgmma_direct192.patch, 0.881x / 0.791x, not landed) and onek (gemm_wgmma_one_kloop.patch,
# 1.002x, landed), each against the committed binary carried as build/dev/tools/symmoe:
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_one_kloop.patch:onek
#   SYMMOE_TEST_WGMMA_VARIANTS=7,17,19,20,21,27 CAND=onek AB_NOBASE=1 AB_ROUNDS=2 \
#     AB_SETTINGS="base SYMMOE_AB_BIN=../dev/tools/symmoe"$'\n'"onek SYMMOE_AB_BIN=../ab/symmoe_onek" \
#     PARTS="tests ab" scripts/device/gemm_stagger_session.sh
#   carrying ["build/ab", "build/dev", "build/release/tools/symmoe"]: the A/B runs from
#   build/release, which must exist on the device even when every setting names its binary.
#   tests  build/ab/test_gemm_gpu_<cand> for each cand in CAND, filtered below
#          (the wgmma ones, every dtype and tile, integer inputs, named errors): $OUT/test_gemm_gpu.log
#   trace  K-block clock traces at gate/up 8 x 4096 and down 8 x 4096 of each build in TRACES
#          (trace: HEAD's default kernel; <cand>trace: the candidate; dgtrace: DeepGEMM's 128 x 192
#          s4), one after the other: summaries in $OUT/gemm_wgmma_stagger_trace.log, raw traces in
#          $OUT/gemm_wgmma_stagger_traces.tgz
#   ab     HEAD against each probe in ABS at 8 / 32 experts x 1024 / 4096 rows, 2 rounds of 30
#          replays with --power (HEAD's first run carries the baselines, DeepGEMM's included):
#          $OUT/gemm_wgmma_stagger_ab.log, ratios by scripts/analysis/ab_ratio.py
#   default  (PARTS="tests trace ab default"; on an H200 only) HEAD's `symmoe bench gemm --reps 10
#          --power $DEFAULT_ARGS` over every default size: $OUT/gemm_default_h200.{log,json}
# Build on the CPU machine first (a worktree of HEAD, nothing else touched):
#   cmake --build build/release
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_stagger_rounds.patch:stagrounds
#   scripts/build-probes.sh bench/results/gemm_wgmma_stagger_tiles.patch:stagtiles \
#     bench/results/gemm_wgmma_stagger_tiles_trace.patch:stagtilestrace \
#     bench/results/gemm_wgmma_stagger_rounds_trace.patch:stagroundstrace
#   (optional, room permitting: bench/results/gemm_wgmma_kblock_trace.patch:trace
#    bench/results/deepgemm_kblock_trace.py:dgtrace)
# strip --strip-unneeded build/ab/* (the carried tree must stay under 64 MiB), then carry
# ["build/release/tools/symmoe", "build/ab"] and run
#   SYMMOE_BUILD_COMMIT=<HEAD> scripts/device/gemm_stagger_session.sh
# At most 8 files come back from a call: this writes seven.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
parts=${PARTS:-tests trace ab}
cand=${CAND:-stagrounds}
abs=${ABS:-stagtiles stagrounds}
traces=${TRACES:-stagtilestrace stagroundstrace}
status=0
echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
part_tests() {
  for c in $cand; do
    echo "== test_gemm_gpu_$c" >> "$OUT/test_gemm_gpu.log"
    timeout 200 "$root/build/ab/test_gemm_gpu_$c" --gtest_filter='*Wgmma*:*BadCalls*:*SmBudget*:*EveryDtype*:*IntegerInputs*' \
      >> "$OUT/test_gemm_gpu.log" 2>&1 || status=1
  done
  grep -E "^== |^\[  (PASSED|FAILED) |Failure" "$OUT/test_gemm_gpu.log" | head -30
}
part_trace() {
  work=$(mktemp -d)
  L="$OUT/gemm_wgmma_stagger_trace.log"
  cd "$root/build/release" || exit 1
  for c in "gate_up 8 4096 56" "down 8 4096 16"; do
    read -r op e m kpt <<<"$c"
    for b in $traces; do
      # dgtrace may stay behind when the carried binaries would pass the call's 64 MiB
      [ -x "../ab/symmoe_$b" ] || continue
      extra=--no-baseline
      [ "$b" = dgtrace ] && extra="--baselines deepgemm"
      # TRACE_ENV_<build>: settings that build's run takes (e.g. a probe's selecting variable)
      benv=TRACE_ENV_$b
      # shellcheck disable=SC2086
      env ${!benv:-} "$root/scripts/device/gemm_trace_one.sh" "../ab/symmoe_$b" "$b" "$op" "$e" "$m" "$kpt" "$work" $extra >> "$L" ||
        status=1
    done
  done
  cat "$L"
  tar -C "$work" -czf "$OUT/gemm_wgmma_stagger_traces.tgz" . && rm -rf "$work"
}
part_ab() {
  settings="base"
  for a in $abs; do settings="$settings
$a SYMMOE_AB_BIN=../ab/symmoe_$a"; done
  [ -n "${AB_SETTINGS:-}" ] && settings=$AB_SETTINGS
  NAME=gemm_wgmma_stagger_ab SETTINGS=$settings MS=1024,4096 ROUNDS=${AB_ROUNDS:-2} REPS=${AB_REPS:-30} POWER=1 \
    NOBASE=${AB_NOBASE:-0} \
    timeout 360 "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_wgmma_stagger_ab.log" | tail -12
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_wgmma_stagger_ab.log" --per-ghz | tail -1
  grep -E "DeepGEMM 128x192" "$OUT/gemm_wgmma_stagger_ab.log" | head -8
}
# default: on an H200 only, every default size with the issue's baselines (the README's table):
# $OUT/gemm_default_h200.log and .json
part_default() {
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || return 0
  # shellcheck disable=SC2086
  timeout 240 "$root/build/release/tools/symmoe" bench gemm --reps 10 --power ${DEFAULT_ARGS:-} --json "$OUT/gemm_default_h200.json" \
    > "$OUT/gemm_default_h200.log" 2>&1 || status=1
  grep -E "^  (gate_up|down) " "$OUT/gemm_default_h200.log" | head -50
}
for part in $parts; do
  case $part in tests | trace | ab | default) "part_$part" ;; *) echo "unknown part $part" >&2; status=1 ;; esac
done
exit $status
