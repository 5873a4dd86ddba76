#include "bench/ncu_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kbench {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;

// The header and row layout of `ncu --csv --metrics gpu__time_duration.sum`
// (2025.3), trimmed to the columns the reader uses plus one it ignores.
std::string Row(int id, int pid, const std::string& kernel,
                const std::string& grid, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"" + std::to_string(pid) +
         "\",\"kbrunner\",\"" + kernel + "\",\"(256, 1, 1)\",\"" + grid +
         "\",\"gpu__time_duration.sum\",\"ns\",\"" + value + "\"\n";
}

const char kHeader[] =
    "==PROF== Connected to process 7\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"Block Size\","
    "\"Grid Size\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

const char kGolden[] = "golden";
const char kGemm[] = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64";

TEST(NcuCsvTest, ReadsRowsInBaseUnitsWithTheirProcess) {
  const std::vector<NcuRow> rows = ParseNcuCsv(
      std::string(kHeader) + Row(0, 7, "gather_linear", "(12, 1, 1)", "1,234"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, "0");
  EXPECT_EQ(rows[0].pid, "7");
  EXPECT_EQ(rows[0].kernel, "gather_linear");
  EXPECT_EQ(rows[0].grid, "(12, 1, 1)");
  EXPECT_EQ(rows[0].metric, "gpu__time_duration.sum");
  EXPECT_DOUBLE_EQ(rows[0].value, 1234);
}

TEST(NcuCsvTest, AReferenceRunIsItsConcatAndTheLibraryKernelsAfterIt) {
  std::string csv = kHeader;
  int id = 0;
  // Two eager runs at the timing shape, with the candidate and the golden
  // between them, then one at another shape.
  csv += Row(id++, 7, "concat", "(6, 1, 1)", "2100");
  csv += Row(id++, 7, kGemm, "(1, 1, 1)", "5400");
  csv += Row(id++, 7, "gather_linear", "(12, 1, 1)", "13900");
  csv += Row(id++, 7, kGolden, "(12, 1, 1)", "40000");
  csv += Row(id++, 7, "concat", "(6, 1, 1)", "2000");
  csv += Row(id++, 7, kGemm, "(1, 1, 1)", "5600");
  csv += Row(id++, 7, "concat", "(1024, 1, 1)", "3000");
  csv += Row(id++, 7, kGemm, "(8, 2, 1)", "20000");
  // A concat followed by the candidate, or by another concat: no run.
  csv += Row(id++, 7, "concat", "(6, 1, 1)", "1900");
  csv += Row(id++, 7, "gather_linear", "(12, 1, 1)", "13800");
  csv += Row(id++, 7, "concat", "(6, 1, 1)", "1900");
  // A run cut short by the process's end: its library kernel is in the
  // next process.
  csv += Row(id++, 7, "concat", "(6, 1, 1)", "2000");
  csv += Row(0, 9, kGemm, "(1, 1, 1)", "5000");
  const std::vector<NcuRow> rows = ParseNcuCsv(csv);
  auto runs = [&](const std::string& grid, int launches) {
    return NcuReferenceRunsUs(rows, "concat", "gather_linear", grid, launches);
  };
  EXPECT_THAT(runs("(6, 1, 1)", 2), ElementsAre(DoubleEq(7.5), DoubleEq(7.6)));
  EXPECT_THAT(runs("(1024, 1, 1)", 2), ElementsAre(DoubleEq(23.0)));
  // A one-launch pipeline is its first kernel alone.
  EXPECT_EQ(runs("(6, 1, 1)", 1).size(), 5u);
  EXPECT_TRUE(runs("(6, 1, 1)", 0).empty());
  EXPECT_TRUE(runs("(7, 1, 1)", 2).empty());
  EXPECT_TRUE(
      NcuReferenceRunsUs(rows, "gather", "gather_linear", "(6, 1, 1)", 2)
          .empty());
}

}  // namespace
}  // namespace kbench
