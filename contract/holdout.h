// Hidden cases drawn from the whole domain. A problem declares, as data,
// size classes of its domain (HoldoutClass in problem.proto: ranges of the
// dims, bounds on work and memory, a count). For each submission kbd draws
// every class's cases from a key that only it can derive (see
// server/core/holdout_keys.h), so no repository file, API or log holds a
// hidden shape that counts; a failure names the class, never the case.
// run_correctness's `random` shape set draws from the same classes with a
// fresh key and shows what it drew, so that an agent can find its own
// generality bugs first.
//
// Values are drawn log-uniformly over each range (B in 257..4096 is as
// likely to be near 300 as near 3000), aligned to the dim's multiple_of,
// and redrawn until the class's bounds hold. The draw is a pure function of
// (problem, key): the same key gives the same cases (a job recovered after a
// restart re-runs what it was given).
//
// Thread safety: pure functions of their arguments; safe to call
// concurrently.
#ifndef KBENCH_CONTRACT_HOLDOUT_H_
#define KBENCH_CONTRACT_HOLDOUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {

// The shape set run_correctness draws afresh on every call.
inline constexpr char kRandomShapeSet[] = "random";
// Names of the hidden sets a submission draws: "hidden:<class>".
inline constexpr char kHoldoutSetPrefix[] = "hidden:";
// Most cases one class may draw per submission, and most classes.
inline constexpr int kMaxHoldoutCount = 16;
inline constexpr int kMaxHoldoutClasses = 8;
// Attempts at one case before the class is declared undrawable (the
// shipped classes accept 11% to 100% of their draws), and most bounds.
inline constexpr int kMaxHoldoutAttempts = 200;
inline constexpr int kMaxHoldoutBounds = 8;

// Checks the problem's holdout classes: identifier names, unique; a
// description; count 1..kMaxHoldoutCount, trials 0..20; every range names
// a dim once, lies inside its domain and holds an aligned value; every
// bound parses over the dims; at most kMaxHoldoutClasses classes and
// kMaxHoldoutBounds bounds each; and each class can be drawn (four fixed
// keys must each yield its cases). Errors are InvalidArgument naming the
// problem, the class and the field.
absl::Status ValidateHoldoutClasses(const v1::Problem& problem);

// The class as people and agents read it, e.g. "mid-size case (B in
// 257..4096, K in 257..4096; B*K*R*H <= 536870912)".
std::string HoldoutClassText(const v1::HoldoutClass& holdout_class);

// How messages name a case of `set` without identifying it: "a hidden
// mid-size case (B in 257..4096, ...)" for a set drawn by DrawHoldoutSets,
// "a hidden case" for any other hidden set.
std::string HiddenCaseWords(const v1::ShapeSet& set);

// One hidden set per class ("hidden:<class>", hidden, its trials and budget),
// holding the class's `count` cases drawn from `key`. Empty when the problem
// has no classes. FailedPrecondition when a class cannot be drawn (a problem
// that passed ValidateHoldoutClasses can).
absl::StatusOr<std::vector<v1::ShapeSet>> DrawHoldoutSets(
    const v1::Problem& problem, absl::string_view key);

// The visible set `random`: every class's cases drawn from `key`, named
// "<class>_<n>", with the job's trials. FailedPrecondition when the problem
// declares no classes.
absl::StatusOr<v1::ShapeSet> DrawRandomSet(const v1::Problem& problem,
                                           absl::string_view key);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_HOLDOUT_H_
