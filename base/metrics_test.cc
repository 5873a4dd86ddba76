// Metrics: the exact Prometheus text (format 0.0.4) of counters, gauges,
// escaped labels and histograms; family registration rules; and a
// parse-back of every sample line.
#include "base/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kbench {
namespace {

TEST(MetricsTest, EmptyRegistryRendersNothing) {
  Metrics m;
  EXPECT_EQ(m.RenderPrometheus(), "");
}

TEST(MetricsTest, CounterWithoutLabels) {
  Metrics m;
  auto c = m.AddCounter("kbench_things_total", "Things seen.", {});
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Increment({});
  (*c)->Increment({}, 2.5);
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP kbench_things_total Things seen.\n"
            "# TYPE kbench_things_total counter\n"
            "kbench_things_total 3.5\n");
  EXPECT_EQ((*c)->Value({}), 3.5);
}

TEST(MetricsTest, CounterSeriesAreSortedByLabelValues) {
  Metrics m;
  auto c = m.AddCounter("jobs_total", "Jobs.", {"kind", "verdict"});
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Increment({"submit", "passed"});
  (*c)->Increment({"compile", "passed"}, 2);
  (*c)->Increment({"submit", "failed"});
  (*c)->Increment({"submit", "passed"});
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP jobs_total Jobs.\n"
            "# TYPE jobs_total counter\n"
            "jobs_total{kind=\"compile\",verdict=\"passed\"} 2\n"
            "jobs_total{kind=\"submit\",verdict=\"failed\"} 1\n"
            "jobs_total{kind=\"submit\",verdict=\"passed\"} 2\n");
  EXPECT_EQ((*c)->Value({"submit", "passed"}), 2);
  EXPECT_EQ((*c)->Value({"profile", "passed"}), 0);
}

TEST(MetricsTest, CounterIgnoresNegativeIncrementsAndWrongLabelCounts) {
  Metrics m;
  auto c = m.AddCounter("c_total", "C.", {"a"});
  ASSERT_TRUE(c.ok());
  (*c)->Increment({"x"}, 1);
  (*c)->Increment({"x"}, -5);
  (*c)->Increment({"x"}, NAN);
  (*c)->Increment({}, 1);
  (*c)->Increment({"x", "y"}, 1);
  EXPECT_EQ((*c)->Value({"x"}), 1);
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP c_total C.\n# TYPE c_total counter\nc_total{a=\"x\"} 1\n");
}

TEST(MetricsTest, LabelValuesAndHelpAreEscaped) {
  Metrics m;
  auto c =
      m.AddCounter("esc_total", "Back\\slash and\nnewline \"kept\".", {"v"});
  ASSERT_TRUE(c.ok());
  (*c)->Increment({"a\\b\"c\nd"});
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP esc_total Back\\\\slash and\\nnewline \"kept\".\n"
            "# TYPE esc_total counter\n"
            "esc_total{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsTest, GaugeAndCounterCallbacksAreComputedAtEachScrape) {
  Metrics m;
  int depth = 3;
  ASSERT_TRUE(
      m.AddGaugeFn("queue_depth", "Queue.", {}, [&depth] {
         return std::vector<Metrics::Sample>{{{}, static_cast<double>(depth)}};
       }).ok());
  ASSERT_TRUE(m.AddCounterFn("busy_seconds_total", "Busy.", {"worker"}, [] {
                 // Unsorted, with a wrong label count (skipped).
                 return std::vector<Metrics::Sample>{
                     {{"w2"}, 0.25}, {{"w1"}, 1e-9}, {{}, 7}};
               }).ok());
  const std::string expected_tail =
      "# HELP busy_seconds_total Busy.\n"
      "# TYPE busy_seconds_total counter\n"
      "busy_seconds_total{worker=\"w1\"} 1e-09\n"
      "busy_seconds_total{worker=\"w2\"} 0.25\n";
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP queue_depth Queue.\n# TYPE queue_depth gauge\n"
            "queue_depth 3\n" +
                expected_tail);
  depth = 0;
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP queue_depth Queue.\n# TYPE queue_depth gauge\n"
            "queue_depth 0\n" +
                expected_tail);
}

TEST(MetricsTest, SpecialValuesAndShortestDecimals) {
  Metrics m;
  ASSERT_TRUE(m.AddGaugeFn("g", "G.", {"k"}, [] {
                 return std::vector<Metrics::Sample>{
                     {{"a"}, 0.1},      {{"b"}, 1234567},   {{"c"}, -2},
                     {{"d"}, INFINITY}, {{"e"}, -INFINITY}, {{"f"}, NAN},
                     {{"g"}, -0.0},     {{"h"}, 1.0 / 3}};
               }).ok());
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP g G.\n# TYPE g gauge\n"
            "g{k=\"a\"} 0.1\n"
            "g{k=\"b\"} 1234567\n"
            "g{k=\"c\"} -2\n"
            "g{k=\"d\"} +Inf\n"
            "g{k=\"e\"} -Inf\n"
            "g{k=\"f\"} NaN\n"
            "g{k=\"g\"} 0\n"
            "g{k=\"h\"} 0.3333333333333333\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Metrics m;
  auto h =
      m.AddHistogram("tool_seconds", "Tool time.", {"tool"}, {0.25, 1, 2.5});
  ASSERT_TRUE(h.ok()) << h.status();
  (*h)->Observe({"submit_kernel"}, 0.25);  // On the bound: le 0.25.
  (*h)->Observe({"submit_kernel"}, 0.5);
  (*h)->Observe({"submit_kernel"}, 0.5);
  (*h)->Observe({"submit_kernel"}, 100);  // Only +Inf.
  (*h)->Observe({"compile_kernel"}, 2);
  (*h)->Observe({"compile_kernel"}, NAN);  // Ignored.
  (*h)->Observe({}, 1);                    // Wrong label count: ignored.
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP tool_seconds Tool time.\n"
            "# TYPE tool_seconds histogram\n"
            "tool_seconds_bucket{tool=\"compile_kernel\",le=\"0.25\"} 0\n"
            "tool_seconds_bucket{tool=\"compile_kernel\",le=\"1\"} 0\n"
            "tool_seconds_bucket{tool=\"compile_kernel\",le=\"2.5\"} 1\n"
            "tool_seconds_bucket{tool=\"compile_kernel\",le=\"+Inf\"} 1\n"
            "tool_seconds_sum{tool=\"compile_kernel\"} 2\n"
            "tool_seconds_count{tool=\"compile_kernel\"} 1\n"
            "tool_seconds_bucket{tool=\"submit_kernel\",le=\"0.25\"} 1\n"
            "tool_seconds_bucket{tool=\"submit_kernel\",le=\"1\"} 3\n"
            "tool_seconds_bucket{tool=\"submit_kernel\",le=\"2.5\"} 3\n"
            "tool_seconds_bucket{tool=\"submit_kernel\",le=\"+Inf\"} 4\n"
            "tool_seconds_sum{tool=\"submit_kernel\"} 101.25\n"
            "tool_seconds_count{tool=\"submit_kernel\"} 4\n");
}

TEST(MetricsTest, HistogramWithoutLabelsAndTheDurationBuckets) {
  Metrics m;
  auto h = m.AddHistogram("d_seconds", "D.", {}, Metrics::DurationBuckets());
  ASSERT_TRUE(h.ok()) << h.status();
  (*h)->Observe({}, 0.3);
  const std::string text = m.RenderPrometheus();
  EXPECT_EQ(text,
            "# HELP d_seconds D.\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{le=\"0.005\"} 0\n"
            "d_seconds_bucket{le=\"0.01\"} 0\n"
            "d_seconds_bucket{le=\"0.025\"} 0\n"
            "d_seconds_bucket{le=\"0.05\"} 0\n"
            "d_seconds_bucket{le=\"0.1\"} 0\n"
            "d_seconds_bucket{le=\"0.25\"} 0\n"
            "d_seconds_bucket{le=\"0.5\"} 1\n"
            "d_seconds_bucket{le=\"1\"} 1\n"
            "d_seconds_bucket{le=\"2.5\"} 1\n"
            "d_seconds_bucket{le=\"5\"} 1\n"
            "d_seconds_bucket{le=\"10\"} 1\n"
            "d_seconds_bucket{le=\"30\"} 1\n"
            "d_seconds_bucket{le=\"60\"} 1\n"
            "d_seconds_bucket{le=\"+Inf\"} 1\n"
            "d_seconds_sum 0.3\n"
            "d_seconds_count 1\n");
}

TEST(MetricsTest, FamiliesRenderInOrderAddedAndEmptyOnesHaveHeadersOnly) {
  Metrics m;
  ASSERT_TRUE(m.AddCounter("b_total", "B.", {"x"}).ok());
  ASSERT_TRUE(m.AddHistogram("a_seconds", "A.", {"x"}, {1}).ok());
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP b_total B.\n# TYPE b_total counter\n"
            "# HELP a_seconds A.\n# TYPE a_seconds histogram\n");
}

TEST(MetricsTest, AddingTheSameFamilyAgainReturnsIt) {
  Metrics m;
  auto a = m.AddCounter("x_total", "X.", {"k"});
  auto b = m.AddCounter("x_total", "X again.", {"k"});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  auto h1 = m.AddHistogram("h", "H.", {}, {1, 2});
  auto h2 = m.AddHistogram("h", "H.", {}, {1, 2});
  ASSERT_TRUE(h1.ok());
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(*h1, *h2);
}

TEST(MetricsTest, ConflictingFamiliesAreRefused) {
  Metrics m;
  ASSERT_TRUE(m.AddCounter("x_total", "X.", {"k"}).ok());
  auto other_labels = m.AddCounter("x_total", "X.", {"j"});
  EXPECT_EQ(other_labels.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(other_labels.status().message().find("x_total"), std::string::npos);
  auto other_kind = m.AddHistogram("x_total", "X.", {"k"}, {1});
  EXPECT_EQ(other_kind.status().code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(m.AddHistogram("h", "H.", {}, {1, 2}).ok());
  EXPECT_EQ(m.AddHistogram("h", "H.", {}, {1, 3}).status().code(),
            absl::StatusCode::kAlreadyExists);
  auto fn = [] { return std::vector<Metrics::Sample>{}; };
  ASSERT_TRUE(m.AddGaugeFn("g", "G.", {}, fn).ok());
  EXPECT_EQ(m.AddGaugeFn("g", "G.", {}, fn).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(MetricsTest, BadNamesAndBucketsAreRefused) {
  Metrics m;
  auto bad_name = m.AddCounter("9lives", "X.", {});
  EXPECT_EQ(bad_name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_name.status().message().find("'9lives'"), std::string::npos)
      << bad_name.status();
  EXPECT_EQ(m.AddCounter("a-b", "X.", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(m.AddCounter("ns:a_b", "Colons are allowed.", {}).ok());
  EXPECT_EQ(m.AddCounter("x", "X.", {"a:b"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddCounter("y", "X.", {"__reserved"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddHistogram("h1", "H.", {"le"}, {1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddHistogram("h2", "H.", {}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddHistogram("h3", "H.", {}, {1, 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddHistogram("h4", "H.", {}, {1, INFINITY}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- Parse-back: every sample line is name{labels} value.

struct ParsedSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses one sample line of the text format; false when malformed.
bool ParseSampleLine(absl::string_view line, ParsedSample* out) {
  size_t i = 0;
  auto name_char = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == ':' || (!first && c >= '0' && c <= '9');
  };
  while (i < line.size() && name_char(line[i], i == 0)) ++i;
  if (i == 0) return false;
  out->name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const size_t start = i;
      while (i < line.size() && name_char(line[i], i == start) &&
             line[i] != ':') {
        ++i;
      }
      if (i == start || i + 1 >= line.size() || line[i] != '=' ||
          line[i + 1] != '"') {
        return false;
      }
      const std::string label(line.substr(start, i - start));
      i += 2;
      std::string value;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\') {
          if (++i >= line.size()) return false;
          if (line[i] == 'n') {
            value += '\n';
          } else if (line[i] == '\\' || line[i] == '"') {
            value += line[i];
          } else {
            return false;
          }
        } else if (line[i] == '\n') {
          return false;
        } else {
          value += line[i];
        }
        ++i;
      }
      if (i >= line.size()) return false;
      ++i;  // Closing quote.
      if (out->labels.count(label) > 0) return false;
      out->labels[label] = value;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return false;
    ++i;  // '}'
  }
  if (i >= line.size() || line[i] != ' ') return false;
  const std::string value(line.substr(i + 1));
  if (value == "+Inf") {
    out->value = INFINITY;
  } else if (value == "-Inf") {
    out->value = -INFINITY;
  } else if (value == "NaN") {
    out->value = NAN;
  } else {
    char* end = nullptr;
    out->value = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') return false;
  }
  return true;
}

TEST(MetricsTest, EverySampleLineParsesBack) {
  Metrics m;
  auto c = m.AddCounter("kb_jobs_total", "Jobs.", {"kind", "verdict"});
  auto h = m.AddHistogram("kb_tool_seconds", "T.", {"tool"},
                          Metrics::DurationBuckets());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(h.ok());
  (*c)->Increment({"we\"ird", "line\nbreak\\"});
  (*c)->Increment({"submit", "passed"}, 4);
  (*h)->Observe({"submit_kernel"}, 0.42);
  (*h)->Observe({"compile_kernel"}, 12.5);
  ASSERT_TRUE(m.AddGaugeFn("kb_queue", "Q.", {}, [] {
                 return std::vector<Metrics::Sample>{{{}, 2}};
               }).ok());

  int samples = 0;
  std::map<std::string, std::string> types;
  std::map<std::string, double> inf_buckets, counts;
  for (absl::string_view line :
       absl::StrSplit(m.RenderPrometheus(), '\n', absl::SkipEmpty())) {
    if (line.substr(0, 7) == "# HELP ") continue;
    if (line.substr(0, 7) == "# TYPE ") {
      std::vector<std::string> parts = absl::StrSplit(line.substr(7), ' ');
      ASSERT_EQ(parts.size(), 2u) << line;
      types[parts[0]] = parts[1];
      continue;
    }
    ParsedSample s;
    ASSERT_TRUE(ParseSampleLine(line, &s)) << "malformed line: " << line;
    ++samples;
    if (s.name == "kb_jobs_total" && s.labels["kind"] == "we\"ird") {
      EXPECT_EQ(s.labels["verdict"], "line\nbreak\\");
      EXPECT_EQ(s.value, 1);
    }
    if (s.name == "kb_tool_seconds_bucket" && s.labels["le"] == "+Inf") {
      inf_buckets[s.labels["tool"]] = s.value;
    }
    if (s.name == "kb_tool_seconds_count") counts[s.labels["tool"]] = s.value;
  }
  // 2 counter series, 2 x (14 buckets + sum + count), 1 gauge.
  EXPECT_EQ(samples, 2 + 2 * 16 + 1);
  EXPECT_EQ(types["kb_jobs_total"], "counter");
  EXPECT_EQ(types["kb_tool_seconds"], "histogram");
  EXPECT_EQ(types["kb_queue"], "gauge");
  EXPECT_EQ(inf_buckets, counts);
  EXPECT_EQ(counts["submit_kernel"], 1);
}

TEST(MetricsTest, TheParserRejectsMalformedLines) {
  ParsedSample s;
  EXPECT_FALSE(ParseSampleLine("a{b=\"c} 1", &s));
  EXPECT_FALSE(ParseSampleLine("a 1 2", &s));
  EXPECT_FALSE(ParseSampleLine("a{b=\"x\\q\"} 1", &s));
  EXPECT_FALSE(ParseSampleLine("{b=\"c\"} 1", &s));
  EXPECT_TRUE(ParseSampleLine("a{b=\"c\",d=\"e\"} 1.5", &s));
  EXPECT_EQ(s.labels["d"], "e");
  EXPECT_EQ(s.value, 1.5);
}

}  // namespace
}  // namespace kbench
