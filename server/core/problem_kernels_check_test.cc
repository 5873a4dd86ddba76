// CheckProblemKernels with kbd's compile service compiling in-process
// (NVRTC needs no GPU): a good golden and example pass, a kernel that does
// not compile names its file and line, a plan that launches a kernel the
// source does not define is refused, and a compiler that fails for its
// own reasons is not blamed on the kernels.
#include "server/core/problem_kernels_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "compiler/nvrtc_compiler.h"
#include "server/core/compile_service.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

constexpr char kGolden[] =
    "// @kb launch golden grid(cdiv(R, 128)) block(128)\n"
    "extern \"C\" __global__ void golden(const double* x, double* out, int R,\n"
    "                                    int C) {\n"
    "  const int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r < R) out[r] = x[r * C];\n"
    "}\n";

v1::Problem WithGolden(const std::string& source) {
  v1::Problem p;
  p.set_name("row_first");
  p.mutable_golden()->set_file("golden.cu");
  p.mutable_golden()->set_source(source);
  return p;
}

class ProblemKernelsCheckTest : public ::testing::Test {
 protected:
  NvrtcCompiler compiler_;
  CompileService service_{CompileService::Options{}, &compiler_, nullptr};
};

TEST_F(ProblemKernelsCheckTest, AGoodGoldenPasses) {
  EXPECT_TRUE(
      CheckProblemKernels(&service_, "sm_90", WithGolden(kGolden)).ok());
}

TEST_F(ProblemKernelsCheckTest, ACompileErrorNamesTheFileAndLine) {
  std::string broken = kGolden;
  broken.replace(broken.find("if (r < R)"), 10, "this is not C++;");
  const absl::Status s =
      CheckProblemKernels(&service_, "sm_90", WithGolden(broken));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("golden kernel 'golden.cu' does not "
                                     "compile for sm_90: golden.cu:5:"));
}

TEST_F(ProblemKernelsCheckTest, APlanMustLaunchADefinedKernel) {
  std::string renamed = kGolden;
  renamed.replace(renamed.find("void golden("), 12, "void other(");
  const absl::Status s =
      CheckProblemKernels(&service_, "sm_90", WithGolden(renamed));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("golden kernel 'golden.cu':1: its launch plan "
                        "launches 'golden', which it does not define"));
  EXPECT_THAT(s.message(), HasSubstr("(it defines: other)"));
}

TEST_F(ProblemKernelsCheckTest, AnUnavailableCompilerIsNotTheKernelsFault) {
  CompileService::Options o;
  o.compile_fn = [](const std::string&, const std::string&,
                    const std::string&) -> absl::StatusOr<CompileOutput> {
    return absl::UnavailableError("the compiler child was killed");
  };
  CompileService down(o, &compiler_, nullptr);
  const absl::Status s =
      CheckProblemKernels(&down, "sm_90", WithGolden(kGolden));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("golden kernel 'golden.cu': compiling "
                                     "for sm_90: the compiler child"));
}

}  // namespace
}  // namespace kbench
