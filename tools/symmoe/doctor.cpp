// `symmoe doctor`: what this machine offers symmoe, and whether a multi-rank symmetric buffer
// works on it. Without a GPU it says so and runs the same protocol on the host heap instead.
#include <cstdio>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "doctor_smoke.hpp"
#include "report.hpp"
#include "symmoe/comm/mpi_group.hpp"
#include "symmoe/core/device_info.hpp"
#include "symmoe/core/env.hpp"
#include "symmoe/core/error.hpp"
#include "symmoe/core/nccl_loader.hpp"
#include "symmoe/device/peer_table.cuh"
#include "symmoe/runtime/device_runtime.hpp"
#include "symmoe/runtime/sm_budget.hpp"
#include "symmoe/symm/handle_type.hpp"
#include "symmoe/version.hpp"

namespace symmoe::cli {

using ::symmoe::detail::concat;

namespace {

constexpr const char* kUsage =
    "usage: symmoe doctor [--ranks N] [--processes] [--devices LIST] [--bytes SIZE]\n"
    "                     [--timeout SECONDS] [--json FILE] [--require-gpu]\n"
    "  --ranks N        ranks for the smoke test (default 4; 0 skips it; at most 72)\n"
    "  --processes      also run the ranks as forked processes (TCP group, fds over sockets)\n"
    "  --devices LIST   devices for thread ranks, round-robin (default: all visible)\n"
    "  --bytes SIZE     symmetric bytes per rank (default 16M; K/M/G suffixes)\n"
    "  --timeout S      bootstrap timeout in seconds (default 60)\n"
    "  --json FILE      also write the findings as JSON\n"
    "  --require-gpu    fail when no GPU is found (default: check on the CPU instead)\n"
    "exit status: 0 every check passed, 1 a check failed, 2 bad usage\n";

std::string mib(double bytes) {
  std::ostringstream os;
  os.precision(4);
  os << bytes / (1 << 20) << " MiB";
  return os.str();
}

void report_devices(Report& report, int count) {
  report.section("devices");
  for (int d = 0; d < count; ++d) {
    const DeviceInfo i = query_device(d);
    report.fact(concat("device ", d),
                concat(i.name, ", ", i.arch, ", ", i.num_sms, " SMs, L2 ", mib(i.l2_bytes),
                       ", smem/block ", i.smem_per_block_optin / 1024, " KiB, ",
                       mib(static_cast<double>(i.total_mem)), ", bus ", i.pci_bus_id,
                       ", vmm ", i.vmm_supported ? "yes" : "no", ", fd handles ",
                       i.posix_fd_supported ? "yes" : "no", ", fabric attr ",
                       i.fabric_supported ? "yes" : "no"));
    if (i.cc_major != 9 || i.cc_minor != 0) {
      report.line(concat("note: symmoe's kernels are built for sm_90a; device ", d, " is ", i.arch));
    }
  }
  report.section("peer access (P2P) matrix");
  const auto p2p = p2p_matrix(count);
  std::string header = "      ";
  for (int j = 0; j < count; ++j) header += concat(" ", j < 10 ? " " : "", j);
  report.line(header);
  for (int i = 0; i < count; ++i) {
    std::string row = concat("dev ", i < 10 ? " " : "", i);
    for (int j = 0; j < count; ++j) row += p2p[i * count + j] ? "  Y" : "  .";
    report.line(row);
  }
  report.section("shareable handle types (device 0, real create/export/import)");
  const symm::HandleSupport hs = symm::probe_handle_support(0);
  report.fact("fd", concat(hs.fd_ok ? "works" : "unavailable", ": ", hs.fd_detail));
  report.fact("fabric", concat(hs.fabric_ok ? "works" : "unavailable", ": ", hs.fabric_detail));
  report.fact("auto resolves to", hs.fabric_ok ? "fabric (if every rank can)" : "fd");
  report.check("a shareable handle type works", hs.fd_ok || hs.fabric_ok,
               hs.fd_ok ? "fd" : (hs.fabric_ok ? "fabric" : "neither fd nor fabric"));

  report.section("kernels and SM budget (device 0)");
  try {
    const runtime::DeviceRuntime rt(0);
    report.check("every kernel loads eagerly", true,
                 concat(rt.num_kernels_loaded(), " kernels loaded before any spin-wait protocol"));
  } catch (const Error& e) {
    report.check("every kernel loads eagerly", false, e.what());
  }
  const DeviceInfo d0 = query_device(0);
  const runtime::SmBudget budget = runtime::current_sm_budget();
  try {
    const runtime::SmPlan plan = runtime::plan_sms(d0.num_sms, d0.cc_major, budget);
    report.fact("grid-barrier launches", concat(plan.usable, " of ", plan.device_sms, " SMs (",
                                               plan.reserved, " reserved for other streams",
                                               plan.even ? ", even" : "", ")"));
  } catch (const Error& e) {
    report.check("SM budget", false, e.what());
  }
}

}  // namespace

int run_doctor(const std::vector<std::string>& argv) {
  SmokeOptions so;
  bool processes = false, require_gpu = false;
  std::string json_path;
  if (help_requested(argv)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    Args args(argv, {"processes", "require-gpu"}, {"ranks", "devices", "bytes", "timeout", "json"});
    so.ranks = static_cast<int>(args.get_int("ranks", 4, 0, device::kMaxRanks));
    so.devices = args.get_int_list("devices");
    so.bytes_per_rank = args.get_size("bytes", so.bytes_per_rank);
    so.timeout_s = static_cast<double>(args.get_int("timeout", 60, 1, 3600));
    processes = args.flag("processes");
    require_gpu = args.flag("require-gpu");
    json_path = args.get("json").value_or("");
  } catch (const Error& e) {
    std::fprintf(stderr, "symmoe doctor: %s\n%s", e.what(), kUsage);
    return 2;
  }

  std::string command = "symmoe doctor";
  for (const auto& a : argv) command += " " + a;
  Report report(command);
  std::printf("symmoe %s doctor\n", kVersion);

  // Forked ranks must start before this process touches CUDA.
  std::vector<comm::ForkedRank> forked;
  if (processes && so.ranks > 0) forked = smoke_processes_fork(so);

  report.section("build");
  const CudaStatus cuda = probe_cuda();
  report.fact("symmoe", kVersion);
  report.fact("CUDA runtime", concat(cuda.runtime_version / 1000, ".", cuda.runtime_version % 1000 / 10));
  report.fact("CUDA driver", cuda.driver_version
                                 ? concat(cuda.driver_version / 1000, ".", cuda.driver_version % 1000 / 10)
                                 : std::string("none"));
  report.fact("MPI group", comm::mpi_available() ? "built in" : "not built (no MPI found)");
  report.fact("NCCL", nccl_version_string());

  report.section("environment (SYMMOE_* registry)");
  std::string env_error;
  try {
    std::istringstream table(env::describe());
    for (std::string l; std::getline(table, l);) report.line(l);
    for (const auto& var : env::registry()) {
      switch (var.type) {
        case env::Type::kBool: env::get_bool(var.name); break;
        case env::Type::kInt: env::get_int(var.name); break;
        case env::Type::kFloat: env::get_float(var.name); break;
        default: env::get_string(var.name);
      }
    }
  } catch (const Error& e) {
    env_error = e.what();
  }
  report.check("every SYMMOE_* variable parses", env_error.empty(), env_error);

  const bool gpu = cuda.device_count > 0;
  if (gpu) {
    try {
      report_devices(report, cuda.device_count);
    } catch (const Error& e) {
      report.check("device query", false, e.what());
    }
    if (so.devices.empty()) {
      for (int d = 0; d < cuda.device_count; ++d) so.devices.push_back(d);
    }
    for (int d : so.devices) {
      if (d >= cuda.device_count) {
        std::fprintf(stderr, "symmoe doctor: --devices names device %d but only %d exist\n", d,
                     cuda.device_count);
        return 2;
      }
    }
  } else {
    report.section("devices");
    report.line(concat("No CUDA GPU found: ", cuda.reason, "."));
    report.line("GPU checks are skipped. Checked instead on the CPU: the environment registry,");
    report.line("thread-rank collectives, descriptor passing, and the symmetric-heap protocol");
    report.line("(peer table, pre-launch validation, self-identifying pattern) on host memfds.");
    if (require_gpu) report.check("a CUDA GPU is present", false, cuda.reason);
    else report.skip("GPU checks", "no CUDA GPU on this machine");
  }

  if (so.ranks > 0) {
    if (gpu) smoke_gpu_threads(report, so);
    else smoke_host_threads(report, so);
    check_null_peer_rejected(report, gpu, so);
    if (processes) report_process_smoke(report, so, forked);
  }

  report.section("verdict");
  const bool ok = report.all_ok();
  report.line(ok ? (gpu ? "PASS" : "PASS (CPU only: no GPU was found, GPU checks did not run)")
                 : "FAIL (see the checks marked FAIL above)");
  if (!json_path.empty()) {
    try {
      report.write_json(json_path);
    } catch (const Error& e) {
      std::fprintf(stderr, "symmoe doctor: %s\n", e.what());
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace symmoe::cli
