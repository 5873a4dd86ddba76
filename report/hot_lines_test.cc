#include "analysis/hot_lines.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/profile_text.h"

namespace kbench {
namespace {

constexpr char kSource[] =
    "extern \"C\" __global__ void gather_linear(...) {\n"  // 1
    "  float acc = bias[k];\n"                             // 2
    "  for (int i = 0; i < R * H; ++i) {\n"                // 3
    "    acc += x[i] * w[k * R * H + i];\n"                // 4
    "  }\n"                                                // 5
    "  out[b * K + k] = acc;\n";                           // 6

TEST(HotLinesTest, WarpStateNamesDropCuptisPrefixAndNotIssued) {
  EXPECT_EQ(WarpStateName("smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
            "long_scoreboard");
  EXPECT_EQ(WarpStateName(
                "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"),
            "long_scoreboard");
  EXPECT_EQ(WarpStateName("smsp__pcsamp_warps_issue_stalled_selected"),
            "selected");
  EXPECT_EQ(WarpStateName("something_else"), "something_else");
}

TEST(HotLinesTest, RanksLinesBySamplesWithTextAndStates) {
  const std::string ls = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
  const std::string sel = "smsp__pcsamp_warps_issue_stalled_selected";
  const std::vector<PcSample> pcs = {
      // Line 4: 600 long_scoreboard (100 of them also reported as not
      // issued, which must not count again), 100 selected.
      {"gather_linear", "/tmp/k/kernel.cu", 4, ls, 600},
      {"gather_linear", "/tmp/k/kernel.cu", 4, ls + "_not_issued", 100},
      {"gather_linear", "/tmp/k/kernel.cu", 4, sel, 100},
      {"gather_linear", "/tmp/k/kernel.cu", 3, sel, 150},
      {"gather_linear", "/tmp/k/kernel.cu", 6, ls, 50},
      // A header line, and a PC without line info (counted in the total).
      {"gather_linear", "/usr/local/cuda/include/cuda_fp16.hpp", 10, sel, 50},
      {"gather_linear", "", 0, sel, 50},
  };
  int64_t total = 0;
  const std::vector<v1::SourceLine> lines =
      RankSourceLines(pcs, kSource, "kernel.cu", 3, &total);
  EXPECT_EQ(total, 1000);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].line(), 4);
  EXPECT_EQ(lines[0].samples(), 700);
  EXPECT_DOUBLE_EQ(lines[0].sample_pct(), 70);
  EXPECT_EQ(lines[0].text(), "acc += x[i] * w[k * R * H + i];");
  EXPECT_EQ(lines[0].entry(), "gather_linear");
  ASSERT_EQ(lines[0].top_stalls_size(), 2);
  EXPECT_EQ(lines[0].top_stalls(0).reason(), "long_scoreboard");
  EXPECT_NEAR(lines[0].top_stalls(0).share_pct(), 600.0 / 7, 1e-9);
  EXPECT_EQ(lines[0].top_stalls(1).reason(), "selected");
  EXPECT_EQ(lines[1].line(), 3);
  EXPECT_EQ(lines[1].text(), "for (int i = 0; i < R * H; ++i) {");
  // 50 samples each: line 6 of the kernel and line 10 of a header.
  EXPECT_EQ(lines[2].samples(), 50);

  // A header line gets no text from the kernel's source.
  const std::vector<v1::SourceLine> all =
      RankSourceLines(pcs, kSource, "kernel.cu", 10, &total);
  ASSERT_EQ(all.size(), 4u);
  for (const v1::SourceLine& l : all) {
    if (l.file() != "/tmp/k/kernel.cu") {
      EXPECT_EQ(l.text(), "") << l.file();
    }
  }
}

TEST(HotLinesTest, TheReportShowsEachLineWithItsShareAndStates) {
  const std::string ls = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
  int64_t total = 0;
  v1::ProfileReport p;
  for (v1::SourceLine& l :
       RankSourceLines({{"gather_linear", "/tmp/k/kernel.cu", 4, ls, 700},
                        {"gather_linear", "/tmp/k/kernel.cu", 6, ls, 300}},
                       kSource, "kernel.cu", 5, &total)) {
    *p.add_hot_lines() = std::move(l);
  }
  // Line 4 loads (SASS metrics); line 6 only stores.
  p.mutable_hot_lines(0)->set_global_load_requests(6168);
  p.mutable_hot_lines(0)->set_global_load_sectors(89172);
  p.mutable_hot_lines(0)->set_global_load_sectors_per_request(89172 / 6168.0);
  p.set_pc_samples(total);
  std::string text;
  AppendProfileAnalysis(p, "  ", &text);
  EXPECT_NE(text.find("hot lines (PC sampling, 1000 samples):"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kernel.cu:4  70.0%  acc += x[i] * w[k * R * H + i];  "
                      "[long_scoreboard 100%]  loads: 14.46 sectors/request "
                      "(6168 requests)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kernel.cu:6  30.0%  out[b * K + k] = acc;  "
                      "[long_scoreboard 100%]\n"),
            std::string::npos)
      << text;
}

TEST(HotLinesTest, NoSamplesNoLines) {
  int64_t total = -1;
  EXPECT_TRUE(RankSourceLines({}, kSource, "kernel.cu", 5, &total).empty());
  EXPECT_EQ(total, 0);
}

}  // namespace
}  // namespace kbench
