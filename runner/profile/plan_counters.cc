#include "runner/profile/plan_counters.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/profile/line_loads.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

constexpr size_t kMaxEntryChars = 120;

// Kernel launches of `profile` (skips the workspace zero-fill entry).
std::vector<v1::LaunchProfile*> KernelLaunches(v1::ProfileReport* profile) {
  std::vector<v1::LaunchProfile*> out;
  for (v1::LaunchProfile& l : *profile->mutable_launches()) {
    if (!absl::StartsWith(l.entry(), "(")) out.push_back(&l);
  }
  return out;
}

// Range i -> launch: by order when the counts match, else by name in order.
void MatchRanges(const std::vector<CounterProfiler::Range>& ranges,
                 const std::vector<v1::LaunchProfile*>& launches,
                 const v1::GpuSpec& spec) {
  if (ranges.size() == launches.size()) {
    for (size_t i = 0; i < ranges.size(); ++i) {
      DeriveCounterFigures(ranges[i].values, spec, launches[i]);
    }
    return;
  }
  spdlog::warn("{} profiled ranges for {} planned launches; matching names",
               ranges.size(), launches.size());
  size_t next = 0;
  for (v1::LaunchProfile* l : launches) {
    while (next < ranges.size() &&
           !absl::StrContains(ranges[next].name, l->entry())) {
      ++next;
    }
    if (next == ranges.size()) return;
    DeriveCounterFigures(ranges[next++].values, spec, l);
  }
}

}  // namespace

absl::StatusOr<CounterProfiler*> PlanCounters::Profiler() {
  if (!tried_) {
    tried_ = true;
    absl::StatusOr<std::unique_ptr<CounterProfiler>> p =
        CounterProfiler::Create(ctx_, options_);
    if (p.ok()) {
      profiler_ = std::move(*p);
    } else {
      create_status_ = p.status();
      spdlog::warn("hardware counters unavailable: {}",
                   std::string(create_status_.message()));
    }
  }
  if (profiler_ == nullptr) return create_status_;
  return profiler_.get();
}

void PlanCounters::WaitQuiet() {
  if (line_loads_ != nullptr) line_loads_->WaitQuiet();
}

absl::Status PlanCounters::AddLineLoads(const Candidate& candidate,
                                        v1::ProfileReport* profile) {
  const char* off = std::getenv("KBENCH_LINE_LOADS");
  if (off != nullptr && std::string(off) == "0") {
    v1::MissingFigure* m = profile->add_missing();
    m->set_figure("hot_lines.global_load_sectors_per_request");
    m->set_reason(
        "per-line loads are turned off on this worker (KBENCH_LINE_LOADS=0); "
        "each kernel's sectors per request are still reported");
    return absl::OkStatus();
  }
  if (candidate.job == nullptr) {
    v1::MissingFigure* m = profile->add_missing();
    m->set_figure("hot_lines.global_load_sectors_per_request");
    m->set_reason(candidate.no_job_reason);
    return absl::OkStatus();
  }
  if (line_loads_ == nullptr) {
    LineLoadsChild::Options options;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&options.device), "reading the device");
    line_loads_ = std::make_unique<LineLoadsChild>(options);
  }
  // One child per kernel launch; a line's loads add up over launches.
  std::map<std::pair<std::string, int>, v1::SourceLine> per_line;
  const int launches =
      static_cast<int>(candidate.bound->plan().launches.size());
  for (int i = 0; i < launches; ++i) {
    absl::StatusOr<v1::ProfileReport> loads = line_loads_->Run(
        *candidate.job, *candidate.cubin, ctx_->spec().arch(), i);
    if (!loads.ok()) {
      v1::MissingFigure* m = profile->add_missing();
      m->set_figure("hot_lines.global_load_sectors_per_request");
      m->set_reason(launches == 1
                        ? std::string(loads.status().message())
                        : absl::StrCat("launch ", i + 1, " of ", launches, ": ",
                                       loads.status().message()));
      return absl::OkStatus();
    }
    for (const v1::SourceLine& f : loads->hot_lines()) {
      v1::SourceLine& sum = per_line[{f.file(), f.line()}];
      sum.set_global_load_requests(sum.global_load_requests() +
                                   f.global_load_requests());
      sum.set_global_load_sectors(sum.global_load_sectors() +
                                  f.global_load_sectors());
    }
  }
  for (v1::SourceLine& l : *profile->mutable_hot_lines()) {
    auto it = per_line.find({l.file(), l.line()});
    if (it == per_line.end() || it->second.global_load_requests() == 0) {
      continue;
    }
    l.set_global_load_requests(it->second.global_load_requests());
    l.set_global_load_sectors(it->second.global_load_sectors());
    l.set_global_load_sectors_per_request(
        static_cast<double>(it->second.global_load_sectors()) /
        it->second.global_load_requests());
  }
  return absl::OkStatus();
}

absl::Status PlanCounters::Add(ProfilePreset preset, const Candidate& candidate,
                               ReferenceOp* reference,
                               v1::ProfileReport* profile) {
  BoundPlan* bound = candidate.bound;
  profile->set_preset(ProfilePresetName(preset));
  absl::StatusOr<CounterProfiler*> profiler = Profiler();
  if (!profiler.ok()) {
    profile->set_counters_unavailable(std::string(profiler.status().message()));
    return absl::OkStatus();
  }
  const std::vector<std::string>& metrics = PresetMetrics(preset);
  auto flush = [this]() { return flusher_->Flush(ctx_->stream()); };
  const v1::GpuSpec& spec = ctx_->spec();

  const std::function<absl::Status()> enqueue = [bound]() {
    return bound->Enqueue();
  };
  // KBENCH_COUNTER_SIZED_IMAGE=0: room for Options::max_ranges kernels
  // instead of the plan's (a comparison knob; slower set-up).
  const char* sized = std::getenv("KBENCH_COUNTER_SIZED_IMAGE");
  const bool sized_image = sized == nullptr || std::string(sized) != "0";
  absl::StatusOr<CounterProfiler::Collection> kernel = (*profiler)->Collect(
      metrics, flush, L2Flusher::kKernels, enqueue,
      sized_image ? static_cast<int>(bound->plan().launches.size()) : 0);
  if (!kernel.ok()) {
    if (IsSticky(kernel.status())) return kernel.status();
    profile->set_counters_unavailable(absl::StrCat(
        "reading the kernel's counters failed: ", kernel.status().message()));
    return absl::OkStatus();
  }
  MatchRanges(kernel->ranges, KernelLaunches(profile), spec);
  int passes = kernel->passes;
  double wall_ms = kernel->wall_ms;
  std::set<std::string> dropped = kernel->dropped;

  auto cached = reference_cache_.find(candidate.reference_key);
  if (!candidate.reference_key.empty() && cached != reference_cache_.end()) {
    for (const v1::LaunchProfile& l : cached->second.first) {
      *profile->add_reference_launches() = l;
    }
    passes = std::max(passes, cached->second.second);
  } else {
    const std::function<absl::Status()> run_reference = [reference]() {
      return reference->Eager()->Run();
    };
    absl::StatusOr<CounterProfiler::Collection> ref =
        (*profiler)->Collect(metrics, flush, L2Flusher::kKernels, run_reference,
                             sized_image ? reference->Eager()->Kernels() : 0);
    if (ref.ok()) {
      double total_us = 0;
      for (const CounterProfiler::Range& r : ref->ranges) {
        auto it = r.values.find("gpu__time_duration.sum");
        if (it != r.values.end()) total_us += it->second / 1000;
      }
      std::vector<v1::LaunchProfile> launches;
      for (size_t i = 0; i < ref->ranges.size(); ++i) {
        const CounterProfiler::Range& r = ref->ranges[i];
        v1::LaunchProfile l;
        // Auto ranges are named by their index in the pass: number them
        // from 1 among the reference's own kernels instead.
        const bool numbered =
            !r.name.empty() &&
            r.name.find_first_not_of("0123456789") == std::string::npos;
        l.set_entry(numbered ? absl::StrCat("#", i + 1)
                    : r.name.size() > kMaxEntryChars
                        ? r.name.substr(0, kMaxEntryChars) + "..."
                        : r.name);
        DeriveCounterFigures(r.values, spec, &l);
        if (total_us > 0) {
          l.set_share_pct(100 * l.counters().gpu_time_us() / total_us);
        }
        *profile->add_reference_launches() = l;
        launches.push_back(std::move(l));
      }
      passes = std::max(passes, ref->passes);
      wall_ms += ref->wall_ms;
      if (!candidate.reference_key.empty() && !launches.empty()) {
        reference_cache_[candidate.reference_key] = {std::move(launches),
                                                     ref->passes};
      }
    } else if (IsSticky(ref.status())) {
      return ref.status();
    } else {
      v1::MissingFigure* m = profile->add_missing();
      m->set_figure("reference counters");
      m->set_reason(std::string(ref.status().message()));
    }
  }
  const char* no_pc = std::getenv("KBENCH_NO_PC_SAMPLING");
  if (preset == ProfilePreset::kFull && no_pc != nullptr && *no_pc != '\0') {
    v1::MissingFigure* m = profile->add_missing();
    m->set_figure("hot_lines");
    m->set_reason(
        "PC sampling is turned off on this worker "
        "(KBENCH_NO_PC_SAMPLING)");
  } else if (preset == ProfilePreset::kFull && candidate.cubin != nullptr &&
             candidate.reload) {
    // Enough runs for a few thousand samples of a short kernel.
    const double us = std::max(1.0, profile->total().median_us());
    const int runs = static_cast<int>(std::clamp(20000.0 / us, 1.0, 50.0));
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<PcSampler::Result> lines =
        sampler_.Sample(*candidate.cubin, *candidate.source, candidate.filename,
                        runs, us, candidate.reload);
    const auto t1 = std::chrono::steady_clock::now();
    if (lines.ok()) {
      for (v1::SourceLine& l : lines->lines) {
        *profile->add_hot_lines() = std::move(l);
      }
      profile->set_pc_samples(lines->samples);
      RETURN_IF_ERROR(AddLineLoads(candidate, profile));
    }
    const auto t2 = std::chrono::steady_clock::now();
    spdlog::info("hot lines: PC sampling in {:.0f} ms, line loads in {:.0f} ms",
                 std::chrono::duration<double, std::milli>(t1 - t0).count(),
                 std::chrono::duration<double, std::milli>(t2 - t1).count());
    wall_ms += std::chrono::duration<double, std::milli>(t2 - t0).count();
    if (!lines.ok() && IsSticky(lines.status())) {
      return lines.status();
    } else if (!lines.ok()) {
      v1::MissingFigure* m = profile->add_missing();
      m->set_figure("hot_lines");
      m->set_reason(std::string(lines.status().message()));
    }
  }
  profile->set_passes(passes);
  profile->set_counters_ms(wall_ms);
  for (v1::MissingFigure& m :
       MissingFigures(preset, dropped, "refused by CUPTI on this GPU")) {
    *profile->add_missing() = std::move(m);
  }
  return absl::OkStatus();
}

}  // namespace kbench
