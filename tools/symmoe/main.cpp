// symmoe command-line tool.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/version.hpp"

namespace {

constexpr const char* kHelp =
    "symmoe %s: expert-parallel MoE on NVLink symmetric memory\n"
    "usage: symmoe <command> [options]   (symmoe <command> --help for its options)\n"
    "commands:\n"
    "  doctor             devices, P2P, handle types, NCCL, environment, multi-rank smoke test\n"
    "  bench peer-check   cost of the pre-launch peer validation, first call and cached\n"
    "  bench barrier      cross-rank barrier / grid_sync latency vs a host-synchronized step\n"
    "  bench residency    grid-barrier launch while another stream holds SMs, with and without a reserve\n"
    "  bench prefetch     expert-weight prefetch into slots vs d2d copy and cudaMemcpyAsync\n"
    "  bench grad-reduce  fp32 slot gradients summed into their owners\n"
    "  bench dispatch     EP dispatch (model presets, routings, token counts) vs a sort+gather baseline\n"
    "  bench combine      EP combine, same cases, vs a copy-back + gather-sum baseline\n"
    "  bench gemm         expert grouped GEMM (fp8 block scales, bf16) vs cuBLASLt dense and per-expert loop\n"
    "  env                the SYMMOE_* environment registry\n"
    "  version            print the version\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::printf(kHelp, symmoe::kVersion);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (command == "version" || command == "--version") {
      std::printf("symmoe %s\n", symmoe::kVersion);
      return 0;
    }
    if (command == "env") {
      std::fputs(symmoe::env::describe().c_str(), stdout);
      return 0;
    }
    if (command == "doctor") return symmoe::cli::run_doctor(rest);
    if (command == "bench" && (rest.empty() || rest[0] == "--help" || rest[0] == "-h")) {
      std::printf(kHelp, symmoe::kVersion);  // the bench commands are listed there
      return rest.empty() ? 2 : 0;
    }
    if (command == "bench") {
      const std::vector<std::string> bench_args(rest.begin() + 1, rest.end());
      if (rest[0] == "peer-check") return symmoe::cli::run_bench_peer_check(bench_args);
      if (rest[0] == "barrier") return symmoe::cli::run_bench_barrier(bench_args);
      if (rest[0] == "residency") return symmoe::cli::run_bench_residency(bench_args);
      if (rest[0] == "prefetch") return symmoe::cli::run_bench_prefetch(bench_args);
      if (rest[0] == "grad-reduce") return symmoe::cli::run_bench_grad_reduce(bench_args);
      if (rest[0] == "dispatch") return symmoe::cli::run_bench_dispatch(bench_args);
      if (rest[0] == "combine") return symmoe::cli::run_bench_combine(bench_args);
      if (rest[0] == "gemm") return symmoe::cli::run_bench_gemm(bench_args);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symmoe %s: %s\n", command.c_str(), e.what());
    return 1;
  }
  const std::string what = command == "bench" && !rest.empty() ? "bench " + rest[0] : command;
  std::fprintf(stderr, "symmoe: unknown command '%s'\n", what.c_str());
  std::fprintf(stderr, kHelp, symmoe::kVersion);
  return 2;
}
