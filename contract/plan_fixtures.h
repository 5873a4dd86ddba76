// Test fixtures of the launch-plan tests (launch_plan_test,
// launch_plan_resolve_test, parsed_plan_test): the shipped examples and
// problems, read through testing::ReadSourceFile (so KBENCH_SOURCE_DIR
// points a relocated run at its copy of the tree), and plans that must
// parse.
#ifndef KBENCH_CONTRACT_PLAN_FIXTURES_H_
#define KBENCH_CONTRACT_PLAN_FIXTURES_H_

#include <string>

#include "absl/status/statusor.h"
#include "contract/launch_plan.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kbench/v1/problem.pb.h"
#include "testing/process.h"

namespace kbench::testing {

// A file of the source tree; a test failure when it is missing or empty.
inline std::string ReadSource(const std::string& relative) {
  std::string text = ReadSourceFile(relative);
  EXPECT_FALSE(text.empty()) << relative << " is missing or empty";
  return text;
}

// kernels/problems/NAME/problem.textproto (its files' text not read).
inline v1::Problem LoadProblem(const std::string& name) {
  v1::Problem problem;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      ReadSource("kernels/problems/" + name + "/problem.textproto"), &problem))
      << name;
  return problem;
}

// The plan of `source`; a test failure (and an empty plan) when it does
// not parse.
inline v1::LaunchPlan MustParse(const std::string& source) {
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : v1::LaunchPlan();
}

// The default shape of gather_linear_fp32.
inline const DimValues& DefaultDims() {
  static const auto* dims =
      new DimValues{{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}};
  return *dims;
}

}  // namespace kbench::testing

#endif  // KBENCH_CONTRACT_PLAN_FIXTURES_H_
