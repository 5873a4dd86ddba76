#include "report/manifest_text.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kbench {

std::string ManifestText(const v1::ReproManifest& m) {
  if (m.ByteSizeLong() == 0) return "";
  std::string out = absl::StrFormat(
      "repro: %s (%s), driver %s, CUDA %s, NVRTC %s, %s\n",
      m.gpu_name().empty() ? "?" : m.gpu_name(),
      m.gpu_uuid().empty() ? "no uuid" : m.gpu_uuid(), m.driver_version(),
      m.runtime_version(), m.nvrtc_version(), m.arch());
  absl::StrAppend(
      &out, absl::StrFormat("  clocks: max SM %d MHz, memory %d MHz",
                            m.max_sm_clock_mhz(), m.max_memory_clock_mhz()));
  if (m.measured_sm_clock_before_mhz() > 0) {
    absl::StrAppend(&out, absl::StrFormat("; measured SM %.0f -> %.0f MHz",
                                          m.measured_sm_clock_before_mhz(),
                                          m.measured_sm_clock_after_mhz()));
  }
  absl::StrAppend(&out, "\n");
  if (m.compile_options_size() > 0) {
    absl::StrAppend(
        &out, "  compile: ", absl::StrJoin(m.compile_options(), " "), "\n");
  }
  absl::StrAppend(&out,
                  absl::StrFormat("  harness: %d trials/shape", m.trials()));
  if (m.hidden_trials() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" (+%d hidden)", m.hidden_trials()));
  }
  if (m.seeds_size() > 0) {
    absl::StrAppend(&out, ", seeds ", m.seeds(0));
    if (m.seeds_size() > 1)
      absl::StrAppend(&out, " .. ", m.seeds_size(), " in all");
  }
  if (!m.stopping_criterion().empty()) {
    absl::StrAppend(&out, m.l2_flushed() ? ", cold L2" : ", hot L2",
                    ", stop: ", m.stopping_criterion());
  }
  absl::StrAppend(&out, "\n");
  const auto short_digest = [](const std::string& d) {
    return d.substr(0, 12);
  };
  absl::StrAppend(&out, "  digests: problem ",
                  short_digest(m.problem_digest()));
  const std::map<std::string, std::string> sets(m.shape_set_digests().begin(),
                                                m.shape_set_digests().end());
  for (const auto& [name, digest] : sets) {
    absl::StrAppend(&out, ", ", name, " ", short_digest(digest));
  }
  if (!m.source_digest().empty()) {
    absl::StrAppend(&out, ", source ", short_digest(m.source_digest()));
  }
  absl::StrAppend(&out, "\n");
  return out;
}

}  // namespace kbench
