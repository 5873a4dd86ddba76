// Hidden cases drawn from size classes: inside each class and the domain,
// a pure function of the key, spread over the whole class, and refused when
// a problem file declares a class that cannot be drawn.
#include "contract/holdout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "contract/contract_text.h"
#include "contract/expr.h"
#include "contract/plan_fixtures.h"
#include "contract/problem_util.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

const v1::HoldoutClass& ClassNamed(const v1::Problem& p,
                                   const std::string& name) {
  for (const v1::HoldoutClass& c : p.holdout_classes()) {
    if (c.name() == name) return c;
  }
  ADD_FAILURE() << "no class " << name;
  return p.holdout_classes(0);
}

// Every drawn case lies in its class's ranges and bounds and in the domain.
void ExpectInClass(const v1::Problem& p, const v1::HoldoutClass& c,
                   const v1::Shape& shape) {
  absl::StatusOr<DimValues> dims = ShapeDims(p, shape);
  ASSERT_TRUE(dims.ok()) << dims.status();
  for (const v1::DimRange& r : c.dims()) {
    EXPECT_GE(dims->at(r.name()), r.min()) << c.name() << " " << r.name();
    EXPECT_LE(dims->at(r.name()), r.max()) << c.name() << " " << r.name();
  }
  for (const v1::HoldoutBound& b : c.bounds()) {
    const int64_t v = *EvalExpr(b.expr(), *dims);
    if (b.min() > 0) {
      EXPECT_GE(v, b.min()) << c.name() << " " << b.expr();
    }
    if (b.max() > 0) {
      EXPECT_LE(v, b.max()) << c.name() << " " << b.expr();
    }
  }
}

TEST(HoldoutTest, ShippedProblemsDrawEveryClassInsideItsBounds) {
  for (const char* name : {"gather_linear_fp32", "gather_linear_bf16"}) {
    const v1::Problem p = testing::LoadProblem(name);
    ASSERT_TRUE(ValidateProblem(p).ok()) << ValidateProblem(p);
    ASSERT_GE(p.holdout_classes_size(), 3) << name;
    for (int k = 0; k < 200; ++k) {
      absl::StatusOr<std::vector<v1::ShapeSet>> sets =
          DrawHoldoutSets(p, absl::StrCat("key-", k));
      ASSERT_TRUE(sets.ok()) << sets.status();
      ASSERT_EQ(sets->size(), p.holdout_classes().size());
      for (int i = 0; i < p.holdout_classes_size(); ++i) {
        const v1::HoldoutClass& c = p.holdout_classes(i);
        const v1::ShapeSet& set = (*sets)[i];
        EXPECT_EQ(set.name(), absl::StrCat("hidden:", c.name()));
        EXPECT_TRUE(set.hidden());
        EXPECT_EQ(set.trials(), c.trials() > 0 ? c.trials() : 1);
        ASSERT_EQ(set.shapes_size(), c.count());
        for (const v1::Shape& s : set.shapes()) ExpectInClass(p, c, s);
      }
    }
  }
}

TEST(HoldoutTest, TheDrawIsAPureFunctionOfTheKey) {
  const v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  const auto a = DrawHoldoutSets(p, "same key");
  const auto b = DrawHoldoutSets(p, "same key");
  const auto c = DrawHoldoutSets(p, "other key");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  std::string da, db, dc;
  for (const auto& s : *a) da += ProtoDigest(s);
  for (const auto& s : *b) db += ProtoDigest(s);
  for (const auto& s : *c) dc += ProtoDigest(s);
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

// Over many keys the draws reach both ends of each range, and far more
// distinct values than a fixed list would: a kernel cannot be tuned to
// them.
TEST(HoldoutTest, DrawsSpreadOverTheWholeClass) {
  const v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  std::map<std::string, std::set<int64_t>> b_values;
  std::map<std::string, int64_t> b_min, b_max;
  for (int k = 0; k < 500; ++k) {
    auto sets = DrawHoldoutSets(p, absl::StrCat("spread-", k));
    ASSERT_TRUE(sets.ok());
    for (const v1::ShapeSet& set : *sets) {
      for (const v1::Shape& s : set.shapes()) {
        const int64_t b = s.dims().at("B");
        b_values[set.name()].insert(b);
        if (!b_min.count(set.name()) || b < b_min[set.name()]) {
          b_min[set.name()] = b;
        }
        b_max[set.name()] = std::max(b_max[set.name()], b);
      }
    }
  }
  EXPECT_LE(b_min["hidden:small"], 2);
  EXPECT_GE(b_max["hidden:small"], 100);
  EXPECT_LE(b_min["hidden:mid"], 300);
  EXPECT_GE(b_max["hidden:mid"], 3000);
  EXPECT_GT(b_values["hidden:small"].size(), 60u);
  EXPECT_GT(b_values["hidden:mid"].size(), 300u);
  EXPECT_GT(b_values["hidden:large"].size(), 200u);
}

TEST(HoldoutTest, AlignmentIsKept) {
  v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  v1::HoldoutClass* c = p.mutable_holdout_classes(1);
  for (v1::DimRange& r : *c->mutable_dims()) {
    if (r.name() == "K") r.set_multiple_of(16);
  }
  // A dim's own alignment applies in every class; try it on H, which no
  // public shape's H (32, 24, 17) nor the check case's (2) blocks once the
  // odd set goes.
  p.mutable_shape_sets()->DeleteSubrange(1, 1);
  p.clear_check_shape_sets();
  p.add_check_shape_sets("default");
  p.mutable_dims(2)->set_multiple_of(2);  // H
  ASSERT_TRUE(ValidateProblem(p).ok()) << ValidateProblem(p);
  for (int k = 0; k < 100; ++k) {
    auto sets = DrawHoldoutSets(p, absl::StrCat("aligned-", k));
    ASSERT_TRUE(sets.ok()) << sets.status();
    for (const v1::ShapeSet& set : *sets) {
      for (const v1::Shape& s : set.shapes()) {
        EXPECT_EQ(s.dims().at("H") % 2, 0) << set.name();
        if (set.name() == "hidden:mid") {
          EXPECT_EQ(s.dims().at("K") % 16, 0);
        }
      }
    }
  }
}

TEST(HoldoutTest, RandomSetIsVisibleAndNamedByClass) {
  const v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  absl::StatusOr<v1::ShapeSet> set = DrawRandomSet(p, "fresh");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->name(), kRandomShapeSet);
  EXPECT_FALSE(set->hidden());
  EXPECT_EQ(set->trials(), 0);  // The job's.
  int count = 0;
  for (const v1::HoldoutClass& c : p.holdout_classes()) count += c.count();
  ASSERT_EQ(set->shapes_size(), count);
  EXPECT_EQ(set->shapes(0).name(), "small_1");
  EXPECT_THAT(set->description(), HasSubstr("small x4"));
  v1::Problem none = p;
  none.clear_holdout_classes();
  EXPECT_EQ(DrawRandomSet(none, "k").status().code(),
            absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<std::vector<v1::ShapeSet>> empty = DrawHoldoutSets(none, "k");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(HoldoutTest, ClassTextGivesRangesAndBounds) {
  const v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  const std::string text = HoldoutClassText(ClassNamed(p, "mid"));
  EXPECT_THAT(text, HasSubstr("mid-size case (R in 1..8, B in 257..4096"));
  EXPECT_THAT(text, HasSubstr("R*H >= 129"));
  EXPECT_THAT(text, HasSubstr("B*K*R*H <= 536870912"));
  auto sets = DrawHoldoutSets(p, "k");
  ASSERT_TRUE(sets.ok());
  EXPECT_EQ(HiddenCaseWords((*sets)[1]), "a hidden " + text);
  v1::ShapeSet fixed;
  fixed.set_name("operator_set");
  fixed.set_description("secret sizes 4097 and 8191");
  fixed.set_hidden(true);
  EXPECT_EQ(HiddenCaseWords(fixed), "a hidden case");
}

TEST(HoldoutTest, TheContractStatesTheClassesAndTheRandomSet) {
  const v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  const std::string text = KernelContractText(p);
  EXPECT_THAT(text, HasSubstr("submit_kernel checks sizes across the whole "
                              "domain, by class"));
  EXPECT_THAT(text, HasSubstr("shape_set \"random\""));
  EXPECT_THAT(text, HasSubstr("mid x2: mid-size case (R in 1..8"));
  EXPECT_THAT(text, HasSubstr("large x1: large case"));
}

struct BadClass {
  std::string name;
  std::function<void(v1::Problem*)> mutate;
  std::string message;
};

class HoldoutValidationTest : public ::testing::TestWithParam<BadClass> {};

TEST_P(HoldoutValidationTest, RefusesWithMessage) {
  v1::Problem p = testing::LoadProblem("gather_linear_fp32");
  GetParam().mutate(&p);
  const absl::Status s = ValidateProblem(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr(GetParam().message));
  EXPECT_THAT(s.message(), HasSubstr("gather_linear_fp32"));
}

v1::HoldoutClass* Mid(v1::Problem* p) { return p->mutable_holdout_classes(1); }

INSTANTIATE_TEST_SUITE_P(
    Classes, HoldoutValidationTest,
    ::testing::Values(
        BadClass{"BadName", [](v1::Problem* p) { Mid(p)->set_name("a b"); },
                 "identifier"},
        BadClass{"Duplicate", [](v1::Problem* p) { Mid(p)->set_name("small"); },
                 "duplicate class"},
        BadClass{"NoDescription",
                 [](v1::Problem* p) { Mid(p)->clear_description(); },
                 "description"},
        BadClass{"ZeroCount", [](v1::Problem* p) { Mid(p)->set_count(0); },
                 "count 0"},
        BadClass{"HugeCount", [](v1::Problem* p) { Mid(p)->set_count(17); },
                 "count 17"},
        BadClass{"UnknownDim",
                 [](v1::Problem* p) { Mid(p)->mutable_dims(0)->set_name("Q"); },
                 "not a dim"},
        BadClass{"TwoRanges",
                 [](v1::Problem* p) { Mid(p)->mutable_dims(1)->set_name("R"); },
                 "two ranges"},
        BadClass{"OutsideDomain",
                 [](v1::Problem* p) {
                   Mid(p)->mutable_dims(1)->set_max(70000);  // B <= 65536
                 },
                 "inside its domain"},
        BadClass{"NoAlignedValue",
                 [](v1::Problem* p) {
                   v1::DimRange* r = Mid(p)->mutable_dims(0);  // R 1..8
                   r->set_min(3);
                   r->set_max(3);
                   r->set_multiple_of(2);
                 },
                 "no aligned value"},
        BadClass{
            "BoundNotADim",
            [](v1::Problem* p) { Mid(p)->mutable_bounds(0)->set_expr("R*Z"); },
            "not a dim"},
        BadClass{
            "BoundUnparsable",
            [](v1::Problem* p) { Mid(p)->mutable_bounds(0)->set_expr("R*("); },
            "bound 'R*('"},
        BadClass{"BoundEmpty",
                 [](v1::Problem* p) { Mid(p)->mutable_bounds(0)->set_min(0); },
                 "not both 0"},
        BadClass{"Undrawable",
                 [](v1::Problem* p) {
                   // R*H <= 1024 and R*H >= 129 fine; B*K*R*H >= 2^40
                   // is beyond B, K <= 4096 with R*H <= 8192.
                   v1::HoldoutBound* b = Mid(p)->add_bounds();
                   b->set_expr("B*K*R*H");
                   b->set_min(int64_t{1} << 40);
                 },
                 "only 0 of 300 draws met its bounds"},
        // Drawable, but only by luck: about 2% of draws have B <= 270
        // (B in 257..4096, log-uniform), so a case's 200 draws would miss
        // now and then.
        BadClass{"RarelyDrawable",
                 [](v1::Problem* p) {
                   v1::HoldoutBound* b = Mid(p)->add_bounds();
                   b->set_expr("B");
                   b->set_max(270);
                 },
                 "of 300 draws met its bounds (at least 30 must"},
        BadClass{"TooManyClasses",
                 [](v1::Problem* p) {
                   for (int i = 0; i < 8; ++i) {
                     v1::HoldoutClass c = p->holdout_classes(0);
                     c.set_name(absl::StrCat("extra", i));
                     *p->add_holdout_classes() = c;
                   }
                 },
                 "at most 8"},
        BadClass{"ReservedSetName",
                 [](v1::Problem* p) {
                   p->mutable_shape_sets(1)->set_name("random");
                 },
                 "kept for the sets kbd draws"}),
    [](const ::testing::TestParamInfo<BadClass>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace kbench
