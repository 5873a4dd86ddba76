#include "base/metrics.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

namespace kbench {

struct Metrics::Family {
  enum class Kind { kCounter, kGauge, kHistogram };

  static std::unique_ptr<Family> Make(Kind kind, const std::string& name,
                                      const std::string& help,
                                      const std::vector<std::string>& labels) {
    auto f = std::make_unique<Family>();
    f->name = name;
    f->help = help;
    f->kind = kind;
    f->labels = labels;
    return f;
  }
  struct HistogramSeries {
    std::vector<uint64_t> counts;  // Per bucket (not cumulative).
    uint64_t count = 0;            // All observations (the +Inf bucket).
    double sum = 0;
  };

  std::string name;
  std::string help;
  Kind kind = Kind::kCounter;
  std::vector<std::string> labels;
  std::vector<double> buckets;  // Histograms: upper bounds, increasing.
  SampleFn fn;                  // Callback families.
  Counter counter;              // The handle of a counter family.
  Histogram histogram;          // The handle of a histogram family.

  mutable absl::Mutex mu;
  std::map<LabelValues, double> values ABSL_GUARDED_BY(mu);
  std::map<LabelValues, HistogramSeries> series ABSL_GUARDED_BY(mu);

  bool CheckLabels(const LabelValues& given) const {
    if (given.size() == labels.size()) return true;
    spdlog::error("metric {}: {} label value(s) given for labels ({})", name,
                  given.size(), absl::StrJoin(labels, ", "));
    return false;
  }
};

namespace {

bool IsNameStart(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (colon && c == ':');
}
bool IsNameChar(char c, bool colon) {
  return IsNameStart(c, colon) || (c >= '0' && c <= '9');
}
// Metric names may hold ':'; label names may not.
bool ValidName(absl::string_view name, bool colon) {
  if (name.empty() || !IsNameStart(name[0], colon)) return false;
  for (char c : name) {
    if (!IsNameChar(c, colon)) return false;
  }
  return true;
}

// A sample value: integers without a fraction, others in the fewest digits
// that read back as the same double; NaN, +Inf and -Inf as Prometheus
// writes them.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  for (int precision = 1; precision < 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(s.c_str(), nullptr) == v) return s;
  }
  return absl::StrFormat("%.17g", v);
}

std::string EscapeLabelValue(absl::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeHelp(absl::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// "{a=\"x\",b=\"y\"}", with `le` last when given; "" without labels.
std::string LabelText(const std::vector<std::string>& names,
                      const Metrics::LabelValues& values,
                      const std::string* le = nullptr) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    parts.push_back(
        absl::StrCat(names[i], "=\"", EscapeLabelValue(values[i]), "\""));
  }
  if (le != nullptr) parts.push_back(absl::StrCat("le=\"", *le, "\""));
  if (parts.empty()) return "";
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

void AppendSample(std::string* out, const std::string& name,
                  const std::string& labels, double value) {
  absl::StrAppend(out, name, labels, " ", FormatValue(value), "\n");
}

}  // namespace

std::vector<double> Metrics::DurationBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

void Metrics::Counter::Increment(const LabelValues& labels, double delta) {
  if (!std::isfinite(delta) || delta < 0) {
    spdlog::error("metric {}: counters only go up; increment {} ignored",
                  family_->name, delta);
    return;
  }
  if (!family_->CheckLabels(labels)) return;
  absl::MutexLock lock(&family_->mu);
  family_->values[labels] += delta;
}

double Metrics::Counter::Value(const LabelValues& labels) const {
  absl::MutexLock lock(&family_->mu);
  auto it = family_->values.find(labels);
  return it == family_->values.end() ? 0 : it->second;
}

void Metrics::Histogram::Observe(const LabelValues& labels, double value) {
  if (std::isnan(value)) {
    spdlog::error("metric {}: NaN observation ignored", family_->name);
    return;
  }
  if (!family_->CheckLabels(labels)) return;
  const std::vector<double>& bounds = family_->buckets;
  absl::MutexLock lock(&family_->mu);
  Family::HistogramSeries& s = family_->series[labels];
  if (s.counts.empty()) s.counts.assign(bounds.size(), 0);
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) {
      ++s.counts[i];
      break;
    }
  }
  ++s.count;
  s.sum += value;
}

Metrics::Metrics() = default;
Metrics::~Metrics() = default;

absl::StatusOr<Metrics::Family*> Metrics::Add(std::unique_ptr<Family> f) {
  if (!ValidName(f->name, /*colon=*/true)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric name '", f->name,
                     "' is not [a-zA-Z_:][a-zA-Z0-9_:]* (e.g. kbench_jobs)"));
  }
  for (const std::string& label : f->labels) {
    if (!ValidName(label, /*colon=*/false) || label.rfind("__", 0) == 0 ||
        (f->kind == Family::Kind::kHistogram && label == "le")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric ", f->name, ": label name '", label,
          "' is not [a-zA-Z_][a-zA-Z0-9_]*, or is reserved (__*, le on "
          "histograms)"));
    }
  }
  if (f->kind == Family::Kind::kHistogram) {
    bool ok = !f->buckets.empty();
    for (size_t i = 0; ok && i < f->buckets.size(); ++i) {
      ok = std::isfinite(f->buckets[i]) &&
           (i == 0 || f->buckets[i] > f->buckets[i - 1]);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram ", f->name, ": buckets (", absl::StrJoin(f->buckets, " "),
          ") must be finite, strictly increasing and at least one (+Inf is "
          "implicit)"));
    }
  }
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<Family>& have : families_) {
    if (have->name != f->name) continue;
    if (have->kind == f->kind && have->labels == f->labels &&
        have->buckets == f->buckets && !have->fn && !f->fn) {
      return have.get();
    }
    return absl::AlreadyExistsError(
        absl::StrCat("metric ", f->name,
                     " exists with another kind, labels or buckets (or is "
                     "computed by a callback)"));
  }
  Family* added = f.get();
  added->counter.family_ = added;
  added->histogram.family_ = added;
  families_.push_back(std::move(f));
  return added;
}

absl::StatusOr<Metrics::Counter*> Metrics::AddCounter(
    const std::string& name, const std::string& help,
    const std::vector<std::string>& labels) {
  auto f = Family::Make(Family::Kind::kCounter, name, help, labels);
  absl::StatusOr<Family*> added = Add(std::move(f));
  if (!added.ok()) return added.status();
  return &(*added)->counter;
}

absl::StatusOr<Metrics::Histogram*> Metrics::AddHistogram(
    const std::string& name, const std::string& help,
    const std::vector<std::string>& labels, std::vector<double> buckets) {
  auto f = Family::Make(Family::Kind::kHistogram, name, help, labels);
  f->buckets = std::move(buckets);
  absl::StatusOr<Family*> added = Add(std::move(f));
  if (!added.ok()) return added.status();
  return &(*added)->histogram;
}

absl::Status Metrics::AddGaugeFn(const std::string& name,
                                 const std::string& help,
                                 const std::vector<std::string>& labels,
                                 SampleFn fn) {
  auto f = Family::Make(Family::Kind::kGauge, name, help, labels);
  f->fn = std::move(fn);
  return Add(std::move(f)).status();
}

absl::Status Metrics::AddCounterFn(const std::string& name,
                                   const std::string& help,
                                   const std::vector<std::string>& labels,
                                   SampleFn fn) {
  auto f = Family::Make(Family::Kind::kCounter, name, help, labels);
  f->fn = std::move(fn);
  return Add(std::move(f)).status();
}

std::string Metrics::RenderPrometheus() const {
  std::vector<const Family*> families;
  {
    absl::MutexLock lock(&mu_);
    for (const std::unique_ptr<Family>& f : families_) {
      families.push_back(f.get());
    }
  }
  std::string out;
  for (const Family* f : families) {
    const char* type = f->kind == Family::Kind::kCounter ? "counter"
                       : f->kind == Family::Kind::kGauge ? "gauge"
                                                         : "histogram";
    absl::StrAppend(&out, "# HELP ", f->name, " ", EscapeHelp(f->help), "\n");
    absl::StrAppend(&out, "# TYPE ", f->name, " ", type, "\n");
    if (f->fn) {
      // Called without locks; sorted and de-duplicated (the last wins).
      std::map<LabelValues, double> samples;
      for (Sample& s : f->fn()) {
        if (f->CheckLabels(s.labels)) samples[std::move(s.labels)] = s.value;
      }
      for (const auto& [labels, value] : samples) {
        AppendSample(&out, f->name, LabelText(f->labels, labels), value);
      }
      continue;
    }
    absl::MutexLock lock(&f->mu);
    if (f->kind != Family::Kind::kHistogram) {
      for (const auto& [labels, value] : f->values) {
        AppendSample(&out, f->name, LabelText(f->labels, labels), value);
      }
      continue;
    }
    const std::string bucket = f->name + "_bucket";
    for (const auto& [labels, s] : f->series) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f->buckets.size(); ++i) {
        cumulative += s.counts[i];
        const std::string le = FormatValue(f->buckets[i]);
        AppendSample(&out, bucket, LabelText(f->labels, labels, &le),
                     static_cast<double>(cumulative));
      }
      const std::string inf = "+Inf";
      AppendSample(&out, bucket, LabelText(f->labels, labels, &inf),
                   static_cast<double>(s.count));
      AppendSample(&out, f->name + "_sum", LabelText(f->labels, labels), s.sum);
      AppendSample(&out, f->name + "_count", LabelText(f->labels, labels),
                   static_cast<double>(s.count));
    }
  }
  return out;
}

}  // namespace kbench
