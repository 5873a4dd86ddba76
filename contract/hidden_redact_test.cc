// Hidden cases lose their shape, seed and index before a result leaves kbd.
#include "contract/hidden_redact.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kbench/v1/report.pb.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HiddenRedactTest, HiddenTrialsLoseShapeSeedAndIndex) {
  v1::JobResult r;
  v1::CorrectnessReport* c = r.mutable_correctness();
  v1::TrialResult* visible = c->add_trials();
  visible->set_shape_set("odd");
  visible->set_shape("b7");
  visible->set_seed(7);
  visible->set_passed(true);
  v1::TrialResult* h = c->add_trials();
  h->set_hidden(true);
  h->set_shape_set("secret");
  h->set_shape("s13");
  (*h->mutable_dims())["B"] = 13;
  h->set_seed(1234);
  h->set_first_mismatch("b=3 k=4");
  h->set_kernel_ms(0.75);
  h->set_mismatches(5);
  h->set_elements(100);
  h->set_max_abs_error(0.25);
  c->set_message("secret/s13 (seed 1234): 5 of 100 outputs outside tolerance");
  r.set_message(c->message());
  v1::TrialResult* unmarked = c->add_trials();  // A hidden set, unflagged.
  unmarked->set_shape_set("secret");
  unmarked->set_shape("s14");
  unmarked->set_seed(99);
  unmarked->set_passed(true);
  RedactHiddenCases({"secret", "s13"}, &r);
  EXPECT_TRUE(r.correctness().trials(2).hidden());
  EXPECT_EQ(r.correctness().trials(2).shape(), "");
  EXPECT_EQ(r.correctness().trials(2).seed(), 0u);
  const v1::TrialResult& t = r.correctness().trials(1);
  EXPECT_EQ(t.shape_set(), "hidden");
  EXPECT_EQ(t.shape(), "");
  EXPECT_TRUE(t.dims().empty());
  EXPECT_EQ(t.seed(), 0u);
  EXPECT_EQ(t.first_mismatch(), "");
  EXPECT_EQ(t.kernel_ms(), 0);
  EXPECT_EQ(t.mismatches(), 5);
  EXPECT_DOUBLE_EQ(t.max_abs_error(), 0.25);
  EXPECT_EQ(r.correctness().trials(0).shape(), "b7");
  EXPECT_EQ(r.correctness().trials(0).seed(), 7u);
  EXPECT_THAT(r.message(), HasSubstr("failed on a hidden case: 5 of 100"));
  EXPECT_THAT(r.message(), Not(HasSubstr("secret")));
  EXPECT_THAT(r.message(), Not(HasSubstr("1234")));
  EXPECT_EQ(r.correctness().message(), r.message());
}

TEST(HiddenRedactTest, VisibleMessagesAreKept) {
  v1::JobResult r;
  r.set_message("odd/b7 (seed 3): 1 of 7 outputs outside tolerance");
  RedactHiddenCases({"secret"}, &r);
  EXPECT_EQ(r.message(), "odd/b7 (seed 3): 1 of 7 outputs outside tolerance");
  EXPECT_FALSE(r.has_correctness());
}

}  // namespace
}  // namespace kbench
