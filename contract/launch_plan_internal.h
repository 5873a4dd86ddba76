// Helpers shared by contract/launch_plan.cc (entry points, device limits),
// contract/parsed_plan.cc (validation, resolution) and
// contract/launch_plan_parse.cc (ParseLaunchPlan). Not part of the
// public API: include contract/launch_plan.h instead.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_
#define KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench {
namespace internal {

// The launch line that error messages show as an example.
inline constexpr char kExampleLaunch[] =
    "// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)";

// Axis names, for messages ("grid y = ...").
inline constexpr char kAxes[] = "xyz";

// InvalidArgument "line <line>: <what>".
absl::Status LineError(int line, absl::string_view what);

// An args() entry `peer(NAME, RANK)`: rank RANK's copy of NAME, for a
// problem that spans GPUs (RANK an expression that may use `rank` and
// `world_size`).
struct PeerArg {
  std::string name;
  std::string rank;  // The expression as written, trimmed.
};

// nullopt when `arg` is not a peer() entry; InvalidArgument naming the
// line when it starts as one but is malformed.
absl::StatusOr<std::optional<PeerArg>> ParsePeerArg(int line,
                                                    absl::string_view arg);

// The form ParseLaunchPlan stores a peer entry in: "peer(x, rank + 1)".
std::string PeerArgText(const PeerArg& peer);

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_CONTRACT_LAUNCH_PLAN_INTERNAL_H_
