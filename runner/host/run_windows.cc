#include "runner/host/run_windows.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kbench {

std::vector<std::vector<double>> JoinRankWindowsUs(
    const std::vector<std::vector<RunWindow>>& by_rank,
    const std::vector<int>& order, int workloads, int skip_runs,
    std::string* why) {
  std::vector<std::vector<double>> spans(std::max(workloads, 0));
  if (by_rank.empty() || order.empty() || workloads <= 0) {
    *why = "no ranks, runs or workloads to join";
    return spans;
  }
  for (size_t r = 0; r < by_rank.size(); ++r) {
    if (by_rank[r].size() != order.size()) {
      *why = absl::StrCat("rank ", r, " has ", by_rank[r].size(),
                          " runs in CUPTI's records, not the ", order.size(),
                          " timed");
      return std::vector<std::vector<double>>(workloads);
    }
  }
  std::vector<int> seen(workloads, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const int w = order[i];
    if (w < 0 || w >= workloads) {
      *why = absl::StrCat("run ", i, " is of workload ", w, ", not one of ",
                          workloads);
      return std::vector<std::vector<double>>(workloads);
    }
    uint64_t start = by_rank[0][i].start_ns, end = by_rank[0][i].end_ns;
    for (const std::vector<RunWindow>& rank : by_rank) {
      start = std::min(start, rank[i].start_ns);
      end = std::max(end, rank[i].end_ns);
    }
    if (seen[w]++ >= skip_runs) spans[w].push_back((end - start) * 1e-3);
  }
  for (int w = 0; w < workloads; ++w) {
    if (spans[w].empty()) {
      *why = absl::StrCat("workload ", w, " ran no more than its ", skip_runs,
                          " warm-up runs");
      return std::vector<std::vector<double>>(workloads);
    }
  }
  why->clear();
  return spans;
}

}  // namespace kbench
