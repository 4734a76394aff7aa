#!/usr/bin/env bash
# Builds timing-only probe binaries of the CLI on the CPU machine, for a device call to carry.
# usage: scripts/build-probes.sh PROBE:NAME ...
#   PROBE: a patch of our sources (FILE.patch, applied with git apply), or a script (FILE.py, run
#   as `python3 FILE.py TREE`) that edits the tree in place — the way to instrument the DeepGEMM
#   baseline's fetched headers, which are not ours to carry as a diff.
#   e.g. bench/results/gemm_wgmma_kblock_trace.patch:trace bench/results/deepgemm_kblock_trace.py:dgtrace
# Each probe is applied to a detached worktree of HEAD (build/probe-tree/src) with its own copy
# of third_party/deepgemm (the other fetched headers are linked), built in
# build/probe-tree/build (Release, sm_90a, no tests, the DeepGEMM baseline on when fetched), and
# its tools/symmoe copied to build/ab/symmoe_NAME; the tree is restored before the next probe,
# rewriting only what the probe changed, so only the affected translation units rebuild. The
# main tree, its uncommitted changes and build/release are never touched (a probe built there
# once ran stale because the CLI was not relinked). Each probe's library then goes through
# scripts/check-kernel-resources.py: a probe that spills is reported, not refused — look before
# timing it. With PROBE_TESTS=1 the GPU tests of the grouped GEMM are built too
# (build/ab/test_gemm_gpu_NAME), for a probe that is a candidate change rather than a timing-only
# build: its correctness and its time come from the same call. Carry ["build/ab", ...].
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
[ $# -gt 0 ] || { echo "usage: $0 PROBE:NAME ..." >&2; exit 2; }
root=$PWD
tree=$root/build/probe-tree
wt=$tree/src
head=$(git rev-parse HEAD)
for spec in "$@"; do
  probe=${spec%%:*}
  [ "$probe" != "$spec" ] && [ -n "${spec##*:}" ] || { echo "build-probes: '$spec' is not PROBE:NAME" >&2; exit 2; }
  [ -f "$probe" ] || { echo "build-probes: no probe file '$probe'" >&2; exit 2; }
  case $probe in *.patch|*.py) ;; *) echo "build-probes: '$probe' is neither a .patch nor a .py" >&2; exit 2 ;; esac
done
if [ -d "$wt" ]; then
  git -C "$wt" checkout -q --detach "$head"
else
  mkdir -p "$tree"
  git worktree add -q --detach "$wt" "$head"
fi
mkdir -p "$wt/third_party"
for d in cutlass cuobjdump; do
  [ -d "$root/third_party/$d" ] && ln -sfn "$root/third_party/$d" "$wt/third_party/$d"
done
# The worktree's DeepGEMM headers := the fetched ones, rewriting only files that differ (a file
# restored with its old time stamp would leave a probe's object looking up to date).
sync_deepgemm() {
  [ -d "$root/third_party/deepgemm" ] || return 0
  (cd "$root/third_party/deepgemm" && find . -type f) | while read -r f; do
    mkdir -p "$(dirname "$wt/third_party/deepgemm/$f")"
    cmp -s "$root/third_party/deepgemm/$f" "$wt/third_party/deepgemm/$f" ||
      cp "$root/third_party/deepgemm/$f" "$wt/third_party/deepgemm/$f"
  done
}
restore() { git -C "$wt" checkout -q -- . && sync_deepgemm; }
[ -L "$wt/third_party/deepgemm" ] && rm "$wt/third_party/deepgemm"  # a copy, never the fetched one
restore
cfg=(-S "$wt" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a
     "-DSYMMOE_BUILD_TESTS=$([ "${PROBE_TESTS:-0}" = 1 ] && echo ON || echo OFF)")
[ -d "$wt/third_party/deepgemm/include" ] && cfg+=("-DSYMMOE_DEEPGEMM_INCLUDE=$wt/third_party/deepgemm/include")
cmake "${cfg[@]}" > "$tree/configure.log"
mkdir -p "$root/build/ab"
for spec in "$@"; do
  probe=${spec%%:*} name=${spec##*:}
  echo "build-probes: $name <- $probe on ${head:0:7}"
  case $probe in
    *.patch) git -C "$wt" apply "$root/$probe" ;;
    *.py) python3 "$root/$probe" "$wt" ;;
  esac
  targets=(symmoe_cli)
  [ "${PROBE_TESTS:-0}" = 1 ] && targets+=(test_gemm_gpu)
  cmake --build "$tree/build" -j "$(nproc)" --target "${targets[@]}" > "$tree/build_$name.log" 2>&1 ||
    { tail -30 "$tree/build_$name.log"; echo "build-probes: $name failed (log $tree/build_$name.log)" >&2; exit 1; }
  cp "$tree/build/tools/symmoe" "$root/build/ab/symmoe_$name"
  [ "${PROBE_TESTS:-0}" = 1 ] && cp "$tree/build/tests/test_gemm_gpu" "$root/build/ab/test_gemm_gpu_$name"
  if [ -x "$root/third_party/cuobjdump/cuobjdump" ]; then
    python3 scripts/check-kernel-resources.py "$tree/build/src/libsymmoe.a" 2>&1 | tail -5 ||
      echo "build-probes: $name: a kernel spills (above)"
  fi
  restore
done
ls -l "$root/build/ab"
