// Metrics: a small registry of Prometheus metrics, rendered by hand in the
// text exposition format 0.0.4 (what GET /metrics serves):
//  - counters and histograms (fixed buckets) that code updates, each a
//    family of series told apart by label values;
//  - gauges and counters computed at scrape time by a callback (queue
//    depth, workers connected, GPU busy seconds).
// Families render in the order they were added, series by label values.
//
//   Metrics m;
//   Metrics::Counter* c = *m.AddCounter("kbench_jobs_finished_total",
//       "Jobs finished.", {"kind", "verdict"});
//   c->Increment({"submit", "passed"});
//   std::string text = m.RenderPrometheus();
//
// Ownership: the Metrics owns its families; the Counter and Histogram
// pointers it hands out live as long as it does. Callbacks are borrowed:
// whatever they read must outlive the last RenderPrometheus call.
// Thread safety: every method is thread safe. Callbacks are called without
// any lock of the registry held (they may take their owners' locks), on the
// thread that calls RenderPrometheus.
#ifndef KBENCH_BASE_METRICS_H_
#define KBENCH_BASE_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace kbench {

class Metrics {
  struct Family;  // One metric family; defined in metrics.cc.

 public:
  // The label values of one series, in the order of the family's label
  // names.
  using LabelValues = std::vector<std::string>;

  // One series of a callback family.
  struct Sample {
    LabelValues labels;
    double value = 0;
  };
  using SampleFn = std::function<std::vector<Sample>()>;

  // The buckets of kbench_tool_duration_seconds (upper bounds, seconds).
  static std::vector<double> DurationBuckets();

  class Counter {
   public:
    // Adds `delta` to the series of `labels`. Ignored (with a logged error)
    // when `delta` is negative or not finite, or the label count is wrong.
    void Increment(const LabelValues& labels, double delta = 1);
    // The series' value; 0 for a series never incremented.
    double Value(const LabelValues& labels) const;

   private:
    friend class Metrics;
    Family* family_ = nullptr;
  };

  class Histogram {
   public:
    // Counts `value` in the series of `labels` (into the first bucket whose
    // bound is >= value; every series also has +Inf). Ignored (with a
    // logged error) when `value` is NaN or the label count is wrong.
    void Observe(const LabelValues& labels, double value);

   private:
    friend class Metrics;
    Family* family_ = nullptr;
  };

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Adding a family whose name exists returns the existing one when it has
  // the same kind and label names (and buckets), else AlreadyExists.
  // InvalidArgument for a name that is not [a-zA-Z_:][a-zA-Z0-9_:]*, a label
  // name that is not [a-zA-Z_][a-zA-Z0-9_]* (or starts with "__", or is
  // "le" on a histogram), or buckets that are empty or not strictly
  // increasing finite numbers.
  absl::StatusOr<Counter*> AddCounter(const std::string& name,
                                      const std::string& help,
                                      const std::vector<std::string>& labels);
  absl::StatusOr<Histogram*> AddHistogram(
      const std::string& name, const std::string& help,
      const std::vector<std::string>& labels, std::vector<double> buckets);
  // Families whose series `fn` computes at each scrape. Samples whose label
  // count is wrong are skipped.
  absl::Status AddGaugeFn(const std::string& name, const std::string& help,
                          const std::vector<std::string>& labels, SampleFn fn);
  absl::Status AddCounterFn(const std::string& name, const std::string& help,
                            const std::vector<std::string>& labels,
                            SampleFn fn);

  // Every family: "# HELP", "# TYPE" and one line per sample, "\n"-ended.
  std::string RenderPrometheus() const;

 private:
  absl::StatusOr<Family*> Add(std::unique_ptr<Family> wanted);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_BASE_METRICS_H_
