// Tests of SourcePolicy (includes, device-side launches, options, size) and
// of its use inside NvrtcCompiler (real NVRTC, no GPU).
#include "compiler/source_policy.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "compiler/nvrtc_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

SourcePolicy Policy() {
  SourcePolicy::Options o;
  o.include_roots = NvrtcCompiler().options().include_dirs;
  o.in_memory_headers = {"kbench_helpers.h"};
  return SourcePolicy(o);
}

absl::Status Check(absl::string_view src) {
  return Policy().CheckSource(src, "kernel.cu");
}

TEST(SourcePolicyTest, AllowsToolkitHeadersByName) {
  EXPECT_TRUE(Check("#include <cuda_bf16.h>\n"
                    "#include <cuda_fp16.h>\n"
                    "#include \"cuda_fp16.h\"\n"
                    "#include <mma.h>\n"
                    "#include <cooperative_groups.h>\n"
                    "#include <cooperative_groups/reduce.h>\n"
                    "#include <cuda_pipeline.h>\n"
                    "#include <cuda/barrier>\n"
                    "#include <cuda/std/cstdint>\n"
                    "  #  include   <cuda_fp8.h>\n"
                    "__global__ void k() {}\n")
                  .ok());
}

TEST(SourcePolicyTest, AllowsInMemoryHeaders) {
  EXPECT_TRUE(Check("#include \"kbench_helpers.h\"\n").ok());
}

TEST(SourcePolicyTest, RefusesAbsolutePathWithLineAndAllowedList) {
  absl::Status s = Check("// hi\n#include \"/etc/passwd\"\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("kernel.cu:2"), HasSubstr("\"/etc/passwd\""),
                    HasSubstr("absolute"), HasSubstr("<cuda_bf16.h>"),
                    HasSubstr("include"), Not(HasSubstr("root:"))));
}

TEST(SourcePolicyTest, RefusesDotDotAndHostFiles) {
  EXPECT_THAT(Check("#include <cuda/../../../../etc/passwd>\n").message(),
              HasSubstr("'..'"));
  EXPECT_THAT(Check("#include \"passwd\"\n").message(),
              HasSubstr("not a CUDA toolkit header"));
  EXPECT_THAT(Check("#include <stdio.h>\n").message(),
              HasSubstr("not a CUDA toolkit header"));
  EXPECT_THAT(Check("#include <./cuda_fp16.h>\n").message(),
              HasSubstr("'.' component"));
  EXPECT_FALSE(Check("#include_next </etc/passwd>\n").ok());
  EXPECT_FALSE(Check("#import \"/etc/passwd\"\n").ok());
  EXPECT_THAT(Check("#embed <cuda_fp16.h>\n").message(), HasSubstr("#embed"));
}

TEST(SourcePolicyTest, RefusesMacroExpandedInclude) {
  absl::Status s = Check("#define P \"/etc/passwd\"\n#include P\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("kernel.cu:2"), HasSubstr("macro-expanded")));
}

TEST(SourcePolicyTest, SeesThroughLineContinuations) {
  absl::Status s = Check("int a;\n#inc\\\nlude \"/etc/\\\npasswd\"\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("kernel.cu:2"), HasSubstr("\"/etc/passwd\"")));
}

TEST(SourcePolicyTest, SeesThroughComments) {
  EXPECT_FALSE(Check("#/* c */include /* c */ \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(Check("/* a\n b */ #include \"/etc/passwd\"\n").ok());
  // A raw string with a quote and "/*" inside does not hide the next line.
  EXPECT_FALSE(
      Check(
          "const char* s = R\"x(a\"/*)x\";\n#include \"/etc/passwd\"\n// */\n")
          .ok());
  // Commented-out allowed includes and strings are fine.
  EXPECT_TRUE(Check("// #include <cuda_fp16.h>\nconst char* s = \"<<<\";\n"
                    "int x = 1'000'000;\n")
                  .ok());
}

// The attack that read /proc/self/environ on main: NVRTC takes the digraph
// "%:" for "#", so a filter that only looks for "#" let it through.
TEST(SourcePolicyTest, RefusesDigraphAndTrigraphSpellingsOfInclude) {
  for (const char* src : {
           "__device__ int leak[] = {\n%:include \"/proc/self/environ\"\n};\n",
           "%:include_next </etc/passwd>\n",
           "  %:  include \"../secret\"\n",
           "#define P \"/etc/passwd\"\n%:include P\n",
           "?\?=include \"/etc/passwd\"\n",
           "%:\\\ninclude \"/etc/passwd\"\n",
           "%:import \"/etc/passwd\"\n",
       }) {
    const absl::Status s = Check(src);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << src;
    EXPECT_THAT(s.message(), HasSubstr("not allowed")) << src;
  }
  EXPECT_TRUE(Check("%:include <cuda_fp16.h>\n").ok());
}

// Found in review: a quote after a number taken for a digit separator
// made `'/*'` open a fake comment that hid a spliced include.
TEST(SourcePolicyTest, DigitSeparatorsCannotHideAnInclude) {
  const absl::Status s =
      Check("#define U 1'/*'\n%:inc\\\nlude \"/etc/passwd\"\n// */\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("/etc/passwd"));
  EXPECT_TRUE(Check("__device__ int n = 1'000'000;\n"
                    "__device__ int h = 0x1'0;\n")
                  .ok());
}

// Found by the fuzzer (tests/fuzz/crashes/source_policy_fuzz/): the scan
// guessed a literal's prefix from the letters before the quote, so in
// 1'R"x( it saw a raw string (the compiler sees the pp-number 1'R and an
// ordinary string) and a spliced #embed on the next line hid inside it.
TEST(SourcePolicyTest, APpNumberIsLexedWholeBeforeAnyLiteral) {
  const absl::Status s =
      Check("int c = 1'R\"x(\n#\\\nembed \"/etc/passwd\"\n)x\";\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("kernel.cu:2"), HasSubstr("embed"),
                                 HasSubstr("arbitrary files")));
  // Real raw strings and number literals still pass.
  EXPECT_TRUE(Check("const char* p = R\"x(\n#define X is text here\n)x\";\n"
                    "const char* q = u8R\"(a)\";\n"
                    "double d = 1.5e+3 + 0x1p-4 + 1'0.0'5;\n")
                  .ok());
}

// Where compilers lex differently, the source is refused, not guessed at:
// 1'<extended char> (separator or character literal), extended characters,
// '$' and '\' in code, malformed raw string delimiters, "\ <newline>".
TEST(SourcePolicyTest, RefusesSourcesThatCompilersLexDifferently) {
  struct Case {
    const char* src;
    const char* why;
  };
  const Case cases[] = {
      {"int c = 1'\xbbR\"x(\n)x\";\n", "a quote after a number"},
      {"int \xc3\xa9 = 1;\n", "non-ASCII"},
      {"int $R = 1;\n", "non-ASCII character, '$'"},
      {"int \\u00e9 = 1;\n", "outside comments and literals"},
      {"auto p = R\"a b(x)a b\";\n", "raw string literal whose delimiter"},
      {"auto p = R\"01234567890123456(x)01234567890123456\";\n",
       "raw string literal whose delimiter"},
      {"auto p = R\"abc\n", "raw string literal whose delimiter"},
      {"#\\ \ninclude \"/etc/passwd\"\n", "backslash followed by spaces"},
  };
  for (const Case& c : cases) {
    const absl::Status s = Check(c.src);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.src;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("kernel.cu:1"), HasSubstr(c.why),
                                   HasSubstr("lex the same way")))
        << c.src;
  }
  // The same bytes inside comments and literals are fine.
  EXPECT_TRUE(Check("// B \xe2\x89\xa4 65536, $x, \\u00e9\n"
                    "const char* s = \"\xc3\xa9 $ \\\\\";\n"
                    "char q = '$';\n")
                  .ok());
}

// Found by the fuzzer in CI: "#embed.h>" and "#embed#include <x.h>" lines
// inside a literal or comment escaped the physical-line net, which looked
// only at header-name operands.
TEST(SourcePolicyTest, TheNetRefusesEveryEmbedAndMacroOperandLine) {
  for (const char* src :
       {"/*\n#embed.h>\n*/\n", "/*\n#embed#include <cuda_fp16.h>\n*/\n",
        "const char* s = R\"(\n#embed\n)\";\n", "/*\n#include FOO\n*/\n",
        "/*\n  %:  include_next\n*/\n"}) {
    const absl::Status s = Check(src);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << src;
    EXPECT_THAT(s.message(), HasSubstr("kernel.cu:2")) << src;
  }
  EXPECT_THAT(Check("/*\n#embed.h>\n*/\n").message(),
              HasSubstr("#embed reads arbitrary files"));
}

TEST(SourcePolicyTest, DirectiveLinesInsideCommentsAreCheckedToo) {
  EXPECT_FALSE(Check("/*\n#include \"/etc/passwd\"\n*/\n").ok());
}

TEST(SourcePolicyTest, RefusesHasIncludeOfAPath) {
  absl::Status s = Check("#if __has_include(\"/etc/passwd\")\n#endif\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("__has_include"));
  EXPECT_FALSE(Check("#if __has_include(X)\n#endif\n").ok());
  EXPECT_TRUE(Check("#if __has_include(<cuda_fp16.h>)\n#endif\n").ok());
}

TEST(SourcePolicyTest, RefusesDeviceSideLaunches) {
  absl::Status s = Check(
      "__global__ void child() {}\n"
      "__global__ void parent() {\n  child<<<1, 1>>>();\n}\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("kernel.cu:3"),
                                 HasSubstr("dynamic parallelism")));
  EXPECT_THAT(Check("__global__ void k() { void* p = "
                    "cudaGetParameterBuffer(0, 0); }\n")
                  .message(),
              HasSubstr("dynamic parallelism"));
  EXPECT_THAT(Check("__global__ void k() { cudaLaunchDevice(0, 0, 0, 0, 0, "
                    "0); }\n")
                  .message(),
              HasSubstr("dynamic parallelism"));
  // Not inside comments or strings, and not as part of another name.
  EXPECT_TRUE(Check("// k<<<1,1>>>()\nconst char* s = \"<<<\";\n"
                    "int mycudaLaunchDevice;\n")
                  .ok());
}

TEST(SourcePolicyTest, RefusesRelocatableDeviceCodeOptions) {
  EXPECT_TRUE(SourcePolicy::CheckOptions({"-arch=sm_90", "-lineinfo"}).ok());
  for (const char* o :
       {"-rdc=true", "--relocatable-device-code=true", "-dc", "-rdc"}) {
    absl::Status s = SourcePolicy::CheckOptions({"-arch=sm_90", o});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << o;
    EXPECT_THAT(s.message(), HasSubstr("relocatable")) << o;
  }
}

TEST(SourcePolicyTest, RefusesOversizedSourceNaming256KiB) {
  const std::string big(10 << 20, ' ');
  absl::Status s = Check(big);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("256 KiB"));
}

TEST(SourcePolicyTest, NvrtcCompilerAppliesThePolicy) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out =
      compiler.Compile("#include \"/etc/passwd\"\n__global__ void k() {}\n",
                       "kernel.cu", "sm_90");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              AllOf(HasSubstr("include"), Not(HasSubstr("root:"))));
}

// A launch API call hidden from the scanner by token pasting still fails,
// with the clear message.
TEST(SourcePolicyTest, HiddenDeviceLaunchGetsTheClearMessage) {
  NvrtcCompiler compiler;
  absl::StatusOr<CompileOutput> out = compiler.Compile(
      "#define CAT(a, b) a##b\n"
      "__global__ void k(int* p) {\n"
      "  void* b = CAT(cudaGetParameter, Buffer)(64, 8);\n"
      "  if (b) *p = 1;\n}\n",
      "kernel.cu", "sm_90");
  ASSERT_FALSE(out.ok()) << out->report.log();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("dynamic parallelism"));
}

// Every kernel shipped in the tree (examples, GPU test kernels) passes.
TEST(SourcePolicyTest, ShippedKernelsPass) {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const char* dir : {"kernels", "tests/gpu/kernels"}) {
    const fs::path root = fs::path(KBENCH_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.path().extension() != ".cu") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_TRUE(Policy().CheckSource(text.str(), "kernel.cu").ok())
          << entry.path() << ": "
          << Policy().CheckSource(text.str(), "kernel.cu");
      ++checked;
    }
  }
  EXPECT_GT(checked, 3);
}

}  // namespace
}  // namespace kbench
