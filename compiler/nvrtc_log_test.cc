// Tests of the NVRTC log parsers (compiler/nvrtc_log.h) on captured NVRTC
// 13.0 output: ptxas info, diagnostics, and the trimmed log a model reads.
#include "compiler/nvrtc_log.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Captured from NVRTC 13.0, -arch=sm_90 -Xptxas -v.
constexpr char kPtxasLog[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z9notexternPi' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z9notexternPi\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 6.592 ms\n"
    "ptxas info    : Compiling entry function 'gather_linear' for 'sm_90'\n"
    "ptxas info    : Function properties for gather_linear\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 31 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 11.400 ms\n";

// Captured from NVRTC 13.0 for a source with three errors and a warning.
constexpr char kErrorLog[] =
    "kernel.cu(3): error: identifier \"foo\" is undefined\n"
    "    out[0] = foo;\n"
    "             ^\n"
    "\n"
    "kernel.cu(4): error: identifier \"bar\" is undefined\n"
    "    out[1] = bar(2)\n"
    "             ^\n"
    "\n"
    "kernel.cu(5): error: expected a \";\"\n"
    "    out[2] = 1;\n"
    "    ^\n"
    "\n"
    "kernel.cu(2): warning #177-D: variable \"unused_var\" was declared but "
    "never referenced\n"
    "    int unused_var = 3;\n"
    "        ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress "
    "<warning-number>\"\n"
    "\n"
    "3 errors detected in the compilation of \"kernel.cu\".\n";

TEST(ParsePtxasInfoTest, CapturedLog) {
  std::vector<v1::KernelResources> kernels = ParsePtxasInfo(kPtxasLog);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name(), "_Z9notexternPi");
  EXPECT_EQ(kernels[0].registers(), 8);
  EXPECT_EQ(kernels[1].name(), "gather_linear");
  EXPECT_EQ(kernels[1].registers(), 31);
  EXPECT_EQ(kernels[1].barriers(), 0);
  EXPECT_EQ(kernels[1].static_smem_bytes(), 0);
  EXPECT_EQ(kernels[1].stack_frame_bytes(), 0);
}

TEST(ParsePtxasInfoTest, SmemCmemSpillsAndDeviceFunctions) {
  constexpr char kLog[] =
      "ptxas warning : For profile sm_90 adjusting per thread register count "
      "of 16 to lower bound of 24\r\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'first' for 'sm_80'\n"
      "ptxas info    : Function properties for first\n"
      "ptxas         .     320 bytes stack frame, 60 bytes spill stores, 72 "
      "bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers, 320 bytes "
      "cumulative stack size\n"
      "ptxas info    : Compile time = 49.620 ms\n"
      "ptxas info    : Function properties for _Z3fooi\n"
      "ptxas         .     512 bytes stack frame, 8 bytes spill stores, 8 "
      "bytes spill loads\n"
      "ptxas info    : Compiling entry function 'second' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z6helperPii\n"
      "ptxas         .     64 bytes stack frame, 4 bytes spill stores, 4 "
      "bytes spill loads\n"
      "ptxas info    : Function properties for second\n"
      "ptxas         .     16 bytes stack frame, 0 bytes spill stores, 0 "
      "bytes spill loads\n"
      // Fields in another order, an unknown field, no barriers field.
      "ptxas info    : Used 380 bytes cmem[0], 28 registers, 4096 bytes "
      "smem, 12 bytes cmem[2], used 1 barriers, 7 textures\n";
  std::vector<v1::KernelResources> kernels = ParsePtxasInfo(kLog);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name(), "first");
  EXPECT_EQ(kernels[0].registers(), 24);
  EXPECT_EQ(kernels[0].stack_frame_bytes(), 320);
  EXPECT_EQ(kernels[0].spill_store_bytes(), 60);
  EXPECT_EQ(kernels[0].spill_load_bytes(), 72);
  EXPECT_EQ(kernels[1].name(), "second");
  EXPECT_EQ(kernels[1].registers(), 28);
  EXPECT_EQ(kernels[1].barriers(), 1);
  EXPECT_EQ(kernels[1].static_smem_bytes(), 4096);
  EXPECT_EQ(kernels[1].const_bytes(), 380);
  EXPECT_EQ(kernels[1].stack_frame_bytes(), 16);
  EXPECT_EQ(kernels[1].spill_store_bytes(), 0);
}

TEST(ParsePtxasInfoTest, NoPtxasLinesNoKernels) {
  EXPECT_TRUE(ParsePtxasInfo("").empty());
  EXPECT_TRUE(ParsePtxasInfo(kErrorLog).empty());
  // A Used line with no entry being compiled is ignored.
  EXPECT_TRUE(ParsePtxasInfo("ptxas info    : Used 8 registers\n").empty());
}

TEST(ParseNvrtcDiagnosticsTest, CapturedErrorLog) {
  std::vector<v1::Diagnostic> diagnostics = ParseNvrtcDiagnostics(kErrorLog);
  ASSERT_EQ(diagnostics.size(), 4u);
  EXPECT_EQ(diagnostics[0].line(), 3);
  EXPECT_EQ(diagnostics[0].severity(), "error");
  EXPECT_EQ(diagnostics[0].message(), "identifier \"foo\" is undefined");
  EXPECT_EQ(diagnostics[1].line(), 4);
  EXPECT_EQ(diagnostics[2].line(), 5);
  EXPECT_EQ(diagnostics[2].message(), "expected a \";\"");
  EXPECT_EQ(diagnostics[3].line(), 2);
  EXPECT_EQ(diagnostics[3].severity(), "warning");
  EXPECT_EQ(diagnostics[3].message(),
            "variable \"unused_var\" was declared but never referenced");
}

TEST(ParseNvrtcDiagnosticsTest, OtherForms) {
  constexpr char kLog[] =
      "kernel.cu(1): catastrophic error: cannot open source file \"x.h\"\n"
      "  #include \"x.h\"\n"
      "                ^\n"
      "\n"
      "1 catastrophic error detected in the compilation of \"kernel.cu\".\n"
      "Compilation terminated.\n"
      "kernel.cu(7): remark #2361-D: a remark: with a colon\r\n"
      "my (dir)/k.cu(12): warning: plain warning\n"
      "nvrtc: error: unrecognized option -bogus found\n"
      "ptxas error   : Entry function 'k' uses too much shared data\n"
      "ptxas info    : Used 8 registers\n"
      "kernel.cu(9): error_not: not a diagnostic\n";
  std::vector<v1::Diagnostic> d = ParseNvrtcDiagnostics(kLog);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].severity(), "error");
  EXPECT_EQ(d[0].line(), 1);
  EXPECT_EQ(d[0].message(), "cannot open source file \"x.h\"");
  EXPECT_EQ(d[1].severity(), "remark");
  EXPECT_EQ(d[1].line(), 7);
  EXPECT_EQ(d[1].message(), "a remark: with a colon");
  EXPECT_EQ(d[2].severity(), "warning");
  EXPECT_EQ(d[2].line(), 12);
  EXPECT_EQ(d[2].message(), "plain warning");
  EXPECT_EQ(d[3].severity(), "error");
  EXPECT_EQ(d[3].line(), 0);
  EXPECT_EQ(d[3].message(), "unrecognized option -bogus found");
  EXPECT_EQ(d[4].line(), 0);
  EXPECT_EQ(d[4].message(), "Entry function 'k' uses too much shared data");
}

TEST(ParseNvrtcDiagnosticsTest, HeaderErrorMapsToInstantiationLine) {
  // Captured from NVRTC 13.0.
  constexpr char kLog[] =
      "/tmp/inc/bad.h(1): error: expression must have class type but it has "
      "type \"float\"\n"
      "  template <typename T> __device__ T twice(T x) { return x.nope * 2; }\n"
      "                                                         ^\n"
      "          detected during instantiation of \"T twice(T) [with "
      "T=float]\" at line 4 of kernel.cu\n"
      "\n"
      "/tmp/inc/other.h(8): error: something else\n"
      "\n"
      "1 error detected in the compilation of \"kernel.cu\".\n";
  std::vector<v1::Diagnostic> d = ParseNvrtcDiagnostics(kLog, "kernel.cu");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].line(), 4);
  EXPECT_EQ(d[0].message(),
            "/tmp/inc/bad.h(1): expression must have class type but it has "
            "type \"float\"");
  EXPECT_EQ(d[1].line(), 0);
  EXPECT_EQ(d[1].message(), "/tmp/inc/other.h(8): something else");
  // Without a file name, lines are taken as written.
  std::vector<v1::Diagnostic> raw = ParseNvrtcDiagnostics(kLog);
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(raw[0].line(), 1);
  EXPECT_EQ(raw[1].line(), 8);
}

std::string ManyErrorsLog(int n, bool with_ptxas = true) {
  std::string log = with_ptxas ? "ptxas info    : 0 bytes gmem\n" : "";
  for (int i = 1; i <= n; ++i) {
    absl::StrAppend(&log, "kernel.cu(", i, "): error: error number ", i, "\n",
                    "  source line ", i, "\n", "  ^\n\n");
    if (i == 2) absl::StrAppend(&log, "kernel.cu(99): warning: w\n\n");
  }
  absl::StrAppend(&log, n, " errors detected in the compilation of ",
                  "\"kernel.cu\".\n");
  return log;
}

TEST(TrimLogTest, KeepsTenErrorsWithExcerptsAndCountsTheRest) {
  const std::string trimmed = TrimLog(ManyErrorsLog(30));
  EXPECT_EQ(ParseNvrtcDiagnostics(trimmed).size(), 11u);  // 10 + a warning.
  EXPECT_THAT(trimmed, HasSubstr("kernel.cu(10): error: error number 10\n"
                                 "  source line 10\n  ^\n"));
  EXPECT_THAT(trimmed, Not(HasSubstr("error number 11")));
  EXPECT_THAT(trimmed, HasSubstr("kernel.cu(99): warning: w"));
  EXPECT_THAT(trimmed, Not(HasSubstr("ptxas")));
  EXPECT_THAT(trimmed, ::testing::EndsWith("... (20 more errors)\n"));
}

TEST(TrimLogTest, ShortLogKeepsEverythingButPtxasInfo) {
  const std::string trimmed = TrimLog(kErrorLog);
  EXPECT_EQ(trimmed, kErrorLog);
  const std::string with_ptxas = absl::StrCat(
      "kernel.cu(2): warning #177-D: unused\n  int x;\n      ^\n\n", kPtxasLog);
  EXPECT_EQ(TrimLog(with_ptxas),
            "kernel.cu(2): warning #177-D: unused\n  int x;\n      ^\n");
  EXPECT_EQ(TrimLog(kPtxasLog), "");
  EXPECT_EQ(TrimLog(ManyErrorsLog(10)), ManyErrorsLog(10, false));
}

TEST(TrimLogTest, MaxErrorsOne) {
  const std::string trimmed = TrimLog(ManyErrorsLog(2), /*max_errors=*/1);
  EXPECT_THAT(trimmed, HasSubstr("error number 1\n"));
  EXPECT_THAT(trimmed, Not(HasSubstr("error number 2")));
  EXPECT_THAT(trimmed, ::testing::EndsWith("... (1 more error)\n"));
}

TEST(TrimLogTest, CutToMaxBytesOnLineBoundaries) {
  const std::string trimmed = TrimLog(ManyErrorsLog(30), 10, 200);
  EXPECT_LE(trimmed.size(), 200u);
  EXPECT_THAT(trimmed, StartsWith("kernel.cu(1): error: error number 1\n"));
  const int kept = static_cast<int>(ParseNvrtcDiagnostics(trimmed).size());
  EXPECT_LT(kept, 10);
  // The warning is not an error; every dropped error is counted.
  const int kept_errors = kept - (kept >= 3 ? 1 : 0);
  EXPECT_THAT(trimmed, ::testing::EndsWith(absl::StrCat(
                           "... (", 30 - kept_errors, " more errors)\n")));
  // Only warnings, over the byte limit.
  std::string warnings;
  for (int i = 0; i < 100; ++i) {
    absl::StrAppend(&warnings, "kernel.cu(", i + 1, "): warning: w\n");
  }
  const std::string cut = TrimLog(warnings, 10, 100);
  EXPECT_LE(cut.size(), 100u);
  EXPECT_THAT(cut, ::testing::EndsWith("... (log truncated)\n"));
}

}  // namespace
}  // namespace kbench
