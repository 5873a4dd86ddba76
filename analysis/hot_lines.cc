#include "analysis/hot_lines.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string WarpStateName(const std::string& cupti_name) {
  absl::string_view s = cupti_name;
  absl::ConsumePrefix(&s, "smsp__pcsamp_warps_issue_stalled_");
  absl::ConsumePrefix(&s, "smsp__pcsamp_");
  absl::ConsumeSuffix(&s, "_not_issued");
  return std::string(s);
}

std::vector<v1::SourceLine> RankSourceLines(const std::vector<PcSample>& pcs,
                                            const std::string& source,
                                            const std::string& filename,
                                            int max_lines, int64_t* total) {
  struct Line {
    int64_t samples = 0;
    std::map<std::string, int64_t> states;
  };
  // (file, line, entry) -> samples.
  std::map<std::tuple<std::string, int, std::string>, Line> lines;
  *total = 0;
  for (const PcSample& p : pcs) {
    // CUPTI reports each state twice: X (every sample of a warp in state
    // X) and X_not_issued (those of them in cycles that issued nothing), a
    // subset; counting both would count those samples twice.
    if (absl::EndsWith(p.state, "_not_issued")) continue;
    *total += p.samples;
    if (p.line <= 0 || p.samples <= 0) continue;
    Line& l = lines[{p.file, p.line, p.entry}];
    l.samples += p.samples;
    l.states[WarpStateName(p.state)] += p.samples;
  }
  std::vector<std::pair<int64_t, const decltype(lines)::value_type*>> order;
  for (const auto& entry : lines)
    order.emplace_back(entry.second.samples, &entry);
  std::stable_sort(
      order.begin(), order.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::vector<std::string> text = absl::StrSplit(source, '\n');
  std::vector<v1::SourceLine> out;
  for (const auto& [samples, entry] : order) {
    if (static_cast<int>(out.size()) >= max_lines) break;
    const auto& [key, line] = *entry;
    const auto& [file, number, function] = key;
    v1::SourceLine s;
    s.set_file(file);
    s.set_line(number);
    s.set_entry(function);
    s.set_samples(line.samples);
    s.set_sample_pct(*total > 0 ? 100.0 * line.samples / *total : 0);
    if ((file.empty() || Basename(file) == Basename(filename)) &&
        number <= static_cast<int>(text.size())) {
      s.set_text(std::string(absl::StripAsciiWhitespace(text[number - 1])));
    }
    std::vector<std::pair<int64_t, std::string>> states;
    for (const auto& [name, n] : line.states) states.emplace_back(n, name);
    std::sort(states.rbegin(), states.rend());
    for (size_t i = 0; i < states.size() && i < 3; ++i) {
      v1::StallReason* r = s.add_top_stalls();
      r->set_reason(states[i].second);
      r->set_share_pct(100.0 * states[i].first / line.samples);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kbench
