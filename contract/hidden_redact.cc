#include "contract/hidden_redact.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "contract/holdout.h"

namespace kbench {

std::string HiddenTrialFailure(const v1::TrialResult& t,
                               absl::string_view words) {
  if (t.nan_count() > 0) {
    return absl::StrFormat(
        "failed on %s: %d of %d outputs are NaN or unwritten", words,
        t.nan_count(), t.elements());
  }
  if (t.elements() == 0) return absl::StrCat("failed on ", words);
  return absl::StrFormat(
      "failed on %s: %d of %d outputs outside tolerance, max abs error %.3g, "
      "max rel error %.3g, rel-norm error %.3g",
      words, t.mismatches(), t.elements(), t.max_abs_error(), t.max_rel_error(),
      t.rel_norm_error());
}

absl::Status HiddenPlanError(const absl::Status& status,
                             absl::string_view words) {
  return absl::Status(
      status.code(),
      absl::StrCat("the launch plan is invalid on ", words,
                   " (its exact shape is not shown): make grid, block and "
                   "shared memory valid for every shape in the problem's "
                   "domain"));
}

namespace {

bool NamesHidden(const std::string& text,
                 const std::vector<std::string>& hidden_names) {
  for (const std::string& n : hidden_names) {
    if (!n.empty() && absl::StrContains(text, n)) return true;
  }
  return false;
}

// "a hidden case", or "a hidden case of class 'mid'" for a drawn class.
std::string RedactedWords(const v1::TrialResult& t) {
  if (!absl::StartsWith(t.shape_set(), kHoldoutSetPrefix)) {
    return "a hidden case";
  }
  return absl::StrCat("a hidden case of class '",
                      t.shape_set().substr(strlen(kHoldoutSetPrefix)), "'");
}

}  // namespace

void RedactHiddenCases(const std::vector<std::string>& hidden_names,
                       v1::JobResult* result) {
  const v1::TrialResult* first_hidden_failure = nullptr;
  v1::CorrectnessReport empty;
  v1::CorrectnessReport* c =
      result->has_correctness() ? result->mutable_correctness() : &empty;
  for (v1::TrialResult& t : *c->mutable_trials()) {
    // A trial of a hidden set is hidden even if the runner did not say so.
    if (!t.hidden() && std::find(hidden_names.begin(), hidden_names.end(),
                                 t.shape_set()) == hidden_names.end()) {
      continue;
    }
    t.set_hidden(true);
    // A drawn class's name is public (get_problem lists the classes).
    if (!absl::StartsWith(t.shape_set(), kHoldoutSetPrefix)) {
      t.set_shape_set(kHiddenSetName);
    }
    t.clear_shape();
    t.clear_dims();
    t.clear_seed();
    t.clear_first_mismatch();
    t.clear_kernel_ms();  // A run's time tells its size, roughly.
    if (!t.passed() && first_hidden_failure == nullptr) {
      first_hidden_failure = &t;
    }
  }
  auto redact = [&](std::string* text) {
    if (text->empty() || absl::StartsWith(*text, "failed on a hidden ")) {
      return;
    }
    if (NamesHidden(*text, hidden_names)) {
      *text = first_hidden_failure
                  ? HiddenTrialFailure(*first_hidden_failure,
                                       RedactedWords(*first_hidden_failure))
                  : "failed on a hidden case";
    }
  };
  redact(c->mutable_message());
  redact(result->mutable_message());
  if (result->has_error()) redact(result->mutable_error()->mutable_message());
}

std::vector<std::string> HiddenNames(const v1::Problem& problem) {
  std::vector<std::string> names;
  for (const v1::ShapeSet& s : problem.shape_sets()) {
    if (!s.hidden()) continue;
    names.push_back(s.name());
    for (const v1::Shape& shape : s.shapes()) names.push_back(shape.name());
  }
  for (const v1::HoldoutClass& c : problem.holdout_classes()) {
    const std::string set = absl::StrCat(kHoldoutSetPrefix, c.name());
    for (int n = c.count(); n >= 1; --n) {
      names.push_back(absl::StrCat(set, "#", n));
    }
    names.push_back(set);
  }
  return names;
}

}  // namespace kbench
