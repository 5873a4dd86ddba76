// Tests the parser of compute-sanitizer's text output on samples written
// from the documented format (worker/testdata/sanitizer/).
#include "worker/sanitizer_output.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

std::string Sample(const std::string& name) {
  std::ifstream in(std::string(KBENCH_SOURCE_DIR) +
                   "/worker/testdata/sanitizer/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

// 25 lines, line N reads "line N;", except a few real-looking ones.
std::string Source() {
  std::string s;
  for (int i = 1; i <= 25; ++i) {
    if (i == 12) {
      s += "  float v = x[i];\n";
    } else if (i == 17) {
      s += "    out[b * K + k] = acc;   \n";
    } else if (i == 21) {
      s += "  partial[threadIdx.x] += v;\n";
    } else if (i == 24) {
      s += "  float total = partial[0];\n";
    } else {
      s += "line " + std::to_string(i) + ";\n";
    }
  }
  return s;
}

TEST(SanitizerLocationTest, NewFormatWithLineInfo) {
  SanitizerLocation loc;
  ASSERT_TRUE(
      ParseSanitizerLocation("gather_linear+0x1f0 in /tmp/kernel.cu:17", &loc));
  EXPECT_EQ(loc.kernel, "gather_linear");
  EXPECT_EQ(loc.file, "/tmp/kernel.cu");
  EXPECT_EQ(loc.line, 17);
}

TEST(SanitizerLocationTest, SignatureWithArguments) {
  SanitizerLocation loc;
  ASSERT_TRUE(ParseSanitizerLocation(
      "void k<float>(const float *, int)+0x30 in kernel.cu:9", &loc));
  EXPECT_EQ(loc.kernel, "void k<float>(const float *, int)");
  EXPECT_EQ(loc.file, "kernel.cu");
  EXPECT_EQ(loc.line, 9);
}

TEST(SanitizerLocationTest, OldFormat) {
  SanitizerLocation loc;
  ASSERT_TRUE(ParseSanitizerLocation(
      "0x000000c8 in /src/my_helper.cuh:75:void proj<double>(double*, int)",
      &loc));
  EXPECT_EQ(loc.file, "/src/my_helper.cuh");
  EXPECT_EQ(loc.line, 75);
  EXPECT_EQ(loc.kernel, "void proj<double>(double*, int)");
}

TEST(SanitizerLocationTest, WithoutLineInfo) {
  SanitizerLocation loc;
  ASSERT_TRUE(ParseSanitizerLocation("gather_linear+0x1f0", &loc));
  EXPECT_EQ(loc.kernel, "gather_linear");
  EXPECT_EQ(loc.file, "");
  EXPECT_EQ(loc.line, 0);
  EXPECT_FALSE(ParseSanitizerLocation("   ", &loc));
}

TEST(SanitizerOutputTest, MemcheckOutOfBoundsMergedWithSourceLine) {
  const SanitizerParse p = ParseSanitizerOutput(
      "memcheck", Sample("memcheck_oob.txt"), "kernel.cu", Source());
  EXPECT_EQ(p.summary, "ERROR SUMMARY: 4 errors");
  EXPECT_EQ(p.summary_errors, 4);
  // Two writes at one line merge; the API error is not a finding; the
  // library read (another file) is kept for the caller to filter.
  ASSERT_EQ(p.findings.size(), 2u);
  const v1::SanitizeFinding& f = p.findings[0];
  EXPECT_EQ(f.tool(), "memcheck");
  EXPECT_EQ(f.kind(), "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(f.kernel(), "gather_linear");
  EXPECT_EQ(f.file(), "/tmp/kbsanitize.Ab12Cd/kernel.cu");
  EXPECT_EQ(f.line(), 17);
  EXPECT_EQ(f.source_line(), "out[b * K + k] = acc;");
  EXPECT_EQ(f.thread(), "(31,0,0)");
  EXPECT_EQ(f.block(), "(3,0,0)");
  EXPECT_EQ(f.address(), "Address 0x7f0c2e000380 is out of bounds");
  EXPECT_EQ(f.count(), 2);
  ASSERT_EQ(f.details_size(), 1);
  EXPECT_THAT(f.details(0), HasSubstr("4 bytes after the nearest allocation"));
  const v1::SanitizeFinding& lib = p.findings[1];
  EXPECT_EQ(lib.kind(), "Invalid __global__ read of size 4 bytes");
  EXPECT_EQ(lib.file(), "cublasLt_internal.cu");
  EXPECT_EQ(lib.line(), 88);
  EXPECT_EQ(lib.kernel(), "gemv2T_kernel_val");
  EXPECT_EQ(lib.source_line(), "");  // Not the job's file.
}

TEST(SanitizerOutputTest, RacecheckAnalysisReport) {
  const SanitizerParse p = ParseSanitizerOutput(
      "racecheck", Sample("racecheck.txt"), "kernel.cu", Source());
  EXPECT_EQ(p.summary_errors, 2);
  ASSERT_EQ(p.findings.size(), 1u);
  const v1::SanitizeFinding& f = p.findings[0];
  EXPECT_EQ(f.tool(), "racecheck");
  EXPECT_EQ(f.kind(), "Race reported between Write access and Read access");
  EXPECT_EQ(f.kernel(), "split_k(const float *, float *, int)");
  EXPECT_EQ(f.line(), 21);
  EXPECT_EQ(f.source_line(), "partial[threadIdx.x] += v;");
  EXPECT_EQ(f.other_access(), "Read access");
  EXPECT_EQ(f.other_line(), 24);
  EXPECT_EQ(f.other_source_line(), "float total = partial[0];");
  EXPECT_EQ(f.count(), 96);  // 64 + 32 hazards.
}

TEST(SanitizerOutputTest, RacecheckHazardReport) {
  const SanitizerParse p = ParseSanitizerOutput(
      "racecheck", Sample("racecheck_hazard.txt"), "kernel.cu", Source());
  ASSERT_EQ(p.findings.size(), 1u);
  const v1::SanitizeFinding& f = p.findings[0];
  EXPECT_EQ(f.kind(), "Potential WAW hazard detected at __shared__");
  EXPECT_EQ(f.block(), "(0,0,0)");
  EXPECT_EQ(f.thread(), "(0,0,0)");
  EXPECT_EQ(f.kernel(), "waw");
  EXPECT_EQ(f.line(), 5);
  EXPECT_EQ(f.source_line(), "line 5;");
  EXPECT_EQ(f.other_access(), "Write Thread (1, 0, 0)");
  EXPECT_EQ(f.other_line(), 5);
  ASSERT_EQ(f.details_size(), 1);
  EXPECT_THAT(f.details(0), HasSubstr("Incoming Value"));
}

TEST(SanitizerOutputTest, Initcheck) {
  const SanitizerParse p = ParseSanitizerOutput(
      "initcheck", Sample("initcheck.txt"), "kernel.cu", Source());
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings[0].kind(),
            "Uninitialized __global__ memory read of size 4 bytes");
  EXPECT_EQ(p.findings[0].source_line(), "float v = x[i];");
  EXPECT_EQ(p.findings[0].address(), "Address 0x7f2a40000014");
  EXPECT_EQ(p.summary_errors, 1);
}

TEST(SanitizerOutputTest, CleanRunAndProgramOutput) {
  const std::string out =
      "hello from printf\n" + Sample("clean.txt") + "more output\n";
  const SanitizerParse p =
      ParseSanitizerOutput("memcheck", out, "kernel.cu", Source());
  EXPECT_TRUE(p.findings.empty());
  EXPECT_EQ(p.summary, "ERROR SUMMARY: 0 errors");
  EXPECT_EQ(p.summary_errors, 0);
  const SanitizerParse empty =
      ParseSanitizerOutput("memcheck", "", "kernel.cu", Source());
  EXPECT_TRUE(empty.findings.empty());
  EXPECT_EQ(empty.summary_errors, -1);
}

TEST(SanitizerOutputTest, OtherFilenameGetsNoSourceText) {
  const SanitizerParse p = ParseSanitizerOutput(
      "memcheck", Sample("memcheck_oob.txt"), "mine.cu", Source());
  ASSERT_FALSE(p.findings.empty());
  EXPECT_EQ(p.findings[0].line(), 17);
  EXPECT_EQ(p.findings[0].source_line(), "");
}

TEST(SanitizerOutputTest, SourceLineText) {
  EXPECT_EQ(SourceLineText("a\n  b  \nc", 2), "b");
  EXPECT_EQ(SourceLineText("a\nb", 3), "");
  EXPECT_EQ(SourceLineText("a\nb", 0), "");
}

}  // namespace
}  // namespace kbench
