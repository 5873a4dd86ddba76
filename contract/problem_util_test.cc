#include "contract/problem_util.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::Problem LoadProblem(const std::string& name) {
  std::ifstream in(std::string(KBENCH_SOURCE_DIR) + "/kernels/problems/" +
                   name + "/problem.textproto");
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream text;
  text << in.rdbuf();
  v1::Problem problem;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(text.str(), &problem));
  return problem;
}

const DimValues kDefault = {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}};

TEST(ProblemUtilTest, ShippedProblemsAreValid) {
  for (const char* name : {"gather_linear_fp32", "gather_linear_bf16"}) {
    v1::Problem problem = LoadProblem(name);
    EXPECT_EQ(problem.name(), name);
    absl::Status status = ValidateProblem(problem);
    EXPECT_TRUE(status.ok()) << name << ": " << status;
  }
}

struct Mutation {
  std::string label;
  std::function<void(v1::Problem*)> mutate;
  std::string want;  // Expected substring of the error.
};

class ValidateProblemMutationTest : public ::testing::TestWithParam<Mutation> {
};

TEST_P(ValidateProblemMutationTest, FailsWithMessage) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  GetParam().mutate(&problem);
  absl::Status status = ValidateProblem(problem);
  ASSERT_FALSE(status.ok()) << GetParam().label;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().want))
      << GetParam().label;
  if (!problem.name().empty()) {
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("problem '" + problem.name() + "'"));
  }
}

v1::ShapeSet* Set(v1::Problem* p, const std::string& name) {
  for (v1::ShapeSet& set : *p->mutable_shape_sets()) {
    if (set.name() == name) return &set;
  }
  ADD_FAILURE() << "no set " << name;
  return p->add_shape_sets();
}

v1::TensorSpec* Tensor(v1::Problem* p, const std::string& name) {
  for (v1::TensorSpec& t : *p->mutable_tensors()) {
    if (t.name() == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return p->add_tensors();
}

const Mutation kMutations[] = {
    {"empty name", [](v1::Problem* p) { p->clear_name(); },
     "problem: name is empty"},
    {"bad name", [](v1::Problem* p) { p->set_name("gather linear"); },
     "name: may contain only"},
    {"bad entry point", [](v1::Problem* p) { p->set_entry_point("1x"); },
     "entry_point: '1x' is not a C identifier"},
    {"no reference",
     [](v1::Problem* p) { p->set_reference(v1::REFERENCE_OP_UNSPECIFIED); },
     "reference: must be REFERENCE_OP_GOLDEN_KERNEL, with golden"},
    {"no dims", [](v1::Problem* p) { p->clear_dims(); },
     "dims: a problem needs at least one dim"},
    {"duplicate dim", [](v1::Problem* p) { p->mutable_dims(1)->set_name("R"); },
     "dims[1] (R): duplicate dim name"},
    {"empty dim name", [](v1::Problem* p) { p->mutable_dims(0)->clear_name(); },
     "dims[0] (): name must be an identifier"},
    {"dim min 0", [](v1::Problem* p) { p->mutable_dims(2)->set_min(0); },
     "dims[2] (H): min 0 must be >= 1"},
    {"dim max < min", [](v1::Problem* p) { p->mutable_dims(0)->set_max(0); },
     "dims[0] (R): max 0 must be >= min 1"},
    {"multiple_of negative",
     [](v1::Problem* p) { p->mutable_dims(0)->set_multiple_of(-2); },
     "multiple_of -2 must be >= 0"},
    {"multiple_of impossible",
     [](v1::Problem* p) {
       p->mutable_dims(0)->set_min(3);
       p->mutable_dims(0)->set_max(5);
       p->mutable_dims(0)->set_multiple_of(8);
     },
     "dims[0] (R): no multiple of 8 lies in [3, 5]"},
    {"no tensors", [](v1::Problem* p) { p->clear_tensors(); },
     "tensors: a problem needs at least one tensor"},
    {"duplicate tensor",
     [](v1::Problem* p) { p->mutable_tensors(1)->set_name("x"); },
     "tensors[1] (x): duplicate tensor name"},
    {"tensor named like a dim",
     [](v1::Problem* p) { p->mutable_tensors(1)->set_name("K"); },
     "tensors[1] (K): the name is also a dim's name"},
    {"tensor without role",
     [](v1::Problem* p) {
       Tensor(p, "w")->set_role(v1::TENSOR_ROLE_UNSPECIFIED);
     },
     "tensors[1] (w): role must be"},
    {"tensor without dtype",
     [](v1::Problem* p) {
       Tensor(p, "bias")->set_dtype(v1::DTYPE_UNSPECIFIED);
     },
     "tensors[2] (bias): dtype must be"},
    {"tensor without shape",
     [](v1::Problem* p) { Tensor(p, "bias")->clear_shape(); },
     "tensors[2] (bias): shape needs at least one extent"},
    {"tensor shape with bad syntax",
     [](v1::Problem* p) { Tensor(p, "w")->set_shape(1, "R*"); },
     "tensors[1] (w).shape[1]: unexpected end of expression"},
    {"tensor shape with unknown dim",
     [](v1::Problem* p) { Tensor(p, "w")->set_shape(1, "R*N"); },
     "tensors[1] (w).shape[1]: 'R*N' uses 'N', which is not a dim; dims "
     "are R, B, H, K"},
    {"no output",
     [](v1::Problem* p) { Tensor(p, "out")->set_role(v1::TENSOR_ROLE_INPUT); },
     "tensors: no tensor has role TENSOR_ROLE_OUTPUT"},
    {"signature misses tensor",
     [](v1::Problem* p) {
       p->mutable_signature()->erase(p->mutable_signature()->begin() + 2);
     },
     "signature: tensor 'bias' is missing"},
    {"signature misses dim",
     [](v1::Problem* p) { p->mutable_signature()->RemoveLast(); },
     "signature: dim 'K' is missing"},
    {"signature repeats", [](v1::Problem* p) { p->add_signature("x"); },
     "signature: 'x' appears more than once"},
    {"signature unknown", [](v1::Problem* p) { p->add_signature("stream"); },
     "signature: 'stream' is neither a tensor nor a dim"},
    {"no shape sets", [](v1::Problem* p) { p->clear_shape_sets(); },
     "shape_sets: a problem needs at least one shape set"},
    {"duplicate set",
     [](v1::Problem* p) { p->mutable_shape_sets(1)->set_name("default"); },
     "shape_sets[1] (default): duplicate shape set name"},
    {"set without name",
     [](v1::Problem* p) { p->mutable_shape_sets(1)->clear_name(); },
     "shape_sets[1] (): name is empty"},
    {"empty set", [](v1::Problem* p) { Set(p, "large")->clear_shapes(); },
     "shape_sets[2] (large): has no shapes"},
    {"duplicate shape",
     [](v1::Problem* p) { Set(p, "odd")->mutable_shapes(1)->set_name("b1"); },
     "shape_sets[1] (odd).shapes[1] (b1): duplicate shape name"},
    {"shape misses a dim",
     [](v1::Problem* p) {
       Set(p, "odd")->mutable_shapes(2)->mutable_dims()->erase("K");
     },
     "shape_sets[1] (odd).shapes[2] (h24): dim 'K' has no value"},
    {"shape with unknown dim",
     [](v1::Problem* p) {
       (*Set(p, "default")->mutable_shapes(0)->mutable_dims())["N"] = 3;
     },
     "shapes[0] (orig): 'N' is not a dim of gather_linear_fp32"},
    {"shape outside domain",
     [](v1::Problem* p) {
       (*Set(p, "large")->mutable_shapes(0)->mutable_dims())["R"] = 65;
     },
     "shape_sets[2] (large).shapes[0] (tp8): R=65 is outside the domain of "
     "gather_linear_fp32: R must be in [1, 64]"},
    {"shape not a multiple",
     [](v1::Problem* p) { p->mutable_dims(2)->set_multiple_of(8); },
     "(odd).shapes[4] (r3b5h17k33): H=17 is outside the domain of "
     "gather_linear_fp32: H must be a multiple of 8"},
    {"missing default set",
     [](v1::Problem* p) { p->set_default_shape_set("nope"); },
     "default_shape_set: 'nope' is not one of the problem's shape sets"},
    {"empty default set", [](v1::Problem* p) { p->clear_default_shape_set(); },
     "default_shape_set: '' is not one of"},
    {"hidden default set",
     [](v1::Problem* p) { Set(p, "default")->set_hidden(true); },
     "default_shape_set: 'default' is hidden"},
    {"missing check set",
     [](v1::Problem* p) { p->add_check_shape_sets("huge"); },
     "check_shape_sets: 'huge' is not one of"},
    {"hidden check set",
     [](v1::Problem* p) { Set(p, "odd")->set_hidden(true); },
     "check_shape_sets: 'odd' is hidden"},
    {"no tolerance", [](v1::Problem* p) { p->clear_tolerance(); },
     "tolerance: is missing"},
    {"zero atol", [](v1::Problem* p) { p->mutable_tolerance()->set_atol(0); },
     "tolerance.atol: 0 must be positive"},
    {"negative rtol",
     [](v1::Problem* p) { p->mutable_tolerance()->set_rtol(-1e-3); },
     "tolerance.rtol: -0.001 must be positive"},
    {"nan max_rel_norm",
     [](v1::Problem* p) {
       p->mutable_tolerance()->set_max_rel_norm(std::nan(""));
     },
     "tolerance.max_rel_norm: nan must be positive"},
    {"negative norm_floor",
     [](v1::Problem* p) { p->mutable_tolerance()->set_norm_floor(-1); },
     "tolerance.norm_floor: -1 must be 0 (no floor) up to 1000"},
    {"huge norm_floor",
     [](v1::Problem* p) { p->mutable_tolerance()->set_norm_floor(1e200); },
     "tolerance.norm_floor: 1e+200 must be 0"},
    {"empty flops", [](v1::Problem* p) { p->clear_flops(); },
     "flops: the expression is empty"},
    {"bad flops", [](v1::Problem* p) { p->set_flops("2*B*K*R*H)"); },
     "flops: unexpected ')' at column 10"},
    {"flops unknown dim", [](v1::Problem* p) { p->set_flops("2*M*N"); },
     "flops: '2*M*N' uses 'M'"},
    {"no budget", [](v1::Problem* p) { p->set_time_budget_ms(0); },
     "time_budget_ms: must be positive"},
    {"negative set budget",
     [](v1::Problem* p) { Set(p, "large")->set_time_budget_ms(-1); },
     "shape_sets[2] (large): time_budget_ms must be >= 0"},
    {"no trials", [](v1::Problem* p) { p->set_trials(0); },
     "trials: must be positive"},
    {"no golden", [](v1::Problem* p) { p->clear_golden(); },
     "golden: REFERENCE_OP_GOLDEN_KERNEL needs golden { file: "},
};

INSTANTIATE_TEST_SUITE_P(Mutations, ValidateProblemMutationTest,
                         ::testing::ValuesIn(kMutations),
                         [](const ::testing::TestParamInfo<Mutation>& info) {
                           std::string name;
                           for (char c : info.param.label) {
                             name += std::isalnum(static_cast<unsigned char>(c))
                                         ? c
                                         : '_';
                           }
                           return name;
                         });

TEST(ProblemUtilTest, EquivalentReferenceShapeIsAccepted) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  Tensor(&problem, "w")->set_shape(1, "H * R");
  EXPECT_TRUE(ValidateProblem(problem).ok());
}

TEST(ProblemUtilTest, DTypes) {
  EXPECT_EQ(DTypeSize(v1::DTYPE_FP32), 4);
  EXPECT_EQ(DTypeSize(v1::DTYPE_BF16), 2);
  EXPECT_EQ(DTypeSize(v1::DTYPE_FP16), 2);
  EXPECT_EQ(DTypeSize(v1::DTYPE_FP64), 8);
  EXPECT_EQ(DTypeSize(v1::DTYPE_UNSPECIFIED), 0);
  EXPECT_EQ(DTypeCName(v1::DTYPE_FP32), "float");
  EXPECT_EQ(DTypeCName(v1::DTYPE_BF16), "__nv_bfloat16");
  EXPECT_EQ(DTypeCName(v1::DTYPE_FP16), "__half");
  EXPECT_EQ(DTypeCName(v1::DTYPE_FP64), "double");
  EXPECT_EQ(DTypeShortName(v1::DTYPE_FP32), "fp32");
  EXPECT_EQ(DTypeShortName(v1::DTYPE_BF16), "bf16");
  EXPECT_EQ(DTypeShortName(v1::DTYPE_FP16), "fp16");
  EXPECT_EQ(DTypeShortName(v1::DTYPE_FP64), "fp64");
}

TEST(ProblemUtilTest, ShapeDims) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  const v1::ShapeSet* odd = FindShapeSet(problem, "odd");
  ASSERT_NE(odd, nullptr);
  absl::StatusOr<DimValues> dims = ShapeDims(problem, odd->shapes(4));
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_EQ(*dims, (DimValues{{"R", 3}, {"B", 5}, {"H", 17}, {"K", 33}}));
  v1::Shape bad = odd->shapes(0);
  (*bad.mutable_dims())["B"] = 0;
  dims = ShapeDims(problem, bad);
  EXPECT_EQ(dims.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dims.status().message()),
              HasSubstr("B=0 is outside the domain of gather_linear_fp32: B "
                        "must be in [1, 65536]"));
}

TEST(ProblemUtilTest, CheckDimsInDomain) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  EXPECT_TRUE(CheckDimsInDomain(problem, kDefault).ok());
  DimValues dims = kDefault;
  dims["K"] = 65537;
  EXPECT_THAT(std::string(CheckDimsInDomain(problem, dims).message()),
              HasSubstr("K=65537 is outside the domain"));
  dims = kDefault;
  dims.erase("H");
  EXPECT_THAT(std::string(CheckDimsInDomain(problem, dims).message()),
              HasSubstr("dim 'H' has no value"));
  dims = kDefault;
  dims["Z"] = 1;
  EXPECT_THAT(std::string(CheckDimsInDomain(problem, dims).message()),
              HasSubstr("'Z' is not a dim of gather_linear_fp32; dims are R, "
                        "B, H, K"));
}

TEST(ProblemUtilTest, TensorSizes) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  const v1::TensorSpec* w = FindTensor(problem, "w");
  ASSERT_NE(w, nullptr);
  absl::StatusOr<std::vector<int64_t>> extents = TensorExtents(*w, kDefault);
  ASSERT_TRUE(extents.ok());
  EXPECT_THAT(*extents, ElementsAre(56, 128));
  EXPECT_EQ(*TensorElements(*w, kDefault), 56 * 128);
  EXPECT_EQ(*TensorElements(*FindTensor(problem, "x"), kDefault), 4 * 12 * 32);
  EXPECT_EQ(FindTensor(problem, "nope"), nullptr);
  EXPECT_FALSE(TensorElements(*w, {{"K", 1}}).ok());  // R, H unknown.
  v1::TensorSpec huge;
  huge.set_name("huge");
  huge.add_shape("4294967296");
  huge.add_shape("4294967296");
  EXPECT_THAT(std::string(TensorElements(huge, {}).status().message()),
              HasSubstr("more elements than fit in 64 bits"));
  v1::TensorSpec negative;
  negative.set_name("neg");
  negative.add_shape("K - 100");
  EXPECT_THAT(std::string(TensorExtents(negative, kDefault).status().message()),
              HasSubstr("extent 'K - 100' of tensor 'neg' is negative (-44)"));
}

TEST(ProblemUtilTest, Lookups) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  EXPECT_TRUE(IsDim(problem, "K"));
  EXPECT_FALSE(IsDim(problem, "x"));
  ASSERT_NE(FindShapeSet(problem, "large"), nullptr);
  EXPECT_EQ(FindShapeSet(problem, "large")->shapes(0).name(), "tp8");
  EXPECT_EQ(FindShapeSet(problem, "nope"), nullptr);
}

TEST(ProblemUtilTest, FlopsAndBytes) {
  v1::Problem fp32 = LoadProblem("gather_linear_fp32");
  EXPECT_DOUBLE_EQ(*ProblemFlops(fp32, kDefault), 2.0 * 12 * 56 * 4 * 32);
  const double elements = 4 * 12 * 32 + 56 * 128 + 56 + 12 * 56;
  EXPECT_DOUBLE_EQ(*ProblemMinBytes(fp32, kDefault), 4 * elements);
  v1::Problem bf16 = LoadProblem("gather_linear_bf16");
  EXPECT_DOUBLE_EQ(*ProblemMinBytes(bf16, kDefault), 2 * elements);
  EXPECT_FALSE(ProblemFlops(fp32, {{"B", 1}}).ok());
}

TEST(ProblemUtilTest, EntryPrototype) {
  EXPECT_EQ(EntryPrototype(LoadProblem("gather_linear_fp32"), "gather_linear"),
            "extern \"C\" __global__ void gather_linear(const float* x, const "
            "float* w, const float* bias, float* out, int R, int B, int H, "
            "int K)");
  EXPECT_EQ(EntryPrototype(LoadProblem("gather_linear_bf16"), "my_kernel"),
            "extern \"C\" __global__ void my_kernel(const __nv_bfloat16* x, "
            "const __nv_bfloat16* w, const __nv_bfloat16* bias, "
            "__nv_bfloat16* out, int R, int B, int H, int K)");
}

TEST(ProblemUtilTest, FormatDims) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  EXPECT_EQ(FormatDims(problem, kDefault), "R=4 B=12 H=32 K=56");
  EXPECT_EQ(FormatDims(problem, {{"K", 1000}, {"B", 1}}), "B=1 K=1000");
  EXPECT_EQ(FormatDims(problem, {{"K", 1}, {"Z", 2}}), "K=1 Z=2");
}

TEST(ProblemUtilTest, ToleranceText) {
  v1::Tolerance tol = LoadProblem("gather_linear_fp32").tolerance();
  EXPECT_EQ(ToleranceText(tol),
            "|out - ref| <= 0.001 + 0.001 * |ref| per element, rel-norm <= "
            "1e-05");
  tol.set_norm_floor(0.25);
  EXPECT_EQ(ToleranceText(tol),
            "|out - ref| <= 0.001 + 0.001 * |ref| per element, rel-norm <= "
            "1e-05 (||ref|| floored at 0.25 * sqrt(n))");
}

TEST(ProblemUtilTest, PublicViewDropsHiddenSets) {
  v1::Problem problem = LoadProblem("gather_linear_fp32");
  v1::ShapeSet* secret = problem.add_shape_sets();
  secret->set_name("secret");
  secret->set_hidden(true);
  *secret->add_shapes() = problem.shape_sets(0).shapes(0);
  problem.add_check_shape_sets("secret");
  v1::Problem view = PublicView(problem);
  std::vector<std::string> names;
  for (const v1::ShapeSet& set : view.shape_sets()) names.push_back(set.name());
  EXPECT_THAT(names, ElementsAre("default", "odd", "large", "medium"));
  EXPECT_THAT(view.check_shape_sets(), ElementsAre("default", "odd"));
  EXPECT_EQ(view.name(), problem.name());
  EXPECT_EQ(view.tensors_size(), 4);
}

}  // namespace
}  // namespace kbench
