// The symmoe tool's subcommands; each returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace symmoe::cli {

int run_doctor(const std::vector<std::string>& args);
int run_bench_peer_check(const std::vector<std::string>& args);
int run_bench_barrier(const std::vector<std::string>& args);
int run_bench_residency(const std::vector<std::string>& args);
int run_bench_prefetch(const std::vector<std::string>& args);
int run_bench_grad_reduce(const std::vector<std::string>& args);
int run_bench_dispatch(const std::vector<std::string>& args);
int run_bench_combine(const std::vector<std::string>& args);
int run_bench_gemm(const std::vector<std::string>& args);

}  // namespace symmoe::cli
