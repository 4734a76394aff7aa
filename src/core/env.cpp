#include "symmoe/core/env.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "symmoe/core/error.hpp"

extern char** environ;

namespace symmoe::env {
namespace {

// NOTE [env registry]: every SYMMOE_* variable the library reads is declared here and only
// here. Keep the list sorted by name; describe() and `symmoe doctor` print it.
std::vector<Var> make_registry() {
  std::vector<Var> vars = {
      {"SYMMOE_BOOTSTRAP_TIMEOUT_S", Type::kFloat, "120",
       "Seconds a bootstrap collective (all-gather, barrier, fd exchange, rendezvous) waits for "
       "every rank before failing with the names of the missing ranks.",
       {}, 0.001, 86400.0},
      {"SYMMOE_BUILD_COMMIT", Type::kString, "",
       "Commit recorded in result files (JSON) in place of the one baked in at configure time; "
       "for builds from a tree without git metadata."},
      {"SYMMOE_GEMM_SWAPAB_KBLOCKS", Type::kInt, "4",
       "fp8 grouped GEMM, swap-AB decode kernel (--tile swapab): 128-wide K blocks per pipeline "
       "stage (1, 2 or 4): each stage's copies read that many 128-byte K blocks of every weight "
       "row in one contiguous run.",
       {}, 1, 4},
      {"SYMMOE_GEMM_SWAPAB_SCHEDULE", Type::kChoice, "auto",
       "fp8 grouped GEMM, swap-AB decode kernel (--tile swapab): how SMs take work: dynamic (pairs "
       "of 64-row weight items from a device-wide counter as stages free up), static (equal "
       "contiguous ranges of items per SM), split (single items from the counter, each item's K "
       "split between the SM's two consumer warpgroups) or auto (split up to 32 rows per expert, "
       "and up to 64 where the expected items are fewer than 12 per SM; otherwise pairs, dynamic "
       "from 12 items per SM, static below).",
       {"auto", "dynamic", "static", "split"}},
      {"SYMMOE_GEMM_WGMMA_CLUSTER", Type::kInt, "1",
       "fp8 grouped GEMM, own wgmma kernel (--tile wgmma): CTAs per cluster; 2 runs pairs of "
       "row blocks that share (multicast) each weight tile.",
       {}, 1, 2},
      {"SYMMOE_GEMM_WGMMA_BF16_CLUSTER", Type::kInt, "1",
       "bf16 grouped GEMM, own wgmma kernel (--tile wgmma, and auto from 256 rows per expert): CTAs "
       "per cluster: 1, 2 = pairs of row blocks sharing (multicasting) each weight tile, or 4 = 2 x "
       "2 (also pairs of column blocks sharing each activation tile).",
       {}, 1, 4},
      {"SYMMOE_GEMM_WGMMA_EPILOGUE", Type::kChoice, "tma",
       "grouped GEMM, own wgmma kernels (--tile wgmma, fp8 and bf16): how output tiles reach memory: "
       "direct (bf16 pairs stored from registers, 4 pipeline stages) or tma (staged in shared "
       "memory and written by tensor copies while the next tile runs, 3 stages).",
       {"direct", "tma"}},
      {"SYMMOE_GEMM_WGMMA_ORDERED", Type::kBool, "0",
       "fp8 grouped GEMM, own wgmma kernel (--tile wgmma): the two consumer warpgroups take "
       "turns with their wgmma batches (the turn passes when all but the last wgmma of a batch "
       "are done) instead of issuing as they become ready."},
      {"SYMMOE_GEMM_WGMMA_OVERLAP", Type::kInt, "-1",
       "fp8 grouped GEMM, own wgmma kernel (--tile wgmma, and auto at large M): -1 = auto (2 with "
       "128 x 256 tiles, 0 with 192- and 128-wide ones); 1 or 2 = promote "
       "each wgmma batch while the next one runs (two partial-product buffers, batches of 64 "
       "columns, or 96 with 192-wide tiles; needs the tma epilogue, clusters of 1 and free "
       "issue), the wgmmas draining every 1 or 2 K blocks; 3 = as 1 with the activation "
       "fragments in registers (128 x 256 tiles; experimental), 4 = as 2 with them, 5 = as 4 "
       "with one fragment set (a later K block's first batch reads them from shared memory); 0 = promote "
       "each batch after it is done (the unrolled mainloop of 192- and 128-wide tiles; the "
       "variant clusters of 2 and ordered issue are built for).",
       {}, -1, 5},
      {"SYMMOE_GEMM_WGMMA_SCALES", Type::kChoice, "tma",
       "fp8 grouped GEMM, own wgmma kernel: how each stage's block scales arrive: tma (tensor "
       "copies issued with the operands': one box of a K block's activation scales, taken for "
       "column-major activation scales whose K-block stride is a multiple of 4 floats, K / 128 "
       "a multiple of 4 and both scale tensors 16-byte aligned; otherwise cp_async; 1.02-1.03x "
       "of cp_async on an H100) or cp_async (one 4-byte copy per scale by a producer warp, "
       "always).",
       {"tma", "cp_async"}},
      {"SYMMOE_GEMM_WGMMA_SCHEDULE", Type::kChoice, "auto",
       "Grouped GEMM, own wgmma kernels (fp8 and bf16): how persistent CTAs take their tiles: "
       "static (CTA b takes tiles b, b + CTAs, ...), dynamic (after its first tile a CTA takes "
       "the next one from a device-wide counter, so the tiles in flight stay about one wave "
       "apart in tile order; clusters of one CTA) or auto (dynamic from 64 tiles per CTA with "
       "clusters of one, else static; measured 1.11-1.21x at gate/up 32 experts x 4096 rows on an H100).",
       {"auto", "static", "dynamic"}},
      {"SYMMOE_GEMM_WGMMA_STAGES", Type::kChoice, "auto",
       "Grouped GEMM, own wgmma kernels with the tma epilogue (fp8: 128 x 256 tiles, "
       "SYMMOE_GEMM_WGMMA_OVERLAP=2; bf16: clusters of 1): pipeline stages, 3 (the output tile "
       "staged whole), 4 (the output staged and stored in 64-column rounds through a quarter "
       "of the buffer) or auto (bf16: 4 up to 512 rows per expert, 3 above; fp8: 3).",
       {"auto", "3", "4"}},
      {"SYMMOE_GEMM_WGMMA_ROW_BAND", Type::kInt, "-1",
       "Grouped GEMM, own wgmma kernels (fp8 and bf16): the order of an expert's tiles, 0 = bands "
       "of 8 column blocks walked row block by row block, N > 0 = bands of N row blocks walked "
       "column block by column block (weights read once per band of rows, activations once; "
       "with SYMMOE_GEMM_WGMMA_SCHEDULE=auto the dynamic schedule), -1 = auto (fp8: 16 from 512 "
       "rows per expert or from 32 tiles per CTA, else 0; bf16: 0).",
       {}, -1, 256},
      {"SYMMOE_GEMM_WGMMA_TILE_N", Type::kInt, "0",
       "fp8 grouped GEMM, own wgmma kernel (--tile wgmma, and auto at large M): tile width, 0 = "
       "auto (192, or 256 where SYMMOE_GEMM_WGMMA_CLUSTER=2, the direct epilogue, "
       "SYMMOE_GEMM_WGMMA_OVERLAP > 2 or SYMMOE_GEMM_WGMMA_STAGES=4 asks for it), 256 (two 128-column "
       "wgmma batches per K block) or 192 (one batch; tensor-store epilogue, clusters of 1 only), "
       "or 128 (one batch, never overlapped: SYMMOE_GEMM_WGMMA_OVERLAP does not apply; "
       "tensor-store epilogue, clusters of 1 only).",
       {}, 0, 256},
      {"SYMMOE_GEMM_WGMMA_UNROLL", Type::kBool, "1",
       "fp8 grouped GEMM, own wgmma kernel with single-batch tiles (SYMMOE_GEMM_WGMMA_TILE_N=192 "
       "or 128, SYMMOE_GEMM_WGMMA_OVERLAP=0, free issue): the K loop unrolled over the pipeline "
       "stages (compile-time stage addresses; 128 x 192 tiles start at stage 0, 128 x 128 ones "
       "where the stage ring has come to); 0 = the rolled loop."},
      {"SYMMOE_HANDLE_TYPE", Type::kChoice, "auto",
       "Shareable handle for symmetric buffers: fd (POSIX file descriptor, one host), fabric "
       "(NVLink/IMEX domain, multi-node), or auto (fabric only where every rank can create and "
       "export one, otherwise fd).",
       {"auto", "fd", "fabric"}},
      {"SYMMOE_LOG_LEVEL", Type::kChoice, "warn", "Least severe log level printed to stderr.",
       {"error", "warn", "info", "debug"}},
      {"SYMMOE_NCCL_LIBRARY", Type::kString, "",
       "Path of libnccl.so.2 to load; empty searches the dynamic loader path."},
      {"SYMMOE_NUM_SMS", Type::kInt, "0",
       "SMs a launch with a grid-wide barrier may use before the reserve is taken off; 0 means "
       "every SM of the device.",
       {}, 0, 4096},
      {"SYMMOE_PREFETCH_CHUNK_KB", Type::kInt, "64",
       "KiB of the chunks the expert prefetch deals out to its blocks (each may be cut to "
       "even the blocks' shares); with bulk copies, chunk x stages must fit 224 KiB of shared "
       "memory.",
       {}, 4, 128},
      {"SYMMOE_PREFETCH_COPY", Type::kChoice, "vector",
       "How the expert prefetch moves a chunk: bulk (TMA bulk copies through shared memory, "
       "one issuing thread per block) or vector (16-byte loads and stores by every thread).",
       {"bulk", "vector"}},
      {"SYMMOE_PREFETCH_EARLY_LAUNCH", Type::kBool, "1",
       "Launch the expert prefetch as a programmatic dependent of the kernel before it on its "
       "stream (hides launch latency between back-to-back prefetches)."},
      {"SYMMOE_PREFETCH_STAGES", Type::kInt, "3",
       "Shared-memory stages of the expert prefetch pipeline per block.", {}, 2, 16},
      {"SYMMOE_PREFETCH_STORES_IN_FLIGHT", Type::kInt, "1",
       "Bulk stores of the expert prefetch that may still read their stage while the next load "
       "is issued (loads ahead = stages - this); 1 to 3, below the stage count.",
       {}, 1, 3},
      {"SYMMOE_RESERVED_SMS", Type::kInt, "-1",
       "SMs left free for other streams by launches with grid-wide barriers; -1 takes the "
       "architecture's default (2 on SM90 and SM100+).",
       {}, -1, 4096},
      {"SYMMOE_SKIP_PEER_CHECK", Type::kBool, "0",
       "Skip the pre-launch validation that every peer's symmetric buffer is mapped and "
       "addressable from this device."},
      {"SYMMOE_WAIT_TIMEOUT_S", Type::kFloat, "30",
       "Seconds any device-side wait (cross-rank barrier, grid sync, signal) spins before the "
       "kernel reports a timeout naming the rank and peer it waited for.",
       {}, 0.001, 86400.0},
  };
  std::sort(vars.begin(), vars.end(), [](const Var& a, const Var& b) { return a.name < b.name; });
  return vars;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

void require_type(const Var& var, std::initializer_list<Type> types) {
  for (Type t : types) {
    if (var.type == t) return;
  }
  SYMMOE_FAIL(var.name, " is registered as ", type_name(var.type),
              " and cannot be read with this accessor");
}

std::string value_or_default(const Var& var) {
  auto value = raw(var.name);
  return value ? *value : var.default_value;
}

}  // namespace

const char* type_name(Type type) {
  switch (type) {
    case Type::kBool: return "bool";
    case Type::kInt: return "int";
    case Type::kFloat: return "float";
    case Type::kString: return "string";
    case Type::kChoice: return "choice";
  }
  return "?";
}

const std::vector<Var>& registry() {
  static const std::vector<Var> vars = make_registry();
  return vars;
}

const Var& lookup(std::string_view name) {
  for (const Var& var : registry()) {
    if (var.name == name) return var;
  }
  SYMMOE_FAIL("environment variable ", name,
              " is not in the SYMMOE_* registry; every variable must be declared in "
              "src/core/env.cpp");
}

std::optional<std::string> raw(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool parse_bool(const Var& var, const std::string& value) {
  const std::string v = lower(trim(value));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  SYMMOE_FAIL(var.name, "='", value,
              "' is not a valid bool (expected one of 1/0, true/false, yes/no, on/off)");
}

int64_t parse_int(const Var& var, const std::string& value) {
  const std::string v = trim(value);
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE) {
    SYMMOE_FAIL(var.name, "='", value, "' is not a valid integer");
  }
  if (static_cast<double>(parsed) < var.min_value || static_cast<double>(parsed) > var.max_value) {
    SYMMOE_FAIL(var.name, "=", parsed, " is out of range: it must lie in [", var.min_value, ", ",
                var.max_value, "]");
  }
  return parsed;
}

double parse_float(const Var& var, const std::string& value) {
  const std::string v = trim(value);
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !std::isfinite(parsed)) {
    SYMMOE_FAIL(var.name, "='", value, "' is not a valid finite number");
  }
  if (parsed < var.min_value || parsed > var.max_value) {
    SYMMOE_FAIL(var.name, "=", parsed, " is out of range: it must lie in [", var.min_value, ", ",
                var.max_value, "]");
  }
  return parsed;
}

std::string parse_choice(const Var& var, const std::string& value) {
  const std::string v = lower(trim(value));
  for (const auto& choice : var.choices) {
    if (choice == v) return choice;
  }
  std::string allowed;
  for (const auto& choice : var.choices) allowed += (allowed.empty() ? "" : ", ") + choice;
  SYMMOE_FAIL(var.name, "='", value, "' is not one of: ", allowed);
}

bool get_bool(std::string_view name) {
  const Var& var = lookup(name);
  require_type(var, {Type::kBool});
  return parse_bool(var, value_or_default(var));
}

int64_t get_int(std::string_view name) {
  const Var& var = lookup(name);
  require_type(var, {Type::kInt});
  return parse_int(var, value_or_default(var));
}

double get_float(std::string_view name) {
  const Var& var = lookup(name);
  require_type(var, {Type::kFloat});
  return parse_float(var, value_or_default(var));
}

std::string get_string(std::string_view name) {
  const Var& var = lookup(name);
  require_type(var, {Type::kString, Type::kChoice});
  const std::string value = value_or_default(var);
  return var.type == Type::kChoice ? parse_choice(var, value) : value;
}

std::vector<std::string> unknown_in_environment() {
  std::vector<std::string> unknown;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view kv(*entry);
    if (kv.rfind("SYMMOE_", 0) != 0) continue;
    std::string_view name = kv.substr(0, kv.find('='));
    const bool known = std::any_of(registry().begin(), registry().end(),
                                   [&](const Var& v) { return v.name == name; });
    if (!known) unknown.emplace_back(name);
  }
  std::sort(unknown.begin(), unknown.end());
  return unknown;
}

std::string describe() {
  std::ostringstream os;
  os << std::left << std::setw(30) << "variable" << std::setw(8) << "type" << std::setw(10)
     << "default" << std::setw(12) << "value" << "description\n";
  for (const Var& var : registry()) {
    std::string type = type_name(var.type);
    if (var.type == Type::kChoice) {
      type = "";
      for (const auto& c : var.choices) type += (type.empty() ? "" : "|") + c;
    }
    auto value = raw(var.name);
    os << std::setw(30) << var.name << std::setw(8)
       << (var.type == Type::kChoice ? "choice" : type_name(var.type)) << std::setw(10)
       << (var.default_value.empty() ? "\"\"" : var.default_value) << std::setw(12)
       << (value ? *value : "-") << var.description;
    if (var.type == Type::kChoice) os << " [" << type << "]";
    os << "\n";
  }
  for (const auto& name : unknown_in_environment()) {
    os << "warning: " << name << " is set but is not a symmoe variable (typo?)\n";
  }
  return os.str();
}

}  // namespace symmoe::env
