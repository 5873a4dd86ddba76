// KernelActivity's pure parts (no GPU): cutting CUPTI's kernel records
// into runs, by name and by position, and a run's windows, parts and
// front end.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runner/profile/kernel_activity.h"

namespace kbench {
namespace {

TEST(KernelActivityRunsTest, GroupsEachWorkloadsKernelsIntoRuns) {
  // Two runs of a two-launch plan, with harness and reference kernels
  // between them, plus a warm-up run first.
  const std::string flush =
      "_ZN6kbench12_GLOBAL__N_113ReadAllKernelEPK5uint4ljPj";
  const std::string blocker = "_ZN6kbench17BlockStreamKernelEPVKiPiy";
  const std::vector<KernelActivity::Record> records = {
      {"stage1", 0, 3000},           {"stage2", 4000, 9000},
      {flush, 10000, 50000},         {"gather", 51000, 52000},
      {"cublas_gemm", 53000, 58000}, {blocker, 58500, 59000},
      {"stage1", 60000, 62000},      {"stage2", 63000, 67000},
      {"gather", 68000, 69500},      {"cublas_gemm", 70000, 80000},
      {"stage1", 90000, 92500},      {"stage2", 93000, 97500},
      {"gather", 98000, 99000},      {"cublas_gemm", 99500, 104000}};
  auto plan = [](const std::string& n) {
    return n == "stage1" || n == "stage2";
  };
  auto reference = [&](const std::string& n) {
    return !plan(n) && !IsHarnessKernel(n);
  };
  const std::vector<double> runs = RunSpansUs(records, plan, 2, 1);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[0], 7.0);  // 60 -> 67 us: the gap counts.
  EXPECT_DOUBLE_EQ(runs[1], 7.5);
  const std::vector<double> ref = RunSpansUs(records, reference, 2, 1);
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_DOUBLE_EQ(ref[0], 12.0);  // 68 -> 80 us.
  EXPECT_DOUBLE_EQ(ref[1], 6.0);
  EXPECT_TRUE(IsHarnessKernel(flush));
  EXPECT_TRUE(IsHarnessKernel(blocker));
  EXPECT_FALSE(IsHarnessKernel("gather_linear"));
  // Records that do not split into whole runs give nothing.
  auto only1 = [](const std::string& n) { return n == "stage1"; };
  EXPECT_TRUE(RunSpansUs(records, only1, 2, 0).empty());
  // ...and the report's note says how they failed to.
  EXPECT_EQ(NoRunsReason(records, only1, 2, 0),
            "3 of CUPTI's 14 kernel records matched, expected whole runs of "
            "2 launches beyond 0 warm-up runs");
  EXPECT_TRUE(RunSpansUs(
                  records, [](const std::string&) { return false; }, 1, 0)
                  .empty());
  EXPECT_TRUE(RunSpansUs(records, plan, 2, 3).empty());
}

// Runs told apart by position in the order they ran, not by name: CUPTI
// before 13.4 may give a reloaded module's kernel the name of one unloaded
// earlier (H100, 2026-12-05: 0 of 986 records carried the softmax
// example's name).
TEST(KernelActivityRunsTest, ScheduledRunsAreSplitByPositionNotByName) {
  const std::string flush =
      "_ZN6kbench12_GLOBAL__N_113ReadAllKernelEPK5uint4ljPj";
  std::vector<KernelActivity::Record> records = {
      {"stage1", 0, 3000},           {"stage2", 4000, 9000},
      {"gather", 9500, 9900},        {"cublas_gemm", 9950, 9990},
      {flush, 10000, 50000},         {"gather", 51000, 52000},
      {"cublas_gemm", 53000, 58000}, {flush, 58100, 58400},
      {"stage1", 60000, 62000},      {"stage2", 63000, 67000},
      {"stage1", 90000, 92500},      {"stage2", 93000, 97500},
      {"gather", 98000, 99000},      {"cublas_gemm", 99500, 104000}};
  // Warm-up: kernel, reference; then reference first, then kernel first.
  const std::vector<int> order = {0, 1, 1, 0, 0, 1};
  std::string why;
  std::vector<std::vector<double>> spans =
      ScheduledSpansUs(records, order, {2, 2}, 1, true, &why);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_THAT(spans[0], ::testing::ElementsAre(::testing::DoubleEq(7.0),
                                               ::testing::DoubleEq(7.5)));
  EXPECT_THAT(spans[1], ::testing::ElementsAre(::testing::DoubleEq(7.0),
                                               ::testing::DoubleEq(6.0)));
  EXPECT_EQ(why, "");
  // Stale names change nothing.
  for (KernelActivity::Record& r : records) {
    if (r.name == "stage1") r.name = "row_sum_of_an_earlier_job";
  }
  EXPECT_EQ(ScheduledSpansUs(records, order, {2, 2}, 1, true, &why), spans);
  // Records that do not add up to the runs give nothing, and say why.
  spans =
      ScheduledSpansUs(records, {0, 1, 1, 0, 0, 1, 0}, {2, 2}, 1, true, &why);
  EXPECT_TRUE(spans[0].empty() && spans[1].empty());
  EXPECT_EQ(why,
            "CUPTI recorded 12 kernels besides the harness's, the 7 runs "
            "timed launch 14");
  spans = ScheduledSpansUs(records, order, {2, 2}, 3, true, &why);
  EXPECT_TRUE(spans[0].empty() && spans[1].empty());
  EXPECT_EQ(why, "workload 0 ran no more than its 3 warm-up runs");
  spans = ScheduledSpansUs(records, order, {2, 0}, 1, true, &why);
  EXPECT_TRUE(spans[0].empty());
  EXPECT_EQ(why, "run of workload 1 with no kernel count");
}

// The window of every run, warm-up runs included: what a job that spans
// GPUs joins across its ranks (JoinRankWindowsUs).
TEST(KernelActivityRunsTest, ScheduledWindowsGiveEveryRunsStartAndEnd) {
  const std::string flush =
      "_ZN6kbench12_GLOBAL__N_113ReadAllKernelEPK5uint4ljPj";
  const std::vector<KernelActivity::Record> records = {
      {"stage1", 0, 3000},     {"stage2", 4000, 9000}, {flush, 9100, 9400},
      {"gather", 9500, 9900},  {"gemm", 9950, 9990},   {"stage1", 60000, 62000},
      {"stage2", 63000, 67000}};
  std::string why;
  const std::vector<RunWindow> windows =
      ScheduledWindows(records, {0, 1, 0}, {2, 2}, false, &why);
  EXPECT_EQ(why, "");
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].start_ns, 0u);
  EXPECT_EQ(windows[0].end_ns, 9000u);
  EXPECT_EQ(windows[1].start_ns, 9500u);
  EXPECT_EQ(windows[1].end_ns, 9990u);
  EXPECT_EQ(windows[2].start_ns, 60000u);
  EXPECT_EQ(windows[2].end_ns, 67000u);
  EXPECT_TRUE(ScheduledWindows(records, {0, 1}, {2, 2}, false, &why).empty());
  EXPECT_EQ(why,
            "CUPTI recorded 6 kernels besides the harness's, the 2 runs "
            "timed launch 4");
}

// Where a workload's runs spend their time, part by part: the front end,
// each kernel, and the gaps between kernels.
TEST(KernelActivityRunsTest, ScheduledPartsSplitARunIntoKernelsAndGaps) {
  std::vector<KernelActivity::Record> records = {
      {"stage1", 0, 3000},
      {"gather", 9500, 9900},
      {"cublas_gemm", 9950, 9990},
      {"gather", 51000, 52000, 50500},
      {"cublas_gemm", 53000, 58000},
      {"stage1", 60000, 62000},
      {"gather", 98000, 99000, 90000},
      {"cublas_gemm", 99500, 104000}};
  // Warm-up: kernel, reference; then reference, kernel, reference.
  const std::vector<int> order = {0, 1, 1, 0, 1};
  const std::vector<RunPart> parts =
      ScheduledPartsUs(records, order, {1, 2}, 1, 1);
  // A front-end stamp 0.5 us before the start counts; one 9 us before it
  // does not.
  const std::vector<std::pair<std::string, std::vector<double>>> want = {
      {"front end", {0.5, 0.0}},
      {"gather", {1.0, 1.0}},
      {"gap", {1.0, 0.5}},
      {"cublas_gemm", {5.0, 4.5}}};
  ASSERT_EQ(parts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(parts[i].name, want[i].first);
    EXPECT_THAT(parts[i].us,
                ::testing::Pointwise(::testing::DoubleEq(), want[i].second))
        << want[i].first;
  }
  // The kernel's one counted run.
  const std::vector<RunPart> kernel =
      ScheduledPartsUs(records, order, {1, 2}, 1, 0);
  ASSERT_EQ(kernel.size(), 2u);
  EXPECT_THAT(kernel[1].us, ::testing::ElementsAre(::testing::DoubleEq(2.0)));
  // Records that do not add up, an unknown workload, or only warm-up runs:
  // nothing.
  EXPECT_TRUE(ScheduledPartsUs(records, {0, 1, 1, 0}, {1, 2}, 1, 1).empty());
  EXPECT_TRUE(ScheduledPartsUs(records, order, {1, 2}, 1, 2).empty());
  EXPECT_TRUE(ScheduledPartsUs(records, order, {1, 2}, 3, 1).empty());
}

// A run starts where the GPU took its first launch (the submitted stamp),
// unless that stamp is far before the start: a launch that waited.
TEST(KernelActivityRunsTest, ARunStartsWhenTheGpuTookItsFirstLaunch) {
  KernelActivity::Record a{"k", 10000, 13000, 9500};
  KernelActivity::Record b{"k", 20000, 23000, 0};      // No stamp.
  KernelActivity::Record c{"k", 30000, 33000, 25000};  // Waited 5 us.
  KernelActivity::Record d{"k", 40000, 43000, 41000};  // After start: bogus.
  auto all = [](const std::string&) { return true; };
  EXPECT_THAT(RunSpansUs({a, b, c, d}, all, 1, 0),
              ::testing::ElementsAre(
                  ::testing::DoubleEq(3.5), ::testing::DoubleEq(3.0),
                  ::testing::DoubleEq(3.0), ::testing::DoubleEq(3.0)));
  // In a two-launch run, the earliest taken launch starts it.
  KernelActivity::Record e{"k", 51000, 54000, 50600};
  EXPECT_THAT(RunSpansUs({a, e}, all, 2, 0),
              ::testing::ElementsAre(::testing::DoubleEq(44.5)));
  // Replayed from a graph: from the first kernel's start, stamps unread.
  EXPECT_THAT(RunSpansUs({a, e}, all, 2, 0, /*from_submitted=*/false),
              ::testing::ElementsAre(::testing::DoubleEq(44.0)));
  EXPECT_THAT(RunSpansUs({a}, all, 1, 0, /*from_submitted=*/false),
              ::testing::ElementsAre(::testing::DoubleEq(3.0)));
}

}  // namespace
}  // namespace kbench
