// Tests of NvrtcCompiler with real NVRTC compiles (no GPU needed) and of the
// log parsers on captured NVRTC 13.0 output.
#include "compiler/nvrtc_compiler.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

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
    if (option.rfind("-I", 0) == 0) includes.push_back(option);
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
