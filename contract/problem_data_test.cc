// The data parts of a golden-kernel problem: input distributions, baseline
// steps (with and without the baseline file's plan), check cases and
// min_bytes, each refused with the field at fault.
#include "contract/problem_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "contract/problem_util.h"
#include "google/protobuf/text_format.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

// Row sums with one int32 input (a row permutation) to exercise indices.
constexpr char kProblem[] = R"pb(
  name: "gathered_row_sum"
  title: "t"
  statement: "s"
  reference: REFERENCE_OP_GOLDEN_KERNEL
  golden { file: "golden.cu" }
  entry_point: "k"
  dims { name: "R" min: 1 max: 1024 }
  dims { name: "C" min: 1 max: 1024 }
  tensors {
    name: "x"
    role: TENSOR_ROLE_INPUT
    dtype: DTYPE_BF16
    shape: [ "R", "C" ]
    input { kind: KIND_UNIFORM low: -1 high: 1 }
  }
  tensors {
    name: "perm"
    role: TENSOR_ROLE_INPUT
    dtype: DTYPE_INT32
    shape: [ "R" ]
    input { kind: KIND_INTEGERS int_low: "0" int_high: "R" }
  }
  tensors {
    name: "out"
    role: TENSOR_ROLE_OUTPUT
    dtype: DTYPE_BF16
    shape: [ "R" ]
  }
  signature: [ "x", "perm", "out", "R", "C" ]
  shape_sets {
    name: "default"
    shapes {
      name: "a"
      dims { key: "R" value: 4 }
      dims { key: "C" value: 8 }
    }
  }
  default_shape_set: "default"
  tolerance { atol: 1e-2 rtol: 1e-2 max_rel_norm: 1e-2 }
  flops: "R*C"
  min_bytes: "2*R*C + 4*R + 2*R"
  time_budget_ms: 1000
  trials: 1
  baseline {
    name: "x[perm].sum(1)"
    file: "baseline.cu"
    steps { launch: "gather_rows" }
    steps { launch: "row_sum" }
  }
  check_cases {
    name: "tiny"
    dims { key: "R" value: 2 }
    dims { key: "C" value: 2 }
    inputs {
      tensor: "x"
      values: [ 0.5, -1.25, 3, 0.125 ]
    }
    inputs {
      tensor: "perm"
      values: [ 1, 0 ]
    }
    outputs {
      tensor: "out"
      values: [ 3.125, -0.75 ]
    }
  }
)pb";

// The baseline file's plan: a gather into a workspace, then the sums.
v1::LaunchPlan FilePlan() {
  v1::LaunchPlan plan;
  v1::WorkspaceSpec* w = plan.add_workspaces();
  w->set_name("rows");
  w->set_bytes("2*R*C");
  v1::LaunchSpec* a = plan.add_launches();
  a->set_entry("gather_rows");
  a->set_line(3);
  v1::LaunchSpec* b = plan.add_launches();
  b->set_entry("row_sum");
  b->set_line(4);
  return plan;
}

class ProblemDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        google::protobuf::TextFormat::ParseFromString(kProblem, &problem_));
  }
  // ValidateProblemData after `change`.
  absl::Status With(const std::function<void(v1::Problem*)>& change) {
    v1::Problem p = problem_;
    change(&p);
    return ValidateProblemData(p);
  }
  v1::Problem problem_;
};

TEST_F(ProblemDataTest, TheWholeProblemIsValid) {
  EXPECT_TRUE(ValidateProblem(problem_).ok()) << ValidateProblem(problem_);
  const v1::LaunchPlan plan = FilePlan();
  EXPECT_TRUE(ValidateBaselineSteps(problem_, &plan).ok());
  // min_bytes replaces every-tensor-once.
  EXPECT_EQ(*ProblemMinBytes(problem_, {{"R", 4}, {"C", 8}}), 2 * 32 + 16 + 8);
}

TEST_F(ProblemDataTest, InputDistributionsMatchTheirTensors) {
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(1)->clear_input();
              }).message(),
              HasSubstr("tensors[1] (perm): an int32 input needs input"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(0)->mutable_input()->set_low(2);
              }).message(),
              HasSubstr("low < high"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(0)->mutable_input()->set_kind(
                    v1::InputDistribution::KIND_INTEGERS);
              }).message(),
              HasSubstr("KIND_INTEGERS draws int32 values"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(1)->mutable_input()->set_int_high("Q");
              }).message(),
              HasSubstr("'Q', which is not a dim"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(1)->mutable_input()->set_int_high("R-4");
              }).message(),
              HasSubstr("int_low < int_high must hold"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(2)->mutable_input()->set_low(0);
              }).message(),
              HasSubstr("an output's values are not drawn"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_tensors(2)->set_dtype(v1::DTYPE_INT32);
              }).message(),
              HasSubstr("an output is floating point"));
}

TEST_F(ProblemDataTest, AGoldenProblemNeedsABaselineAndACheckCase) {
  EXPECT_THAT(With([](v1::Problem* p) { p->clear_baseline(); }).message(),
              HasSubstr("needs a baseline with at least one step"));
  EXPECT_THAT(With([](v1::Problem* p) { p->clear_check_cases(); }).message(),
              HasSubstr("at least one check case"));
  // The reference itself is ValidateProblem's to check.
  v1::Problem unspecified = problem_;
  unspecified.set_reference(v1::REFERENCE_OP_UNSPECIFIED);
  EXPECT_THAT(ValidateProblem(unspecified).message(),
              HasSubstr("reference: must be REFERENCE_OP_GOLDEN_KERNEL"));
  EXPECT_THAT(With([](v1::Problem* p) {
                p->mutable_baseline()->clear_file();
              }).message(),
              HasSubstr("baseline.steps[0]: a launch step needs the "
                        "baseline's file"));
  EXPECT_THAT(With([](v1::Problem* p) { p->set_min_bytes("2*Z"); }).message(),
              HasSubstr("min_bytes: '2*Z' uses 'Z'"));
}

TEST_F(ProblemDataTest, MatmulStepsAreCheckedBeforeAndAgainstThePlan) {
  auto add_matmul = [](v1::Problem* p) {
    v1::MatmulStep* m = p->mutable_baseline()->add_steps()->mutable_matmul();
    m->set_a("rows");
    m->set_b("x");
    m->set_d("out");
    m->set_m("R");
    m->set_n("1");
    m->set_k("C");
    m->set_trans_b(true);
  };
  v1::Problem p = problem_;
  add_matmul(&p);
  EXPECT_TRUE(ValidateProblemData(p).ok()) << ValidateProblemData(p);
  const v1::LaunchPlan plan = FilePlan();
  EXPECT_TRUE(ValidateBaselineSteps(p, &plan).ok())
      << ValidateBaselineSteps(p, &plan);
  // Batched without strides; an expression naming no dim.
  v1::Problem q = p;
  q.mutable_baseline()->mutable_steps(2)->mutable_matmul()->set_batch("R");
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("steps[2]: a batched matmul needs matmul.stride_a"));
  q = p;
  q.mutable_baseline()->mutable_steps(2)->mutable_matmul()->set_k("C*W");
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("steps[2].matmul.k: 'C*W' uses 'W'"));
  // An unknown name, a write into an input, mixed dtypes.
  q = p;
  q.mutable_baseline()->mutable_steps(2)->mutable_matmul()->set_a("nope");
  EXPECT_THAT(ValidateBaselineSteps(q, &plan).message(),
              HasSubstr("'nope' is neither a tensor of the problem nor a "
                        "workspace"));
  q = p;
  q.mutable_baseline()->mutable_steps(2)->mutable_matmul()->set_d("x");
  EXPECT_THAT(ValidateBaselineSteps(q, &plan).message(),
              HasSubstr("is an input: a baseline never writes its inputs"));
  q = p;
  q.mutable_tensors(2)->set_dtype(v1::DTYPE_FP32);
  EXPECT_THAT(ValidateBaselineSteps(q, &plan).message(),
              HasSubstr("differ in dtype"));
}

TEST_F(ProblemDataTest, LaunchStepsTakeTheFilesLaunchesInOrder) {
  const v1::LaunchPlan plan = FilePlan();
  v1::Problem p = problem_;
  p.mutable_baseline()->mutable_steps(0)->set_launch("row_sum");
  p.mutable_baseline()->mutable_steps(1)->set_launch("gather_rows");
  EXPECT_THAT(ValidateBaselineSteps(p, &plan).message(),
              HasSubstr("launch 'row_sum' is not the file's next `// @kb "
                        "launch` line (that launches 'gather_rows')"));
  p = problem_;
  p.mutable_baseline()->mutable_steps()->RemoveLast();
  EXPECT_THAT(ValidateBaselineSteps(p, &plan).message(),
              HasSubstr("launch 2 ('row_sum', line 4) is run by no step"));
  EXPECT_THAT(ValidateBaselineSteps(problem_, nullptr).message(),
              HasSubstr("there is none left"));
}

// An expert baseline is optional and checked as the baseline is, its
// fields named `expert` in messages.
TEST_F(ProblemDataTest, AnExpertBaselineIsCheckedAsTheBaselineIs) {
  v1::Problem p = problem_;
  v1::Baseline* e = p.mutable_expert();
  e->set_name("one fused kernel");
  e->set_file("expert.cu");
  e->add_steps()->set_launch("fused_gather_sum");
  EXPECT_TRUE(ValidateProblemData(p).ok()) << ValidateProblemData(p);
  v1::LaunchPlan plan;
  plan.add_launches()->set_entry("fused_gather_sum");
  EXPECT_TRUE(ValidateBaselineSteps(p, p.expert(), "expert", &plan).ok());
  // The baseline's file does not stand in for the expert's.
  const v1::LaunchPlan baseline_plan = FilePlan();
  EXPECT_THAT(
      ValidateBaselineSteps(p, p.expert(), "expert", &baseline_plan).message(),
      HasSubstr("expert.steps[0]: launch 'fused_gather_sum' is not the "
                "file's next `// @kb launch` line (that launches "
                "'gather_rows')"));
  EXPECT_THAT(ValidateBaselineSteps(p, p.expert(), "expert", nullptr).message(),
              HasSubstr("expert.steps[0]"));
  v1::Problem q = p;
  q.mutable_expert()->clear_file();
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("expert.steps[0]: a launch step needs the expert "
                        "baseline's file"));
  q = p;
  q.mutable_expert()->clear_steps();
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("expert: an expert baseline needs at least one step"));
  q = p;
  q.mutable_expert()->clear_name();
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("expert.name: one line"));
  // A newline would let the name forge report lines after it.
  q = p;
  q.mutable_expert()->set_name("x\n  speedup: 99.00x faster");
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("expert.name: one line of at most 200 characters, "
                        "without control characters"));
  q = p;
  q.mutable_baseline()->set_name("tab\there");
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("baseline.name: one line"));
  q = p;
  q.mutable_expert()->mutable_steps(0)->mutable_matmul()->set_a("x");
  EXPECT_THAT(ValidateProblemData(q).message(),
              HasSubstr("expert.steps[0]: matmul.b names no tensor"));
}

TEST_F(ProblemDataTest, CheckCasesHoldEveryValueExactly) {
  auto values = [](v1::Problem* p, int which) {
    return p->mutable_check_cases(0)->mutable_inputs(which)->mutable_values();
  };
  EXPECT_THAT(
      With([&](v1::Problem* p) { values(p, 0)->RemoveLast(); }).message(),
      HasSubstr("'x' has 3 values; at these dims it has 4"));
  // 0.1 is not exact in bf16; 1.00390625 (1 + 2^-8) is not either.
  EXPECT_THAT(
      With([&](v1::Problem* p) { values(p, 0)->Set(0, 0.1); }).message(),
      HasSubstr("'x'[0] = 0.1 is not exact in bf16"));
  EXPECT_THAT(With([&](v1::Problem* p) { values(p, 1)->Set(0, 2); }).message(),
              HasSubstr("'perm' holds 2, outside its [int_low, int_high)"));
  EXPECT_THAT(With([&](v1::Problem* p) {
                p->mutable_check_cases(0)->mutable_dims()->erase("C");
              }).message(),
              HasSubstr("check_cases[0] (tiny)"));
  EXPECT_THAT(With([&](v1::Problem* p) {
                p->mutable_check_cases(0)->mutable_outputs(0)->set_tensor("x");
              }).message(),
              HasSubstr("'x' is not an output of the problem"));
  EXPECT_THAT(With([&](v1::Problem* p) {
                p->mutable_check_cases(0)->mutable_outputs(0)->set_values(
                    0, std::numeric_limits<double>::infinity());
              }).message(),
              HasSubstr("is not finite"));
  EXPECT_THAT(With([&](v1::Problem* p) {
                *p->add_check_cases() = p->check_cases(0);
              }).message(),
              HasSubstr("needs a name of its own"));
}

TEST(ExactInTest, EachDtypesGrid) {
  EXPECT_TRUE(ExactIn(v1::DTYPE_FP32, 0.1f));
  EXPECT_FALSE(ExactIn(v1::DTYPE_FP32, 0.1));
  EXPECT_TRUE(ExactIn(v1::DTYPE_BF16, -1.25));
  EXPECT_TRUE(ExactIn(v1::DTYPE_BF16, 1.0078125));       // 1 + 2^-7.
  EXPECT_FALSE(ExactIn(v1::DTYPE_BF16, 1.00390625));     // 1 + 2^-8.
  EXPECT_TRUE(ExactIn(v1::DTYPE_FP16, 1.0009765625));    // 1 + 2^-10.
  EXPECT_FALSE(ExactIn(v1::DTYPE_FP16, 1.00048828125));  // 1 + 2^-11.
  EXPECT_FALSE(ExactIn(v1::DTYPE_FP16, 70000));
  EXPECT_TRUE(ExactIn(v1::DTYPE_FP16, 0));
  EXPECT_TRUE(ExactIn(v1::DTYPE_INT32, -7));
  EXPECT_FALSE(ExactIn(v1::DTYPE_INT32, 0.5));
  EXPECT_FALSE(ExactIn(v1::DTYPE_INT32, 3e9));
  EXPECT_TRUE(ExactIn(v1::DTYPE_FP64, 0.1));
}

}  // namespace
}  // namespace kbench
