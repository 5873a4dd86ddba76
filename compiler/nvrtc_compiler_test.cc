// Tests of NvrtcCompiler with real NVRTC compiles (no GPU needed). The log
// parsers are tested on captured output in nvrtc_log_test.cc.
#include "compiler/nvrtc_compiler.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadExample(const std::string& name) {
  const std::string path =
      absl::StrCat(KBENCH_SOURCE_DIR, "/kernels/examples/", name);
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

CompileOutput CompileOk(const NvrtcCompiler& compiler,
                        const std::string& source,
                        const std::string& arch = "sm_90") {
  absl::StatusOr<CompileOutput> out =
      compiler.Compile(source, "kernel.cu", arch);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return *std::move(out);
}

TEST(NvrtcCompilerTest, VersionIsMajorDotMinor) {
  EXPECT_EQ(NvrtcCompiler::Version(), "13.0");
}

TEST(NvrtcCompilerTest, OptionsForListsArchPtxasLineInfoStdAndIncludes) {
  NvrtcCompiler compiler(CompileOptions{"sm_90", true, {"/a", "/b"}});
  EXPECT_THAT(compiler.OptionsFor("sm_80"),
              ElementsAre("-arch=sm_80", "-Xptxas", "-v", "-lineinfo",
                          "--std=c++17", "-I/a", "-I/b"));
  NvrtcCompiler no_lines(CompileOptions{"sm_90", false, {"/a"}});
  EXPECT_THAT(
      no_lines.OptionsFor("sm_90"),
      ElementsAre("-arch=sm_90", "-Xptxas", "-v", "--std=c++17", "-I/a"));
}

TEST(NvrtcCompilerTest, DefaultIncludeDirIsTheToolkits) {
  NvrtcCompiler compiler;
  std::vector<std::string> options = compiler.OptionsFor("sm_90");
  std::vector<std::string> includes;
  for (const std::string& option : options) {
    if (absl::StartsWith(option, "-I")) includes.push_back(option);
  }
  ASSERT_FALSE(includes.empty());
  for (absl::string_view dir : absl::StrSplit(KBENCH_CUDA_INCLUDE_DIR, ';')) {
    EXPECT_THAT(includes, ::testing::Contains(absl::StrCat("-I", dir)));
  }
  EXPECT_TRUE(std::ifstream(includes[0].substr(2) + "/cuda_bf16.h").good())
      << includes[0];
}

TEST(NvrtcCompilerTest, CompilesNaiveExample) {
  NvrtcCompiler compiler;
  const std::string source = ReadExample("gather_linear_naive.cu");
  CompileOutput out = CompileOk(compiler, source);
  const v1::CompileReport& report = out.report;
  ASSERT_TRUE(report.success()) << report.log();
  EXPECT_EQ(report.arch(), "sm_90");
  EXPECT_EQ(report.nvrtc_version(), "13.0");
  EXPECT_EQ(report.digest(), compiler.CacheKey(source, "sm_90"));
  EXPECT_EQ(report.digest().size(), 64u);
  EXPECT_THAT(report.options(), ::testing::Contains("-arch=sm_90"));
  EXPECT_THAT(report.options(), ::testing::Contains("-lineinfo"));
  EXPECT_GT(report.compile_ms(), 0.0);
  EXPECT_TRUE(report.diagnostics().empty());
  ASSERT_EQ(report.kernels_size(), 1);
  EXPECT_EQ(report.kernels(0).name(), "gather_linear");
  EXPECT_GT(report.kernels(0).registers(), 0);
  EXPECT_EQ(report.kernels(0).static_smem_bytes(), 0);
  EXPECT_EQ(report.kernels(0).stack_frame_bytes(), 0);
  EXPECT_THAT(out.cubin, StartsWith("\x7f"
                                    "ELF"));
  EXPECT_EQ(report.cubin_bytes(), static_cast<int64_t>(out.cubin.size()));
  // Resource lines are in report.kernels, not in the log.
  EXPECT_THAT(report.log(), Not(HasSubstr("ptxas info")));
}

TEST(NvrtcCompilerTest, CompilesBf16ExampleThroughDefaultIncludeDir) {
  NvrtcCompiler compiler;
  CompileOutput out =
      CompileOk(compiler, ReadExample("gather_linear_naive_bf16.cu"));
  ASSERT_TRUE(out.report.success()) << out.report.log();
  ASSERT_EQ(out.report.kernels_size(), 1);
  EXPECT_EQ(out.report.kernels(0).name(), "gather_linear");
  EXPECT_FALSE(out.cubin.empty());
}

TEST(NvrtcCompilerTest, TwoStageExampleYieldsTwoKernels) {
  NvrtcCompiler compiler;
  CompileOutput out =
      CompileOk(compiler, ReadExample("gather_linear_two_stage.cu"));
  ASSERT_TRUE(out.report.success()) << out.report.log();
  std::set<std::string> names;
  for (const auto& kernel : out.report.kernels()) {
    names.insert(kernel.name());
    EXPECT_GT(kernel.registers(), 0) << kernel.name();
  }
  EXPECT_EQ(names, (std::set<std::string>{"gather_rows", "linear_rows"}));
}

TEST(NvrtcCompilerTest, SyntaxErrorIsAFailedReportNotAnErrorStatus) {
  NvrtcCompiler compiler;
  const std::string source =
      "extern \"C\" __global__ void k(float* out) {\n"  // line 1
      "  out[0] = 1.0f;\n"                              // line 2
      "  out[1] = undefined_name;\n"                    // line 3
      "}\n";
  absl::StatusOr<CompileOutput> out = compiler.Compile(source, "", "sm_90");
  ASSERT_TRUE(out.ok()) << out.status();
  const v1::CompileReport& report = out->report;
  EXPECT_FALSE(report.success());
  EXPECT_TRUE(out->cubin.empty());
  EXPECT_EQ(report.cubin_bytes(), 0);
  EXPECT_TRUE(report.kernels().empty());
  ASSERT_EQ(report.diagnostics_size(), 1);
  EXPECT_EQ(report.diagnostics(0).line(), 3);
  EXPECT_EQ(report.diagnostics(0).severity(), "error");
  EXPECT_EQ(report.diagnostics(0).message(),
            "identifier \"undefined_name\" is undefined");
  // Default file name, and the excerpt stays in the log.
  EXPECT_THAT(report.log(), HasSubstr("kernel.cu(3): error:"));
  EXPECT_THAT(report.log(), HasSubstr("out[1] = undefined_name;"));
  EXPECT_EQ(report.digest(), compiler.CacheKey(source, "sm_90"));
}

TEST(NvrtcCompilerTest, DiagnosticsUseTheGivenFilename) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out = compiler.Compile(
      "__global__ void k() { int x = ; }\n", "mine.cu", "sm_90");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->report.success());
  EXPECT_THAT(out->report.log(), HasSubstr("mine.cu(1): error"));
  ASSERT_GE(out->report.diagnostics_size(), 1);
  EXPECT_EQ(out->report.diagnostics(0).line(), 1);
}

// A header that is not in the toolkit never reaches NVRTC: the source
// policy refuses it (compiler/source_policy.h).
TEST(NvrtcCompilerTest, MissingHeaderIsRefusedByTheSourcePolicy) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out = compiler.Compile(
      "#include \"no_such_header.h\"\n__global__ void k() {}\n", "kernel.cu",
      "sm_90");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("kernel.cu:1: #include \"no_such_header.h\" is not "
                        "allowed: it is not a CUDA toolkit header"));
}

TEST(NvrtcCompilerTest, StaticSharedMemoryIsReported) {
  NvrtcCompiler compiler;
  CompileOutput out = CompileOk(compiler,
                                "extern \"C\" __global__ void k(float* o) {\n"
                                "  __shared__ float s[1024];\n"
                                "  s[threadIdx.x] = o[threadIdx.x];\n"
                                "  __syncthreads();\n"
                                "  o[threadIdx.x] = s[1023 - threadIdx.x];\n"
                                "}\n");
  ASSERT_TRUE(out.report.success()) << out.report.log();
  ASSERT_EQ(out.report.kernels_size(), 1);
  EXPECT_EQ(out.report.kernels(0).static_smem_bytes(), 4096);
  EXPECT_EQ(out.report.kernels(0).barriers(), 1);
}

TEST(NvrtcCompilerTest, TooMuchStaticSharedMemoryGetsADiagnostic) {
  // ptxas fails here without writing an error to the NVRTC log.
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out = compiler.Compile(
      "extern \"C\" __global__ void big(float* o) {\n"
      "  __shared__ float s[16384];\n"
      "  s[threadIdx.x] = o[threadIdx.x];\n"
      "  __syncthreads();\n"
      "  o[threadIdx.x] = s[16383 - threadIdx.x];\n"
      "}\n",
      "kernel.cu", "sm_90");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->report.success());
  EXPECT_TRUE(out->cubin.empty());
  ASSERT_EQ(out->report.diagnostics_size(), 1);
  EXPECT_EQ(out->report.diagnostics(0).severity(), "error");
  EXPECT_THAT(
      out->report.diagnostics(0).message(),
      AllOf(HasSubstr("'big'"), HasSubstr("65536 bytes"), HasSubstr("49152")));
}

TEST(NvrtcCompilerTest, RuntimeIndexedLocalArrayUsesStackFrame) {
  NvrtcCompiler compiler;
  CompileOutput out =
      CompileOk(compiler,
                "extern \"C\" __global__ void k(float* o, int i) {\n"
                "  float local[256];\n"
                "  for (int j = 0; j < 256; ++j) local[j] = o[j] * j;\n"
                "  o[0] = local[i & 255];\n"
                "}\n");
  ASSERT_TRUE(out.report.success()) << out.report.log();
  ASSERT_EQ(out.report.kernels_size(), 1);
  EXPECT_EQ(out.report.kernels(0).name(), "k");
  EXPECT_GE(out.report.kernels(0).stack_frame_bytes(), 1024);
}

TEST(NvrtcCompilerTest, MangledKernelNamesAreKept) {
  NvrtcCompiler compiler;
  CompileOutput out =
      CompileOk(compiler, "__global__ void notextern(int* p) { p[0] = 1; }\n");
  ASSERT_EQ(out.report.kernels_size(), 1);
  EXPECT_EQ(out.report.kernels(0).name(), "_Z9notexternPi");
}

TEST(NvrtcCompilerTest, WarningsDoNotFailTheCompile) {
  NvrtcCompiler compiler;
  CompileOutput out = CompileOk(compiler,
                                "extern \"C\" __global__ void k(int* p) {\n"
                                "  int unused = 3;\n"
                                "  p[0] = 1;\n"
                                "}\n");
  ASSERT_TRUE(out.report.success());
  ASSERT_EQ(out.report.diagnostics_size(), 1);
  EXPECT_EQ(out.report.diagnostics(0).severity(), "warning");
  EXPECT_EQ(out.report.diagnostics(0).line(), 2);
  EXPECT_THAT(out.report.diagnostics(0).message(),
              HasSubstr("\"unused\" was declared but never referenced"));
  EXPECT_FALSE(out.cubin.empty());
}

TEST(NvrtcCompilerTest, ArchSpecificTargetCompiles) {
  NvrtcCompiler compiler;
  CompileOutput out = CompileOk(
      compiler, "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n",
      "sm_90a");
  EXPECT_TRUE(out.report.success());
  EXPECT_EQ(out.report.arch(), "sm_90a");
}

TEST(NvrtcCompilerTest, BadArchIsInvalidArgument) {
  NvrtcCompiler compiler;
  for (const char* arch : {"sm90", "sm_", "compute_90", "sm_90b", "sm_9x", "",
                           "-arch=sm_90", "sm_90 "}) {
    absl::StatusOr<CompileOutput> out =
        compiler.Compile("__global__ void k() {}", "kernel.cu", arch);
    ASSERT_FALSE(out.ok()) << arch;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << arch;
    EXPECT_THAT(
        out.status().message(),
        AllOf(HasSubstr(absl::StrCat("\"", arch, "\"")), HasSubstr("sm_90")));
  }
}

TEST(NvrtcCompilerTest, NulByteInSourceIsInvalidArgument) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out = compiler.Compile(
      std::string("__global__ void k() {}\0junk", 27), "kernel.cu", "sm_90");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("offset 22"));
}

TEST(NvrtcCompilerTest, CacheKeyDependsOnSourceArchAndOptions) {
  NvrtcCompiler compiler;
  const std::string key = compiler.CacheKey("source", "sm_90");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, compiler.CacheKey("source", "sm_90"));
  EXPECT_EQ(key, NvrtcCompiler().CacheKey("source", "sm_90"));
  EXPECT_NE(key, compiler.CacheKey("source ", "sm_90"));
  EXPECT_NE(key, compiler.CacheKey("source", "sm_80"));
  EXPECT_NE(key, compiler.CacheKey("source", "sm_90a"));
  NvrtcCompiler no_lines(CompileOptions{"sm_90", false, {}});
  EXPECT_NE(key, no_lines.CacheKey("source", "sm_90"));
  NvrtcCompiler other_dir(CompileOptions{"sm_90", true, {"/elsewhere"}});
  EXPECT_NE(key, other_dir.CacheKey("source", "sm_90"));
  // Length prefixes: moving bytes between fields changes the key.
  EXPECT_NE(compiler.CacheKey("ab", "sm_90"), compiler.CacheKey("a", "bsm_90"));
}

}  // namespace
}  // namespace kbench
