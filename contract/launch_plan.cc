#include "contract/launch_plan.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "contract/launch_plan_internal.h"
#include "contract/parsed_plan.h"

namespace kbench {
namespace internal {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

absl::StatusOr<std::optional<PeerArg>> ParsePeerArg(int line,
                                                    absl::string_view arg) {
  absl::string_view rest = absl::StripAsciiWhitespace(arg);
  if (!absl::ConsumePrefix(&rest, "peer")) return std::nullopt;
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, "(")) return std::nullopt;
  constexpr char kForm[] =
      "; write peer(NAME, RANK), e.g. peer(x, (rank + 1) % world_size)";
  if (!absl::ConsumeSuffix(&rest, ")")) {
    return LineError(line,
                     absl::StrCat("'", arg, "' does not end with ')'", kForm));
  }
  const size_t comma = rest.find(',');
  if (comma == absl::string_view::npos) {
    return LineError(line, absl::StrCat("'", arg, "' names no rank", kForm));
  }
  PeerArg peer;
  peer.name = std::string(absl::StripAsciiWhitespace(rest.substr(0, comma)));
  peer.rank = std::string(absl::StripAsciiWhitespace(rest.substr(comma + 1)));
  if (!IsIdentifier(peer.name) || peer.rank.empty()) {
    return LineError(line, absl::StrCat("'", arg, "' is malformed", kForm));
  }
  return peer;
}

std::string PeerArgText(const PeerArg& peer) {
  return absl::StrCat("peer(", peer.name, ", ", peer.rank, ")");
}

}  // namespace internal

using internal::kAxes;
using internal::LineError;

absl::Status ValidateLaunchPlan(const v1::LaunchPlan& plan,
                                const v1::Problem& problem) {
  return ParsedPlan::Create(plan, problem).status();
}

absl::Status CheckEntryPoints(const v1::LaunchPlan& plan,
                              const std::vector<std::string>& kernel_names) {
  const std::set<std::string> names(kernel_names.begin(), kernel_names.end());
  for (const v1::LaunchSpec& launch : plan.launches()) {
    if (names.count(launch.entry()) != 0) continue;
    // Itanium mangling writes the length before the name: _Z13gather_linear.
    const std::string mangled_part =
        absl::StrCat(launch.entry().size(), launch.entry());
    for (const std::string& name : kernel_names) {
      if (absl::StartsWith(name, "_Z") &&
          absl::StrContains(name, mangled_part)) {
        return LineError(
            launch.line(),
            absl::StrCat("kernel '", launch.entry(),
                         "' was compiled with the C++ mangled name '", name,
                         "'; declare it `extern \"C\" __global__ void ",
                         launch.entry(),
                         "(...)` so it can be launched by "
                         "name"));
      }
    }
    return LineError(
        launch.line(),
        absl::StrCat("@kb launch names kernel '", launch.entry(),
                     "', but the source defines no extern \"C\" __global__ "
                     "function of that name; kernels found: ",
                     kernel_names.empty() ? std::string("(none)")
                                          : absl::StrJoin(kernel_names, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConcretePlan> ResolveLaunchPlan(const v1::LaunchPlan& plan,
                                               const v1::Problem& problem,
                                               const DimValues& dims) {
  ASSIGN_OR_RETURN(const ParsedPlan parsed, ParsedPlan::Create(plan, problem));
  return parsed.Resolve(dims);
}

absl::Status CheckDeviceLimits(
    const ConcretePlan& plan, const v1::GpuSpec& spec,
    const std::map<std::string, int64_t>& static_smem) {
  const std::string gpu = spec.name().empty()
                              ? std::string("this GPU")
                              : absl::StrCat("this GPU (", spec.name(), ")");
  for (const ConcreteLaunch& launch : plan.launches) {
    const std::string where =
        absl::StrCat("line ", launch.line, " (launch ", launch.entry, "): ");
    // Threads per block first: it is the usual mistake and the clearest.
    __int128 threads = static_cast<__int128>(launch.block[0]) *
                       launch.block[1] * launch.block[2];
    if (spec.max_threads_per_block() > 0 &&
        threads > spec.max_threads_per_block()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "block(", absl::StrJoin(launch.block, ", "), ") has ",
          static_cast<int64_t>(threads), " threads; ", gpu, " allows ",
          spec.max_threads_per_block(), " per block"));
    }
    for (int i = 0; i < 3 && i < spec.max_block_dims_size(); ++i) {
      if (launch.block[i] > spec.max_block_dims(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "block ", std::string(1, kAxes[i]), " = ", launch.block[i],
            " exceeds the limit of ", spec.max_block_dims(i), " on ", gpu,
            " (block limits x, y, z: ",
            absl::StrJoin(spec.max_block_dims(), ", "), ")"));
      }
    }
    for (int i = 0; i < 3 && i < spec.max_grid_dims_size(); ++i) {
      if (launch.grid[i] > spec.max_grid_dims(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "grid ", std::string(1, kAxes[i]), " = ", launch.grid[i],
            " exceeds the limit of ", spec.max_grid_dims(i), " on ", gpu,
            " (grid limits x, y, z: ",
            absl::StrJoin(spec.max_grid_dims(), ", "),
            "); put the large extent in grid x or loop inside the kernel"));
      }
    }
    auto it = static_smem.find(launch.entry);
    const int64_t static_bytes = it == static_smem.end() ? 0 : it->second;
    const int64_t limit = spec.smem_per_block_optin_bytes() > 0
                              ? spec.smem_per_block_optin_bytes()
                              : spec.smem_per_block_bytes();
    if (limit > 0 && launch.smem_bytes + static_bytes > limit) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "needs ", launch.smem_bytes + static_bytes,
                       " bytes of shared memory per block (dynamic smem ",
                       launch.smem_bytes, " + static ", static_bytes, "); ",
                       gpu, " allows at most ", limit, " per block"));
    }
  }
  return absl::OkStatus();
}

v1::GpuSpec DefaultGpuSpec() {
  v1::GpuSpec spec;
  spec.set_name("NVIDIA H100/H200 (sm_90 defaults)");
  spec.set_arch("sm_90");
  spec.set_cc_major(9);
  spec.set_cc_minor(0);
  spec.set_sm_count(132);
  spec.set_warp_size(32);
  spec.set_max_threads_per_block(1024);
  for (int64_t d : {1024, 1024, 64}) spec.add_max_block_dims(d);
  for (int64_t d : {2147483647, 65535, 65535}) spec.add_max_grid_dims(d);
  spec.set_smem_per_block_bytes(49152);
  spec.set_smem_per_block_optin_bytes(232448);
  spec.set_reserved_smem_per_block_bytes(1024);
  spec.set_smem_per_sm_bytes(233472);
  spec.set_regs_per_sm(65536);
  spec.set_regs_per_block(65536);
  spec.set_max_threads_per_sm(2048);
  spec.set_max_blocks_per_sm(32);
  spec.set_l2_bytes(52428800);
  return spec;
}

}  // namespace kbench
